/**
 * The one field order of tape records. A tape must come out of `export` -> `import` byte for
 * byte as it went in, and the export sorts object keys (so it diffs well). So records are
 * written in an order the importer can restore: the top-level fields in the fixed order below
 * (scalar fields first, so an index reads them without decoding the record; see peekFrame),
 * every nested plain object with its keys sorted by UTF-16 code units, as the export sorts them.
 * A side effect users see: a replayed value's objects have sorted keys, and a re-recorded
 * response whose provider shuffled its keys still writes identical bytes.
 */

/** Top-level fields of a record, in the order they are written; others follow, sorted. */
export const RECORD_FIELDS: readonly string[] = Object.freeze([
  'v',
  'kind',
  'key',
  'keyVersion',
  'recordedAt',
  'durationMs',
  'run',
  'repeat',
  // The test that made it, on tapes tests share (docs/vitest.md, "Tapes shared by tests").
  'test',
  // HTTP records: what the proxy files a recording under, read from the head (peekFrame)
  // without decoding the request and response. Tapes written before this put them last;
  // `origin` is newer still (records written before it have none).
  'match',
  'route',
  'origin',
  // The upstream's path prefix, beside the origin (where the request went), read by the index
  // with it among the leading scalars.
  'upstreamPath',
  'trace',
  'ignored',
  'signature',
  'hashes',
  'request',
  'value',
  'response',
  'raw',
  'meta',
]);

const RANK = new Map(RECORD_FIELDS.map((f, i) => [f, i]));

const isPlain = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

/**
 * Deep copy with every plain object's keys sorted; arrays, Maps, Sets, dates, bytes and class
 * instances keep their own order and identity (a Map's order is data, not presentation).
 *
 * @example
 * Object.keys(sortedKeys({ b: 1, a: 2 })) // ['a', 'b']
 */
export function sortedKeys<T>(value: T, depth = 0): T {
  if (depth > 10_000) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = value[i] as unknown;
      const s = sortedKeys(v, depth + 1);
      if (s !== v && !out) out = value.slice(0, i);
      if (out) out.push(s);
    }
    return (out ?? value) as T;
  }
  if (!isPlain(value)) return value;
  const keys = Object.keys(value);
  const out: Record<string, unknown> = {};
  for (const k of keys.sort()) {
    const v = value[k];
    if (k === '__proto__') Object.defineProperty(out, k, { value: sortedKeys(v, depth + 1), enumerable: true, writable: true, configurable: true });
    else out[k] = sortedKeys(v, depth + 1);
  }
  return out as T;
}

/**
 * {@link sortedKeys} without the copies it does not need: the value itself when every plain
 * object in it has its keys in order already, else a copy of just the objects that are out of
 * order and of those above them. Writes the same bytes as sortedKeys (key order and values are
 * the same); for writers that encode what they get right away and keep no reference to it
 * (a bulk import, where copying every record's every object was a large part of the time).
 *
 * @example
 * const body = { a: 1, b: { c: 2 } }
 * sortedShared(body) === body // true: already in order
 * Object.keys(sortedShared({ b: 1, a: 2 })) // ['a', 'b']
 */
export function sortedShared<T>(value: T, depth = 0): T {
  if (depth > 10_000 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = value[i] as unknown;
      const s = v !== null && typeof v === 'object' ? sortedShared(v, depth + 1) : v;
      if (s !== v && !out) out = value.slice(0, i);
      if (out) out.push(s);
    }
    return (out ?? value) as T;
  }
  if (!isPlain(value)) return value;
  const keys = Object.keys(value);
  let inOrder = true;
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      inOrder = false;
      break;
    }
  }
  if (inOrder) {
    // Shared unless a member changes: then copied from that member on, in the same order.
    let out: Record<string, unknown> | undefined;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const v = value[k];
      const s = v !== null && typeof v === 'object' ? sortedShared(v, depth + 1) : v;
      if (s !== v && !out) {
        out = {};
        for (let j = 0; j < i; j++) put(out, keys[j]!, value[keys[j]!]);
      }
      if (out) put(out, k, s);
    }
    return (out ?? value) as T;
  }
  const out: Record<string, unknown> = {};
  for (const k of keys.sort()) {
    const v = value[k];
    put(out, k, v !== null && typeof v === 'object' ? sortedShared(v, depth + 1) : v);
  }
  return out as T;
}

/** Sets a member, `__proto__` included as an own member (as JSON.parse makes it). */
function put(out: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  else out[k] = v;
}

/**
 * A record (a plain object with a numeric `v`, the mark of every tapedeck writer) with its
 * top-level fields in RECORD_FIELDS order, then any others sorted; anything else is returned
 * as it is. Writers store `inRecordOrder(sortedKeys(record))`, which import reproduces.
 *
 * @example
 * Object.keys(inRecordOrder({ value: 1, key: 'k', v: 1 })) // ['v', 'key', 'value']
 */
export function inRecordOrder<T>(record: T): T {
  if (!isPlain(record) || typeof record.v !== 'number') return record;
  const keys = Object.keys(record).sort((a, b) => (RANK.get(a) ?? RECORD_FIELDS.length) - (RANK.get(b) ?? RECORD_FIELDS.length) || (a < b ? -1 : a > b ? 1 : 0));
  const out: Record<string, unknown> = {};
  for (const k of keys) {
    if (k === '__proto__') Object.defineProperty(out, k, { value: record[k], enumerable: true, writable: true, configurable: true });
    else out[k] = record[k];
  }
  return out as T;
}
