// The volatile-name rule of miss diagnosis (docs/matching.md, "Misses"): which differing members a
// miss may offer to ignore (`volatileKeys`, `ignoreArgs`). A member qualifies only when its name
// says it changes on every call (an id, a timestamp, a nonce) AND it is not content: a name that
// merely looks volatile inside a tool call's arguments (`date` of a booking), an attachment
// (`fileId` of the uploaded file) or the id linking a tool result to its call (swapped results)
// decides the answer, and ignoring it served the recording made for another request.

// Member names that carry what a message says; a difference there is a real change, not a
// volatile field worth ignoring.
export const CONTENT_FIELDS: ReadonlySet<string> = new Set(['content', 'text', 'role', 'name', 'arguments', 'input', 'output', 'type', 'url', 'sha256', 'data']);

// Names that say "this changes on every call": ids, timestamps, nonces. Only a difference in a
// member so named may be offered an ignore option; any other member may decide the answer.
const VOLATILE_NAME = /(^|[_-])(id|ids|uuid|guid|nonce|ts|timestamp|time|date|at)$|[a-z](Id|Ids|Uuid|Nonce|At|Time|Timestamp|Date)$|^(uuid|guid|nonce|timestamp|ts|trace)$/;
// Arguments with such names that do decide the answer: the conversation state of the Responses
// API, the tool the model is forced to call.
const DECIDING_ARGS = new Set(['previous_response_id', 'conversation', 'tool_choice', 'prompt', 'prompt_id']);

// Members whose whole value is content, at any depth below them: the content fields, a tool
// call's unparsed arguments, an attachment (the view's `{ type: 'file', file: { fileId } }`,
// `image`, `audio`), a tool's JSON schema, thinking text.
const CONTENT_MEMBERS: ReadonlySet<string> = new Set([...CONTENT_FIELDS, 'argumentsText', 'file', 'image', 'audio', 'document', 'source', 'parameters', 'thinking']);
// Parts whose every member is content, their ids included: a tool call and its result are linked
// by id (renumbered `call_<k>`, or a dangling id kept as given), so a changed id is a result
// answering another call; an item reference's id is the item.
const LINK_PARTS: ReadonlySet<string> = new Set(['tool_call', 'tool_result', 'function_call', 'item_reference']);
// A call id as renumbered before keying: which call it is, not a random id.
const RENUMBERED_ID = /^call_\d+$/;

/**
 * Whether a member name looks volatile (an id, timestamp or nonce), not content. `arg`: a
 * top-level argument, where some such names decide the answer.
 *
 * @example
 * isVolatileName('sent_at')                    // true
 * isVolatileName('text')                       // false
 * isVolatileName('previous_response_id', true) // false
 */
export function isVolatileName(name: string, arg = false): boolean {
  if (CONTENT_FIELDS.has(name)) return false;
  if (arg && DECIDING_ARGS.has(name)) return false;
  return VOLATILE_NAME.test(name);
}

/**
 * A normalized view's messages, system prompt and tools without members named `name`, except
 * where they are content (inside a content member, a tool call or result, an attachment, or a
 * renumbered call id). Two views equal after this differ only in that volatile member, so
 * `volatileKeys: [name]` (which removes it everywhere) makes them match without hiding a
 * difference in content.
 *
 * @example
 * const v = (sent: string, date: string) => ({ messages: [{ role: 'user', content: [], sent_at: sent, meta: { date } }] })
 * canonical(withoutVolatileMember(v('09:30', 'x'), 'sent_at')) === canonical(withoutVolatileMember(v('10:00', 'x'), 'sent_at')) // true
 */
export function withoutVolatileMember(view: { messages?: unknown; system?: unknown; tools?: unknown }, name: string): unknown {
  const messages = Array.isArray(view.messages) ? view.messages.map((m) => message(m, name)) : view.messages;
  return { messages, system: value(view.system, name), tools: value(view.tools, name) };
}

/** A message: its `content` list holds parts, judged one by one; its other members as values. */
function message(m: unknown, name: string): unknown {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return value(m, name);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(m)) {
    if (k === 'content' && Array.isArray(x)) out[k] = x.map((p) => part(p, name));
    else if (k !== name || !droppable(x)) out[k] = CONTENT_MEMBERS.has(k) ? x : value(x, name);
  }
  return out;
}

/** A part of a message: a tool call, a tool result or an item reference is kept whole. */
function part(p: unknown, name: string): unknown {
  if (p !== null && typeof p === 'object' && !Array.isArray(p) && LINK_PARTS.has(String((p as { type?: unknown }).type))) return p;
  return value(p, name);
}

function value(v: unknown, name: string): unknown {
  if (Array.isArray(v)) return v.map((x) => value(x, name));
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === name && droppable(x)) continue;
    out[k] = CONTENT_MEMBERS.has(k) ? x : value(x, name);
  }
  return out;
}

/** A member's value that may be left out: anything but a renumbered call id (a link). */
const droppable = (x: unknown): boolean => !(typeof x === 'string' && RENUMBERED_ID.test(x));
