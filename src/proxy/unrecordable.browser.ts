/**
 * unrecordable.ts for browser builds: a page never records (update mode is refused with E_MODE
 * before a request is made), so no miss there is one that could not be recorded, and the
 * rewording stays out of a bundle with a 100 KB budget (bench/size.mjs).
 */
import type { TapedeckError } from '../errors.ts';
import type { Deck } from './deck.ts';

/** The upstream's error as it is (see unrecordable.ts). */
export function unrecordedMiss(_d: Deck, _miss: TapedeckError | undefined, e: unknown): unknown {
  return e;
}

/** Never a refusal to reword in a page (see unrecordable.ts). */
export async function unrecordedByKey(_d: Deck, _miss: TapedeckError | undefined, _up: Response, _req: unknown): Promise<TapedeckError | undefined> {
  return undefined;
}
