// What browser bundles get instead of walk.ts (package.json "browser" maps one to the other).
// The walk writes a value's text into the engine's memory with Node's Buffer, which a page does
// not have: there the engine never walks (WasmEngine.writesValues is false) and takes
// JSON.stringify's text, so the walk's code is left out of the bundle (~0.7 KB gzipped).
import type * as Walk from './walk.ts';

export type Room = Walk.Room;

/** As walk.ts's: the value takes the JSON.stringify path. */
export const DECLINED: typeof Walk.DECLINED = Symbol('declined') as typeof Walk.DECLINED;

/** As walk.ts's ValueText (a page's engine only ever asks for its text). */
export class ValueText {
  constructor(readonly value: unknown) {}

  /** JSON.stringify's text of the value. */
  text(): string {
    return JSON.stringify(this.value) ?? '';
  }
}

/**
 * Never walks here: every value takes the JSON.stringify path.
 *
 * @example
 * writeValueText({ a: 1 }, room, 0) // throws DECLINED
 */
export const writeValueText: typeof Walk.writeValueText = () => {
  throw DECLINED;
};
