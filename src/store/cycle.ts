/**
 * A reference cycle in a value given to be stored (`ReplayCache.put`'s answer): found before
 * redaction copies the value, which on a cycle copied without end until the process ran out of
 * memory (and, with secrets kept, overflowed the stack in the key sort).
 */
import { TapedeckError } from '../errors.ts';

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
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof Date || v instanceof RegExp) return { items: [], names: undefined };
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
  if (value === null || typeof value !== 'object') return;
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
    onPath.add(child);
    stack.push({ value: child, ...membersOf(child), next: 0, segment });
  }
}
