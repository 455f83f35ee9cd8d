// The digests from the view the core wrote itself (assembly/view.ts): the chat family's common
// shapes with no JavaScript walk; the top level through the reference, attachment holes filled
// by it one part at a time.

import type { CoreView } from '../../core/engine.ts';
import { allFinite } from '../../core/value.ts';
import { Normalizer } from '../../providers/normalize.ts';
import type { BuiltinProvider } from '../../providers/types.ts';
import type { RequestDigests } from '../matcher.ts';
import { CONVERSATION, topLevel } from './chat.ts';
import { decoder, L, Out } from './out.ts';
import { finish, modelAndOptions } from './view.ts';
import { isResult, NO_SKIP, unescapedText } from './walk.ts';

export const PROVIDER_CODE: Record<BuiltinProvider, number> = { 'openai-chat': 1, 'openai-responses': 2, 'openai-embeddings': 3, anthropic: 4, generic: 5 };
const PROVIDER_OF: readonly (BuiltinProvider | undefined)[] = [undefined, 'openai-chat', 'openai-responses', 'openai-embeddings', 'anthropic', 'generic'];

/**
 * The digests from the view the core wrote itself (assembly/view.ts): the common request
 * shapes with no JavaScript walk at all; null where an attachment hole leaves the body to the
 * walk here after all.
 */
export function coreDigests(bytes: Uint8Array, cv: CoreView, ignoreArgs: readonly string[]): RequestDigests | null {
  const out = new Out();
  // Copied first: the core's memory is reused by the next call into it.
  const tools = cv.tools.slice();
  const head = cv.head;
  const holes = cv.holes;
  if (holes.length === 0) {
    out.bytes(head);
  } else {
    // Attachment parts, whose rules decode and hash data: the reference, one part at a time.
    const texts: string[] = [];
    const n = new Normalizer();
    for (let k = 0; k < holes.length; k += 2) {
      const parts = n.content(JSON.parse(decoder.decode(bytes.subarray(holes[k]!, holes[k + 1]!))), '$');
      if (parts.length !== 1 || isResult(parts[0]) || !allFinite(parts[0], NO_SKIP)) return null;
      texts.push(JSON.stringify(parts[0]));
    }
    // Call ids inside an attachment (a document's own content blocks) are numbered in document
    // order with the core's: a fresh numbering here would give them the wrong positions.
    if (n.ids.size > 0) return null;
    let at = 0;
    for (const text of texts) {
      const z = head.indexOf(0, at);
      out.span(head, at, z);
      out.text(text);
      at = z + 1;
    }
    out.span(head, at, head.length);
  }
  const provider = PROVIDER_OF[cv.provider]!;
  // The top level without the conversation, as one JSON text for one JSON.parse: the members'
  // own bytes, `"name": value`. The index has compared their names (no duplicates) and the core
  // declines escaped names, so a name is its bytes.
  const r = cv.roots;
  const layout = CONVERSATION[provider];
  let text = '{';
  for (let i = 0; i < r.length; i += 5) {
    if (layout.includes(unescapedText(bytes, r[i]!, r[i + 1]!, r[i + 2]! | 0))) continue;
    if (text.length > 1) text += ',';
    text += decoder.decode(bytes.subarray(r[i]!, r[i + 4]!));
  }
  const small = topLevel(provider, JSON.parse(`${text}}`) as Record<string, unknown>, ignoreArgs);
  modelAndOptions(out, small);
  out.bytes(tools);
  out.bytes(L.close);
  const toolNames: (string | undefined)[] = [];
  const tn = cv.toolNames;
  for (let k = 0; k < tn.length; k += 3) toolNames.push(tn[k + 1] === 0 ? undefined : unescapedText(bytes, tn[k]!, tn[k + 1]!, tn[k + 2]! | 0));
  return finish(out, provider, cv.messageCount, toolNames, small);
}
