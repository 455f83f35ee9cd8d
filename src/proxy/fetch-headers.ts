// What createFetch's replay and record paths share of a Response's making. Internal.

/** Statuses whose response has no body (fetch refuses one). */
export const NULL_BODY: ReadonlySet<number> = new Set([101, 103, 204, 205, 304]);

/**
 * Stored headers (a name, or a list for repeated ones) as a Headers object.
 *
 * @example
 * toHeaders({ 'set-cookie': ['a=1', 'b=2'], 'content-type': 'application/json' }).get('content-type') // 'application/json'
 */
export function toHeaders(h: Record<string, string | string[] | number | undefined>): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) out.append(k, x);
    else out.set(k, String(v));
  }
  return out;
}
