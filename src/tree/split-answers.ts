// A streamed answer sent back in pieces. Gemini's chat (`ai.chats`) keeps a streamed answer as it
// arrived, one `model` content per chunk, and sends those back in the next request's history; the
// recording holds the answer assembled, one message. In the tree's view such a run of assistant
// messages is the recorded answer when, joined as the stream assembler joins chunks, it is
// exactly that answer's message at that place: then the follow-up walks through it instead of
// starting a branch beside it. Only where a request sits in the tree changes; its request key is
// still the one of the body as sent.

import { chainHashes, hashValue, sha256Hex } from '../core/index.ts';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What the tree tells about its recorded answers, for joinSplitAnswers. */
export interface RecordedAnswers {
  /** Whether any node of the tree has a message of this digest (a cheap first test). */
  hasMessage(digest: string): boolean;
  /**
   * The message of a one-message answer of digest `digest` recorded for the conversation whose
   * last message has path hash `pathHash`; undefined when there is none. (`null` stands for a
   * message the tree did not keep: the joined message is used in its place.)
   */
  answerAt(pathHash: string, digest: string): unknown;
}

/** Whether a normalized message is an assistant message of content parts and nothing else. */
function assistantParts(m: unknown): Obj[] | undefined {
  if (!isObj(m) || m.role !== 'assistant' || !Array.isArray(m.content)) return undefined;
  for (const k of Object.keys(m)) if (k !== 'role' && k !== 'content') return undefined;
  return m.content.every(isObj) ? (m.content as Obj[]) : undefined;
}

/** The member a part's text is in when the part is that text alone (`text` or `thinking` parts), else undefined. */
function textMember(p: Obj): 'text' | 'thinking' | undefined {
  const keys = Object.keys(p);
  if (keys.length !== 2) return undefined;
  if (p.type === 'text' && typeof p.text === 'string') return 'text';
  if (p.type === 'thinking' && typeof p.thinking === 'string') return 'thinking';
  return undefined;
}

/**
 * The messages a run of assistant messages may stand for, joined: their parts in order with
 * neighbouring text (and thinking) parts joined, as the stream assembler joins a stream's chunks;
 * and the parts in order without joining (a part the assembler keeps apart, such as text with a
 * signature, whose signature the normalized form leaves out). Undefined when a message of the run
 * has more than content parts (tool calls listed apart, ids): such a run is never joined.
 */
function joinedCandidates(run: readonly unknown[]): Obj[] | undefined {
  const parts: Obj[] = [];
  for (const m of run) {
    const own = assistantParts(m);
    if (own === undefined) return undefined;
    parts.push(...own);
  }
  const joined: Obj[] = [];
  for (const p of parts) {
    const last = joined[joined.length - 1];
    const member = textMember(p);
    if (last !== undefined && member !== undefined && textMember(last) === member) {
      joined[joined.length - 1] = { type: p.type, [member]: `${last[member] as string}${p[member] as string}` };
    } else {
      joined.push(p);
    }
  }
  const out = [{ role: 'assistant', content: joined }];
  if (joined.length !== parts.length) out.push({ role: 'assistant', content: parts });
  return out;
}

const isAssistant = (m: unknown): boolean => isObj(m) && m.role === 'assistant';

/**
 * A request's normalized messages with each run of two or more consecutive assistant messages
 * that together are a recorded one-message answer at that place (same conversation before it,
 * same message once joined) replaced by that answer's message; undefined when no run is. Runs
 * that join into no recorded answer stay as they are: different answers are never merged.
 *
 * @example
 * // tree holds [user 'hi'] -> assistant 'Hello there' (recorded from a stream)
 * joinSplitAnswers([user('hi'), assistant('Hello '), assistant('there'), user('and?')], answers)
 * // [user('hi'), assistant('Hello there'), user('and?')]
 */
export function joinSplitAnswers(messages: readonly unknown[], answers: RecordedAnswers): unknown[] | undefined {
  // First, without hashing the conversation: runs whose joined message is a message of the tree.
  const runs = new Map<number, { end: number; candidates: { message: Obj; digest: string }[] }>();
  for (let i = 1; i < messages.length; i++) {
    if (!isAssistant(messages[i]) || !isAssistant(messages[i + 1])) continue;
    let end = i + 1;
    while (isAssistant(messages[end + 1])) end++;
    const candidates = (joinedCandidates(messages.slice(i, end + 1)) ?? []).map((message) => ({ message, digest: hashValue(message) })).filter((c) => answers.hasMessage(c.digest));
    if (candidates.length > 0) runs.set(i, { end, candidates });
    i = end;
  }
  if (runs.size === 0) return undefined;
  // Then walk the conversation's path hashes and join each run that is an answer where it sits.
  const { messageHashes, pathHashes } = chainHashes(messages as unknown[]);
  const out: unknown[] = [];
  let path: string | null = null;
  let changed = false;
  for (let i = 0; i < messages.length; ) {
    const run = path === null ? undefined : runs.get(i);
    let joined: { message: unknown; digest: string } | undefined;
    for (const c of run?.candidates ?? []) {
      const recorded = answers.answerAt(path!, c.digest);
      if (recorded !== undefined) {
        joined = { message: recorded ?? c.message, digest: c.digest };
        break;
      }
    }
    if (joined !== undefined) {
      out.push(joined.message);
      path = sha256Hex(`${path}:${joined.digest}`);
      changed = true;
      i = run!.end + 1;
      continue;
    }
    out.push(messages[i]);
    // Until a run is joined, the conversation's own path hashes are the path.
    path = !changed ? pathHashes[i]! : sha256Hex(`${path}:${messageHashes[i]}`);
    i++;
  }
  return changed ? out : undefined;
}
