/**
 * Where two JSON values differ, for misses that name what changed: session engines (MCP,
 * realtime) compare a client message with the closest recorded one.
 */
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Where two JSON values first differ, depth first in member order, as a path and the two
 * values (`undefined` for a side where the member is absent); undefined when equal.
 *
 * @example
 * firstDifference({ a: { b: 1 } }, { a: { b: 2 } }) // { path: 'a.b', got: 1, recorded: 2 }
 */
export function firstDifference(got: unknown, recorded: unknown, path = ''): { path: string; got: unknown; recorded: unknown } | undefined {
  if (Object.is(got, recorded)) return undefined;
  if (Array.isArray(got) && Array.isArray(recorded)) {
    for (let i = 0; i < Math.max(got.length, recorded.length); i++) {
      const d = firstDifference(got[i], recorded[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (isObject(got) && isObject(recorded)) {
    const names = [...new Set([...Object.keys(got), ...Object.keys(recorded)])].sort();
    for (const k of names) {
      const d = firstDifference(got[k], recorded[k], path ? `${path}.${k}` : k);
      if (d) return d;
    }
    return undefined;
  }
  return { path: path || '(value)', got, recorded };
}

/**
 * How many leaf values differ: the distance used to pick the closest recording.
 *
 * @example
 * differenceCount({ a: 1, b: [1, 2] }, { a: 2, b: [1, 3] }) // 2
 */
export function differenceCount(a: unknown, b: unknown): number {
  if (Object.is(a, b)) return 0;
  if (Array.isArray(a) && Array.isArray(b)) {
    let n = 0;
    for (let i = 0; i < Math.max(a.length, b.length); i++) n += differenceCount(a[i], b[i]);
    return n;
  }
  if (isObject(a) && isObject(b)) {
    let n = 0;
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) n += differenceCount(a[k], b[k]);
    return n;
  }
  return 1;
}

/**
 * The value at a path firstDifference() gave (`a.b[2].c`), or undefined when the path is not
 * there (or a member name holds a `.` or `[`, which the path cannot tell apart).
 *
 * @example
 * valueAt({ item: { content: [{ id: 'x' }] } }, 'item.content[0].id') // 'x'
 */
export function valueAt(v: unknown, path: string): unknown {
  let at: unknown = v;
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (m[2] !== undefined) at = Array.isArray(at) ? at[Number(m[2])] : undefined;
    else at = isObject(at) ? at[m[1]!] : undefined;
    if (at === undefined) return undefined;
  }
  return at;
}

/**
 * The path of the first string in a redacted value that holds a mask (`[REDACTED`), depth
 * first in member order; undefined when none does. Where two messages equal once masked differ,
 * this is where to look.
 *
 * @example
 * maskedPath({ item: { content: [{ text: 'my key is [REDACTED]' }] } }) // 'item.content[0].text'
 */
export function maskedPath(v: unknown, path = ''): string | undefined {
  if (typeof v === 'string') return v.includes('[REDACTED') || v.includes('%5BREDACTED') ? path || '(value)' : undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = maskedPath(v[i], `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  if (isObject(v)) {
    for (const k of Object.keys(v).sort()) {
      const p = maskedPath(v[k], path ? `${path}.${k}` : k);
      if (p) return p;
    }
  }
  return undefined;
}
