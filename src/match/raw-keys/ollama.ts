// Ollama /api/chat bodies (src/providers/ollama.ts is the reference: it rewrites the body as the
// chat body it stands for): the chat walk in an Ollama mode. Calls without ids get positional
// ids, a tool message answers the first open call its `tool_name` names, `thinking` text is a
// thinking part before the text; images and anything else unusual go to the parse path.

import { ollamaSyntheticId } from '../../providers/ollama.ts';
import type { RequestDigests } from '../matcher.ts';
import { type ChatWalk, digests, messageSkip } from './chat.ts';
import { COMMA, L } from './out.ts';
import type { FoundTools } from './tools-cache.ts';
import { decline, type Members, NO_MEMBERS, PART, T_ARRAY, T_NULL, T_STRING } from './walk.ts';

let skipOllama: Set<string> | undefined;

/** The Ollama rules the chat walk asks for while it walks one body (ChatWalk.ollama). */
export class OllamaMode {
  /** Calls given a positional id so far. */
  private calls = 0;
  /** The last assistant turn's unanswered calls (id, name). */
  open: { id: unknown; name: unknown }[] = [];

  /** The message members dropped: the chat ones, and what becomes parts or links here. */
  skip(): Set<string> {
    skipOllama ??= new Set([...messageSkip(), 'images', 'thinking', 'tool_name']);
    return skipOllama;
  }

  /** A call of `tool_calls` (the `{` and type written), rewritten as { id, type: 'function', function }. */
  toolCall(w: ChatWalk, m: Members, have: string[]): void {
    const idRec = m.get('id');
    const id = idRec === undefined || w.kind(idRec) === T_NULL ? ollamaSyntheticId(this.calls++) : w.kind(idRec) === T_STRING ? w.str(idRec) : w.value(idRec);
    const f = m.get('function');
    const fm = w.isObj(f) ? w.members(f) : NO_MEMBERS;
    const name = fm.get('name');
    this.open.push({ id, name: name === undefined ? undefined : w.value(name) });
    w.putId(have, 'id', L.idKey, w.n.ids.of(id));
    w.keep(have, 'name', L.nameKey, name);
    w.setArguments(have, fm.get('arguments'));
  }

  /** A message's `thinking` text as its first part (recorded in `ranges`); returns the parts written. */
  thinking(w: ChatWalk, m: Members, ranges: number[]): number {
    const thinking = m.get('thinking');
    if (thinking === undefined || w.kind(thinking) !== T_STRING || w.end(thinking) - w.start(thinking) <= 2) return 0;
    const out = w.out;
    const s = out.at;
    out.bytes(L.open);
    out.bytes(L.type);
    out.bytes(L.thinking);
    out.byte(COMMA);
    out.bytes(L.thinkingKey);
    w.raw(thinking);
    out.bytes(L.close);
    ranges.push(s, out.at, PART);
    return 1;
  }

  /**
   * The Ollama rules for a message that the chat walk does not know: the open call a tool
   * message answers (undefined: none, or not a tool message without tool_call_id); a message
   * whose images or kept tool_name (or a thinking value that is not text) would make parts or
   * members of their own declines to the reference.
   */
  message(w: ChatWalk, m: Members): { id: unknown } | undefined {
    const images = m.get('images');
    if (images !== undefined && w.kind(images) === T_ARRAY && !w.empty(images)) decline();
    // Thinking text becomes the first part (message() writes it); another value would stay a member.
    const thinking = m.get('thinking');
    if (thinking !== undefined && w.kind(thinking) !== T_NULL && w.kind(thinking) !== T_STRING) decline();
    const role = w.strOf(m.get('role'));
    const name = m.get('tool_name');
    const tc = m.get('tool_call_id');
    if (role !== 'tool') {
      if (name !== undefined) decline(); // kept as a member
      return undefined;
    }
    if (tc !== undefined && w.kind(tc) !== T_NULL) return undefined; // linked by its own id; tool_name dropped
    const open = this.open;
    const wanted = name === undefined || w.kind(name) === T_NULL ? undefined : w.kind(name) === T_STRING ? w.str(name) : decline();
    const i = open.findIndex((c) => wanted === undefined || c.name === wanted);
    if (i < 0) {
      if (name !== undefined) decline(); // kept as a member
      return undefined; // a tool message answering nothing: the chat rules
    }
    return { id: open.splice(i, 1)[0]!.id };
  }
}

/**
 * Digests of an Ollama /api/chat body: the chat walk in its Ollama mode. `known`: a root tool
 * list kept from an earlier request, which the index was asked to skip.
 */
export function ollamaDigests(w: ChatWalk, ignoreArgs: readonly string[], known?: FoundTools): RequestDigests {
  w.ollama = new OllamaMode();
  return { ...digests(w, { provider: 'openai-chat' }, ignoreArgs, known), provider: 'ollama-chat' };
}
