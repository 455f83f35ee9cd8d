// An embeddings call and a body read as another shape, compared in one layout (miss diagnosis,
// docs/matching.md "Misses"): kept apart from diagnose.ts so a page (src/browser) can leave it
// out (embeddings-compare.browser.ts).
import { chainHashes } from '../core/index.ts';
import type { RequestKeys } from './matcher.ts';

/**
 * Whether a view has the embeddings layout `{ model?, input, options }`: inputs, no messages.
 *
 * @example
 * isInputsView(requestKeys({ model: 'text-embedding-3-small', input: 'x' }).view) // true
 */
export const isInputsView = (v: Record<string, unknown>): boolean => Array.isArray(v.input) && v.messages === undefined;

/**
 * A view in the conversation layout as the embeddings view of the same body, when it can be
 * one. `{ model: 'e', input: 'x' }` has no embeddings evidence (docs/hash-spec.md, "Detection":
 * no `encoding_format` or `dimensions`, a single string, a model without `embed`), so it is
 * read as a Responses call, one user message of one text part; sent with `encoding_format` it
 * is an embeddings call. Compared as they are, the two views differ everywhere (messages
 * against inputs, tools against none), and a miss named differences that do not exist. Only
 * views that are what an `input` becomes convert: user messages of at most one text part each,
 * no tools, no context keys (an embeddings body keeps `context` as an option).
 */
function asEmbeddings(k: RequestKeys): RequestKeys | undefined {
  const v = k.view;
  if (!Array.isArray(v.messages) || (Array.isArray(v.tools) && v.tools.length > 0) || k.signature.contextKeys.length > 0) return undefined;
  const input: string[] = [];
  for (const m of v.messages as unknown[]) {
    const msg = m !== null && typeof m === 'object' ? (m as Record<string, unknown>) : {};
    const content = msg.content;
    if (Object.keys(msg).some((n) => n !== 'role' && n !== 'content') || msg.role !== 'user' || !Array.isArray(content) || content.length > 1) return undefined;
    const part = content[0] as Record<string, unknown> | undefined;
    if (part === undefined) input.push(''); // `input: ''` is a message with no parts
    else if (Object.keys(part).length === 2 && part.type === 'text' && typeof part.text === 'string') input.push(part.text);
    else return undefined;
  }
  const view: Record<string, unknown> = { input, options: v.options };
  if (v.model !== undefined) view.model = v.model;
  const { messageHashes, pathHashes } = chainHashes(input);
  return { ...k, provider: 'openai-embeddings', view, messages: input, messageHashes, pathHashes, signature: { ...k.signature, toolNames: [] } };
}

/**
 * The request and the recording in one layout: when one was read as an embeddings call and the
 * other's view is what the same `input` gives in the Responses layout, that one as its
 * embeddings view (asEmbeddings); else both as they are. `converted` says whether one changed.
 *
 * @example
 * const [req, rec, converted] = comparable(requestKeys(sent), requestKeys(recorded))
 */
export function comparable(req: RequestKeys, rec: RequestKeys): [RequestKeys, RequestKeys, boolean] {
  const a = isInputsView(req.view);
  if (a === isInputsView(rec.view)) return [req, rec, false];
  const other = a ? asEmbeddings(rec) : asEmbeddings(req);
  if (other === undefined) return [req, rec, false];
  return a ? [req, other, true] : [other, rec, true];
}
