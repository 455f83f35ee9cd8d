// A structural diff of two JSON values: the members added and removed, the leaves whose values
// changed and the places where the type changed. Arrays are compared element by element (an
// answer's choices, content blocks and tool calls are ordered).

/** One difference between two JSON values. */
export interface JsonChange {
  /** Where, e.g. `choices[0].message.content` ('' for the root). */
  path: string;
  /** `added` / `removed`: a member or element on one side only; `type`: the JSON type changed; `value`: a leaf's value. */
  kind: 'added' | 'removed' | 'type' | 'value';
  old?: unknown;
  new?: unknown;
}

/** The JSON type name of a value: object, array, string, number, boolean, null. */
export function jsonType(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

const member = (path: string, k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? (path ? `${path}.${k}` : k) : `${path}[${JSON.stringify(k)}]`);

/**
 * Every difference between two JSON values, in document order.
 *
 * @example
 * jsonDiff({ city: 'Paris', days: 3 }, { city: 'Lyon', unit: 'C' })
 * // [{ path: 'city', kind: 'value', old: 'Paris', new: 'Lyon' }, { path: 'days', kind: 'removed', old: 3 },
 * //  { path: 'unit', kind: 'added', new: 'C' }]
 */
export function jsonDiff(a: unknown, b: unknown, path = '', out: JsonChange[] = []): JsonChange[] {
  if (a === b) return out;
  const ta = jsonType(a);
  const tb = jsonType(b);
  if (ta !== tb) {
    out.push({ path, kind: 'type', old: a, new: b });
    return out;
  }
  if (ta === 'array') {
    const x = a as unknown[];
    const y = b as unknown[];
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      const p = `${path}[${i}]`;
      if (i >= x.length) out.push({ path: p, kind: 'added', new: y[i] });
      else if (i >= y.length) out.push({ path: p, kind: 'removed', old: x[i] });
      else jsonDiff(x[i], y[i], p, out);
    }
    return out;
  }
  if (ta === 'object') {
    const x = a as Record<string, unknown>;
    const y = b as Record<string, unknown>;
    for (const k of Object.keys(x)) {
      if (!Object.hasOwn(y, k)) out.push({ path: member(path, k), kind: 'removed', old: x[k] });
      else jsonDiff(x[k], y[k], member(path, k), out);
    }
    for (const k of Object.keys(y)) if (!Object.hasOwn(x, k)) out.push({ path: member(path, k), kind: 'added', new: y[k] });
    return out;
  }
  // Leaves of the same type; NaN cannot occur in JSON, so !== is a value change.
  out.push({ path, kind: 'value', old: a, new: b });
  return out;
}

/** The last member name of a path (`choices[0].message.content` -> `content`), or ''. */
export function leafName(path: string): string {
  const m = /(?:^|\.)([A-Za-z_$][\w$]*)$|\["((?:[^"\\]|\\.)*)"\]$/.exec(path);
  if (!m) return '';
  return m[1] ?? (JSON.parse(`"${m[2]}"`) as string);
}
