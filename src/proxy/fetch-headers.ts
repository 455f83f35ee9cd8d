// What createFetch's replay and record paths share of a Response's making, and the headers a
// call to the upstream forwards (the proxy's, createFetch's, the page's). Internal.
import { HOP_BY_HOP, type DeckRequest } from './deck.ts';

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

// Request headers fetch sets itself or that describe only the hop to the proxy. Dropping
// accept-encoding lets undici negotiate and decode compression, so stored bodies are plain.
const DROP_REQUEST = new Set([...HOP_BY_HOP, 'accept-encoding']);

/**
 * A request's headers as forwarded to the upstream: without the hop to tapedeck's own.
 *
 * @example
 * forwardHeaders({ connection: 'keep-alive', 'x-api-key': 'k' }) // [['x-api-key', 'k']]
 */
export function forwardHeaders(h: DeckRequest['headers']): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || DROP_REQUEST.has(k)) continue;
    if (Array.isArray(v)) for (const x of v) out.push([k, x]);
    else out.push([k, v]);
  }
  return out;
}
