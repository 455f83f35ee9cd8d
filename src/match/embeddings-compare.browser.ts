// The page's stand-in for ./embeddings-compare.ts: a page's miss between an embeddings call and
// a body read as another shape names the shape each was read as (and a model difference), not
// the member-by-member comparison Node makes after reading both as embeddings calls. Kept out of
// the page bundle for its size; the miss is still true, only less precise.
import type { RequestKeys } from './matcher.ts';

/** Whether a view has the embeddings layout (the same test as Node's). */
export const isInputsView = (v: Record<string, unknown>): boolean => Array.isArray(v.input) && v.messages === undefined;

/** In a page both are compared as they are. */
export function comparable(req: RequestKeys, rec: RequestKeys): [RequestKeys, RequestKeys, boolean] {
  return [req, rec, false];
}
