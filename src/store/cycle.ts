/**
 * What in a value given to be stored (`ReplayCache.put`'s answer) has no stored form, found
 * before redaction copies it: a reference cycle (copied without end until the process ran out of
 * memory, and with secrets kept, overflowed the stack in the key sort); and a Promise, a WeakMap,
 * a WeakSet or a function given as the value (stored as `{}` or nothing, which every later
 * replay served without a word: `cache.put(request, res.json())`, its inner await forgotten).
 */
import { TapedeckError } from '../errors.ts';
import { isArrayBuffer } from '../bytes.ts';

/** One container on the walk: what it holds, and how far the walk is through it. */
interface Frame {
  value: object;
  /** Its members: an array's items, an object's values, a Map's keys and values, a Set's items. */
  items: readonly unknown[];
  /** Names of an object's members (undefined for the others: positions name them). */
  names: readonly string[] | undefined;
  next: number;
  segment: string;
}

/** A container's members, and an object's member names, without a copy for an array. */
function membersOf(v: object): { items: readonly unknown[]; names: readonly string[] | undefined } {
  if (Array.isArray(v)) return { items: v, names: undefined };
  if (v instanceof Map) return { items: [...v].flat(), names: undefined };
  if (v instanceof Set) return { items: [...v], names: undefined };
  if (ArrayBuffer.isView(v) || isArrayBuffer(v) || v instanceof Date || v instanceof RegExp) return { items: [], names: undefined };
  const names = Object.keys(v);
  return { items: names.map((k) => (v as Record<string, unknown>)[k]), names };
}

/** How a member's place is written in a path. */
function segmentOf(f: Frame, i: number): string {
  if (f.names !== undefined) {
    const k = f.names[i]!;
    return /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
  }
  if (f.value instanceof Map) return `.entries[${i >> 1}][${i & 1}]`;
  if (f.value instanceof Set) return `.values[${i}]`;
  return `[${i}]`;
}

/**
 * Throws E_CYCLE naming where `value` refers back to one of its own ancestors (`value.a.self`);
 * returns for a value without one. Iterative: no depth of nesting overflows the stack.
 *
 * @example
 * const o = { a: 1 } as Record<string, unknown>; o.self = o;
 * assertNoCycle(o, 'value') // throws E_CYCLE: "value.self refers back to value: ..."
 */
export function assertNoCycle(value: unknown, root: string): void {
  walk(value, root, false);
}

/**
 * assertNoCycle, and E_TYPE naming where `value` holds what has no stored form: a Promise or
 * another thenable (a forgotten `await`), a WeakMap or WeakSet, or is a function; E_DEPTH when it
 * nests deeper than MAX_STORED_NESTING. A function member is left: it is dropped, as JSON drops it.
 *
 * @example
 * assertStorable(Promise.resolve(1), 'value') // throws E_TYPE: "value is a Promise: ..."
 */
export function assertStorable(value: unknown, root: string): void {
  if (typeof value === 'function') throw unstorable(root, 'a function', 'Store what the function returns, or the data it holds.');
  walk(value, root, true);
}

/**
 * How deep a stored value may nest: deeper, the recursive walks after this one (redaction's
 * copy, msgpackr's encoder) overflow the stack, which surfaced as a bare RangeError.
 */
export const MAX_STORED_NESTING = 1000;

/** E_TYPE for a value at `at` that has no stored form. */
function unstorable(at: string, what: string, hint: string): TapedeckError {
  return new TapedeckError('E_TYPE', `${at} is ${what}, which has no stored form: it would be recorded as ${what === 'a function' ? 'nothing' : '{}'} and replayed so.`, { path: at, hint });
}

/** What of `v` has no stored form, as unstorable() tells it; undefined for what has one. */
function unstorableKind(v: object): [string, string] | undefined {
  if (typeof (v as { then?: unknown }).then === 'function') return ['a Promise (or another thenable)', 'Await it first: cache.put(request, await answer), not the promise (a forgotten await).'];
  if (v instanceof WeakMap || v instanceof WeakSet) return [`a ${v instanceof WeakMap ? 'WeakMap' : 'WeakSet'}`, 'Store a Map or Set, or an object, with the entries it should hold: a weak collection cannot be read.'];
  return undefined;
}

/** The walk of assertNoCycle, and with `storable` of assertStorable. */
function walk(value: unknown, root: string, storable: boolean): void {
  if (value === null || typeof value !== 'object') return;
  const bad = storable ? unstorableKind(value) : undefined;
  if (bad) throw unstorable(root, bad[0], bad[1]);
  const onPath = new Set<object>([value]);
  const stack: Frame[] = [{ value, ...membersOf(value), next: 0, segment: root }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next >= top.items.length) {
      onPath.delete(top.value);
      stack.pop();
      continue;
    }
    const i = top.next++;
    const child = top.items[i];
    if (child === null || typeof child !== 'object') continue;
    const segment = segmentOf(top, i);
    if (onPath.has(child)) {
      const path = stack.map((f) => f.segment);
      const at = `${path.join('')}${segment}`;
      const ancestor = path.slice(0, stack.findIndex((f) => f.value === child) + 1).join('');
      throw new TapedeckError('E_CYCLE', `${at} refers back to ${ancestor}: a value with a reference cycle cannot be stored.`, {
        path: at,
        hint: 'Store a copy without the back-reference (JSON cannot express cycles either).',
      });
    }
    if (storable) {
      if (stack.length >= MAX_STORED_NESTING) {
        const at = `${stack.slice(0, 8).map((f) => f.segment).join('')}…`;
        throw new TapedeckError('E_DEPTH', `${root} nests deeper than the ${MAX_STORED_NESTING} levels a tape stores (at ${at}).`, { path: at, hint: 'Store such a value flattened, or as its JSON text (a string).' });
      }
      const kind = unstorableKind(child);
      if (kind) throw unstorable(`${stack.map((f) => f.segment).join('')}${segment}`, kind[0], kind[1]);
    }
    onPath.add(child);
    stack.push({ value: child, ...membersOf(child), next: 0, segment });
  }
}
