// The digests of a normalized request, apart from the raw-bytes path (raw-keys.ts) that also
// uses them: browser bundles swap that path out (package.json "browser"), and keep this.
import { hashValue, pathHashes } from '../core/index.ts';
import type { RequestView } from '../providers/types.ts';
import type { RequestDigests } from './matcher.ts';
import { answerShape } from './answer-shape.ts';

/**
 * The digests of a normalized request: one core call over its view (the value, or its JSON
 * text) for the key and the message and path hashes (of `messages`, or an embeddings view's
 * `input`), the signature and the answer's shape.
 *
 * @example
 * viewDigests(normalizeRequest(body)).key === requestKeys(body).key // true
 */
export function viewDigests(n: RequestView, view: RequestView['view'] | string = n.view): RequestDigests {
  const paths = pathHashes(view, { member: Array.isArray(n.view.messages) ? 'messages' : 'input' });
  const signature = { toolNames: n.toolNames, messageCount: n.messages.length, contextKeys: n.contextKeys };
  return {
    provider: n.provider,
    key: paths.digest,
    signature,
    signatureDigest: hashValue(signature),
    shape: answerShape(n.view.options),
    messageHashes: paths.messageHashes,
    pathHashes: paths.pathHashes,
  };
}
