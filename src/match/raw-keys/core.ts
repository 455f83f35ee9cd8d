// The digests from the view the core wrote itself (assembly/view.ts): the chat family's common
// shapes, and Gemini's and Bedrock Converse's on their routes, with no JavaScript walk; the top
// level through the reference (or the provider's module), attachment holes filled by it one
// part at a time.

import type { CoreView } from '../../core/engine.ts';
import { allFinite } from '../../core/value.ts';
import { Normalizer } from '../../providers/normalize.ts';
import { normalizeRequest as normalizeModule } from '../../providers/index.ts';
import { ollamaAsOpenAI } from '../../providers/ollama.ts';
import type { BuiltinProvider, NormalizeOptions } from '../../providers/types.ts';
import type { RequestDigests } from '../matcher.ts';
import { CONVERSATION, OLLAMA_KEPT, topLevel } from './chat.ts';
import { decoder, L, lit, Out } from './out.ts';
import { finish, finishInPlace, keptTop, messageEnd, modelAndOptions, type Normalized, type Top, topEntry } from './view.ts';
import { keepTools, type KeptTools, keptToolsTail, newToolsTail, usedTools } from './tools-cache.ts';
import { isResult, NO_SKIP, unescapedText } from './walk.ts';
import { canonicalOfUtf8 } from '../../core/index.ts';
import { sameBytes, sameRange } from '../../bytes.ts';

export const PROVIDER_CODE: Record<BuiltinProvider, number> = { 'openai-chat': 1, 'openai-responses': 2, 'openai-embeddings': 3, anthropic: 4, generic: 5 };
/** The provider number of an Ollama /api/chat body's view (assembly/view.ts P_OLLAMA). */
export const OLLAMA_CORE = 8;
const PROVIDER_OF: readonly (BuiltinProvider | undefined)[] = [undefined, 'openai-chat', 'openai-responses', 'openai-embeddings', 'anthropic', 'generic'];

/** What the core's view of a provider module's shape needs from that shape's walk file. */
export interface ModuleShape {
  /** The provider number view() takes (assembly/view.ts P_GEMINI, P_CONVERSE). */
  readonly code: number;
  /** The provider the module names for the shape. */
  readonly provider: string;
  /** Root members that hold the conversation, left out of the top level. */
  readonly conversation: readonly string[];
  /** The top level's first member as the walk starts it: `{"contents":[]` or `{"messages":[]`. */
  readonly first: string;
  /** The top level as the walk hands it to the module (Converse: toolConfig without its tools). */
  top(top: Record<string, unknown>): void;
  /**
   * Where the view's tools are in the body, kept and skipped by that member as the chat
   * family's: the root's `tools` (Gemini) or its `toolConfig`'s (Converse: the view's cut).
   */
  readonly toolsIn: 'root' | 'toolConfig';
  /** The reference's parts for one hole (a part the core left to it, parsed). */
  part(value: unknown, n: Normalizer): unknown[];
}

/**
 * Writes the core's view with its holes filled by `part` (the reference, one part at a time);
 * false where a hole is not exactly one part that is no tool result, or numbers a call id (ids
 * are numbered in document order with the core's: a fresh numbering here would give them the
 * wrong positions): the body then goes to the walk after all.
 */
function filled(out: Out, bytes: Uint8Array, head: Uint8Array, holes: Uint32Array, part: (value: unknown, n: Normalizer) => unknown[]): boolean {
  if (holes.length === 0) {
    out.bytes(head);
    return true;
  }
  const texts = holeTexts(bytes, holes, part);
  if (texts === null) return false;
  const find = searchable(head);
  let at = 0;
  for (const text of texts) {
    const z = find.indexOf(0, at);
    out.span(head, at, z);
    out.text(text);
    at = z + 1;
  }
  out.span(head, at, head.length);
  return true;
}

/**
 * The reference's part for each hole, as JSON text; null where a hole is not exactly one part
 * that is no tool result, or numbers a call id (see filled()).
 */
function holeTexts(bytes: Uint8Array, holes: Uint32Array, part: (value: unknown, n: Normalizer) => unknown[]): string[] | null {
  const texts: string[] = [];
  const n = new Normalizer();
  for (let k = 0; k < holes.length; k += 2) {
    const raw = bytes.subarray(holes[k]!, holes[k + 1]!);
    const known = keptPart(raw, part);
    if (known !== undefined) {
      texts.push(known);
      continue;
    }
    const parts = part(JSON.parse(decoder.decode(raw)), n);
    if (parts.length !== 1 || isResult(parts[0]) || !allFinite(parts[0], NO_SKIP)) return null;
    const text = JSON.stringify(parts[0]);
    texts.push(text);
    // A part that numbers no call id is the same part wherever it is: kept by its bytes.
    if (n.ids.size === 0) keepPart(raw, part, text);
  }
  return n.ids.size > 0 ? null : texts;
}

// The reference's parts of the attachments a conversation repeats (an image sent once stays in
// every later request): by their exact bytes and the shape's part rule, most recent first; with
// the part's RFC 8785 text once a request has needed it (splicedMessages()).
interface PartKept {
  readonly raw: Uint8Array;
  readonly rule: unknown;
  readonly text: string;
  canonical?: Uint8Array;
}
const partsKept: PartKept[] = [];
const PARTS_KEPT = 16;
const PART_MAX_BYTES = 1 << 20;

function keptEntry(raw: Uint8Array, rule: unknown): PartKept | undefined {
  for (const e of partsKept) if (e.rule === rule && sameBytes(e.raw, raw)) return e;
  return undefined;
}

function keptPart(raw: Uint8Array, rule: unknown): string | undefined {
  return keptEntry(raw, rule)?.text;
}

function keepPart(raw: Uint8Array, rule: unknown, text: string): void {
  if (raw.length > PART_MAX_BYTES) return;
  partsKept.unshift({ raw: raw.slice(), rule, text });
  if (partsKept.length > PARTS_KEPT) partsKept.pop();
}

/**
 * Gives the kept parts of `holes` their RFC 8785 text, for splicedMessages() in the next
 * requests. Calls into the core: only where the view has been copied out of it.
 */
function canonicalParts(body: Uint8Array, holes: Uint32Array, rule: unknown): void {
  for (let k = 0; k < holes.length; k += 2) {
    const e = keptEntry(body.subarray(holes[k]!, holes[k + 1]!), rule);
    if (e === undefined || e.canonical !== undefined) continue;
    try {
      e.canonical = canonicalOfUtf8(lit(e.text));
    } catch {
      // left to the canonicalizing path each time
    }
  }
}

/** Node's Buffer over the same bytes where there is one: it finds the hole bytes with memchr (TypedArray's indexOf took ~8 us on an M view). */
function searchable(head: Uint8Array): Uint8Array {
  return typeof Buffer !== 'undefined' ? Buffer.from(head.buffer, head.byteOffset, head.length) : head;
}

/** The message of `starts` that holds offset `z` of the head: the last one starting at or before it. */
function messageAt(starts: Uint32Array, z: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= z) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The messages of `head` (a copy) that hold holes, filled with `texts` and made canonical (the
 * view's other messages are canonical as the core wrote them): by message number.
 */
function filledMessages(head: Uint8Array, starts: Uint32Array, texts: readonly string[]): Map<number, Uint8Array> {
  const find = searchable(head);
  const byMessage = new Map<number, Uint8Array>();
  let at = 0;
  let t = 0;
  while (t < texts.length) {
    const z = find.indexOf(0, at);
    const lo = messageAt(starts, z);
    const s = starts[lo]!;
    const e = messageEnd(starts, lo, head.length);
    const out = new Out();
    let from = s;
    for (let y = z; y >= 0 && y < e; y = find.indexOf(0, from)) {
      out.span(head, from, y);
      out.text(texts[t++]!);
      from = y + 1;
    }
    out.span(head, from, e);
    byMessage.set(lo, canonicalOfUtf8(out.buf.slice(0, out.at)));
    filledCounts.made++;
    at = e;
  }
  return byMessage;
}

/** How often messages with holes were filled by splicing kept parts and by the canonicalizing path (internal: the tests read it). */
export const filledCounts = { spliced: 0, made: 0 };

/**
 * The messages of `head` that hold holes, each hole filled with the kept RFC 8785 text of its
 * part, for a view whose messages with holes are canonical but for them
 * (CoreView.holesCanonical): by message number; undefined where a part is not kept with its
 * text. Reads `head` where it lies (the core's memory) and calls nothing that could reuse it:
 * no copy of the view, no reference part and no canonicalizing call into the core.
 */
function splicedMessages(head: Uint8Array, starts: Uint32Array, body: Uint8Array, holes: Uint32Array, rule: unknown): Map<number, Uint8Array> | undefined {
  const parts: Uint8Array[] = [];
  for (let k = 0; k < holes.length; k += 2) {
    const canonical = keptEntry(body.subarray(holes[k]!, holes[k + 1]!), rule)?.canonical;
    if (canonical === undefined) return undefined;
    parts.push(canonical);
  }
  const find = searchable(head);
  const byMessage = new Map<number, Uint8Array>();
  if (splicing.length > 1 << 20) splicing = new Uint8Array(1 << 12);
  let at = 0;
  const put = (b: Uint8Array): void => {
    if (at + b.length > splicing.length) {
      // Messages already made keep the buffer they were made in.
      const grown = new Uint8Array(Math.max(splicing.length * 2, at + b.length));
      grown.set(splicing.subarray(0, at));
      splicing = grown;
    }
    splicing.set(b, at);
    at += b.length;
  };
  let z = find.indexOf(0);
  let t = 0;
  while (t < parts.length) {
    if (z < 0) return undefined;
    const lo = messageAt(starts, z);
    const e = messageEnd(starts, lo, head.length);
    const start = at;
    let from = starts[lo]!;
    // This message's holes: the next ones in order, up to its end.
    while (z >= 0 && z < e && t < parts.length) {
      put(head.subarray(from, z));
      put(parts[t++]!);
      from = z + 1;
      z = find.indexOf(0, from);
    }
    put(head.subarray(from, e));
    byMessage.set(lo, splicing.subarray(start, at));
  }
  filledCounts.spliced += byMessage.size;
  return byMessage;
}

// The messages splicedMessages() makes, in one buffer kept for them (valid until its next call):
// a copy of each made per request had a backing store of its own.
let splicing = new Uint8Array(1 << 12);

/**
 * The top level without the conversation, as one JSON text for one JSON.parse: `first` and the
 * members' own bytes, `"name": value`. The index has compared their names (no duplicates) and
 * the core declines escaped names, so a name is its bytes.
 */
function topText(bytes: Uint8Array, r: Uint32Array, conversation: readonly string[], first = '{', cut: readonly [number, number] = [0, 0]): string {
  let text = first;
  for (let i = 0; i < r.length; i += 5) {
    if (conversation.includes(unescapedText(bytes, r[i]!, r[i + 1]!, r[i + 2]! | 0))) continue;
    if (text.length > 1) text += ',';
    // A value the view holds already (Converse's tool specs, most of the body's bytes after the
    // messages) is `null` here, for the shape to drop, rather than decoded and parsed.
    if (cut[1] > cut[0] && r[i]! < cut[0] && cut[1] <= r[i + 4]!) {
      text += `${decoder.decode(bytes.subarray(r[i]!, cut[0]))}null${decoder.decode(bytes.subarray(cut[1], r[i + 4]!))}`;
    } else {
      text += decoder.decode(bytes.subarray(r[i]!, r[i + 4]!));
    }
  }
  return `${text}}`;
}

/** Writes the view's model and options of the chat family's top level; its normalized form. */
function chatTop(out: Out, bytes: Uint8Array, roots: Uint32Array, provider: BuiltinProvider, ignoreArgs: readonly string[]): Normalized {
  const text = topText(bytes, roots, CONVERSATION[provider]);
  return keptTop(out, topKey(provider, ignoreArgs), text, () => topLevel(provider, JSON.parse(text) as Record<string, unknown>, ignoreArgs))!;
}

/**
 * What a kept top level depends on besides its text: the view it is made for (a chat-family
 * provider, or Ollama's rewrite) and the ignored arguments (no JSON.stringify for none: keyed per request).
 */
const topKey = (view: string, ignoreArgs: readonly string[]): string => (ignoreArgs.length === 0 ? (noArgsKey.get(view) ?? noArgsKey.set(view, `${view}[]`).get(view)!) : `${view}${JSON.stringify(ignoreArgs)}`);
// The keys without ignored arguments (most requests), made once per view: a string built per
// request is compared by its characters where a kept one is the same string.
const noArgsKey = new Map<string, string>();

/** The chat family's kept top level (see chatTop()), written nowhere. */
function chatTopEntry(out: Out, bytes: Uint8Array, roots: Uint32Array, provider: BuiltinProvider, ignoreArgs: readonly string[], keptOnly: boolean): Top | null | undefined {
  const key = topKey(provider, ignoreArgs);
  return topByBytes(bytes, roots, quotedNames(CONVERSATION[provider]), key, () => {
    const text = topText(bytes, roots, CONVERSATION[provider]);
    return topEntry(out, key, text, () => topLevel(provider, JSON.parse(text) as Record<string, unknown>, ignoreArgs))!;
  }, NO_CUT, keptOnly);
}

// The kept top levels found by their bytes, before topText() decodes them into the text they
// are kept by (view.ts topEntry()): the root members that are not the conversation, each from
// its name's opening quote to its value's end, compared byte for byte. A name spelled with
// escapes is compared as spelled (a conversation member spelled so counts as top level here,
// and its bytes are then part of what must match).
interface TopBytes {
  readonly key: string;
  readonly parts: Uint8Array;
  readonly top: Top;
}
const byBytes: TopBytes[] = [];
const BY_BYTES_MAX = 16;
const TOP_BYTES_MAX = 16 * 1024;
const quoted = new Map<readonly string[], Uint8Array[]>();

/** The names of `list` as they are spelled in a body without escapes: `"name"`. */
function quotedNames(list: readonly string[]): Uint8Array[] {
  let q = quoted.get(list);
  if (q === undefined) quoted.set(list, (q = list.map((n) => new TextEncoder().encode(JSON.stringify(n)))));
  return q;
}

/**
 * The kept top level whose bytes are those of the body's top-level members (`r`: the root's
 * members; those named in `conversation` are not top level), made by `slow` the first time
 * (null: none, nothing kept). A member holding `cut` (a value the view holds already, which
 * topText() writes as null) is compared without the cut's bytes, as two ranges. `keptOnly`: a
 * top level not kept is not made (undefined), for a caller that must not call into the core yet.
 */
function topByBytes(bytes: Uint8Array, r: Uint32Array, conversation: readonly Uint8Array[], key: string, slow: () => Top | null, cut?: readonly [number, number], keptOnly?: false): Top | null;
function topByBytes(bytes: Uint8Array, r: Uint32Array, conversation: readonly Uint8Array[], key: string, slow: () => Top | null, cut: readonly [number, number], keptOnly: boolean): Top | null | undefined;
function topByBytes(bytes: Uint8Array, r: Uint32Array, conversation: readonly Uint8Array[], key: string, slow: () => Top | null, cut: readonly [number, number] = NO_CUT, keptOnly = false): Top | null | undefined {
  // The top level's byte ranges [start, end, ...], worked out once: each member compared to
  // the conversation's names; members one comma apart are one range (fewer, longer compares).
  // Each range is kept with a 0x00 after it (never in JSON text).
  const ranges: number[] = [];
  let total = 0;
  for (let i = 0; i < r.length; i += 5) {
    let member = true;
    for (let c = 0; c < conversation.length && member; c++) if (keyIs(bytes, r[i]!, r[i + 1]!, conversation[c]!)) member = false;
    if (!member) continue;
    const s = r[i]!;
    const e = r[i + 4]!;
    if (cut[1] > cut[0] && s < cut[0] && cut[1] <= e) {
      ranges.push(s, cut[0], cut[1], e);
      total += e - s - (cut[1] - cut[0]) + 2;
    } else if (ranges.length > 0 && ranges[ranges.length - 1]! + 1 === s && bytes[s - 1] === 0x2c) {
      total += e - ranges[ranges.length - 1]!;
      ranges[ranges.length - 1] = e;
    } else {
      ranges.push(s, e);
      total += e - s + 1;
    }
  }
  for (let k = 0; k < byBytes.length; k++) {
    const e = byBytes[k]!;
    if (e.key !== key || e.parts.length !== total) continue;
    let at = 0;
    let same = true;
    for (let q = 0; q < ranges.length && same; q += 2) {
      const n = ranges[q + 1]! - ranges[q]!;
      same = sameRange(e.parts, at, bytes, ranges[q]!, n) && e.parts[at + n] === 0;
      at += n + 1;
    }
    if (same) return e.top;
  }
  if (keptOnly) return undefined;
  const made = slow();
  if (made !== null && total <= TOP_BYTES_MAX) {
    const parts = new Uint8Array(total);
    let at = 0;
    for (let q = 0; q < ranges.length; q += 2) {
      parts.set(bytes.subarray(ranges[q]!, ranges[q + 1]!), at);
      at += ranges[q + 1]! - ranges[q]! + 1;
    }
    byBytes.unshift({ key, parts, top: made });
    if (byBytes.length > BY_BYTES_MAX) byBytes.pop();
  }
  return made;
}

const NO_CUT: readonly [number, number] = [0, 0];

/** Whether the last answer from the core's view hashed its messages where they lay (inPlace()); for the counters. */
export let lastInPlace = false;

const EMPTY_TOOLS = new TextEncoder().encode(',"tools":[]');
const EMPTY_TOOLS_TAIL = new TextEncoder().encode(',"tools":[]}');
const CLOSE = new TextEncoder().encode('}');

// One buffer for the copies of views with holes (grown, never shrunk but for a very large view):
// a fresh 35 KB copy per request showed as garbage collection.
let viewCopy = new Uint8Array(1 << 16);

/** A copy of `head` in the buffer kept for it, valid until the next call. */
function copyOf(head: Uint8Array): Uint8Array {
  if (viewCopy.length < head.length) viewCopy = new Uint8Array(Math.max(head.length, viewCopy.length * 2));
  viewCopy.set(head);
  const copy = viewCopy.subarray(0, head.length);
  if (viewCopy.length > 1 << 22) viewCopy = new Uint8Array(1 << 16);
  return copy;
}

/**
 * The digests of a view whose messages the core wrote as RFC 8785 text (CoreView.starts), hashed
 * where they lie (finishInPlace()), when the view's tool list is canonical already: kept (the
 * list skipped, or its kept form found) or empty; null otherwise (a list never seen: the view
 * then goes through the canonicalizing pass, which also keeps the list for the next request).
 * Messages with attachment holes are filled with the reference's parts and made canonical one
 * by one, from a copy of the view (the reference's parts may call into the core). `listed`: the
 * view's tool list as viewTools() gave it (undefined: skipped).
 */
function inPlace(
  bytes: Uint8Array,
  cv: CoreView,
  listed: ViewTools | undefined,
  known: KeptTools | undefined,
  provider: BuiltinProvider | undefined,
  topOf: (out: Out, keptOnly: boolean) => Top | null | undefined,
  keepList: (tail: Uint8Array, names: readonly (string | undefined)[]) => void,
  part: (value: unknown, n: Normalizer) => unknown[],
): RequestDigests | null {
  lastInPlace = false;
  if (cv.starts === undefined) return null;
  let tail: Uint8Array;
  let names: readonly (string | undefined)[];
  if (listed === undefined) {
    tail = known!.tail;
    names = known!.names;
  } else {
    if (listed.tail !== undefined) tail = listed.tail;
    else if (keyIs(listed.copy!, 0, listed.copy!.length, EMPTY_TOOLS)) tail = EMPTY_TOOLS_TAIL;
    else if (listed.copy!.length === 0) tail = CLOSE;
    else return null;
    names = toolNamesOf(bytes, cv.toolNames);
  }
  let head = cv.head;
  let filled: Map<number, Uint8Array> | undefined;
  if (cv.holes.length !== 0) {
    if (cv.holesCanonical) filled = splicedMessages(head, cv.starts, bytes, cv.holes, part);
    if (filled === undefined) {
      // The reference's parts may call into the core, which reuses the memory `head` is in.
      head = copyOf(head);
      const texts = holeTexts(bytes, cv.holes, part);
      if (texts === null) return null;
      filled = filledMessages(head, cv.starts, texts);
      if (cv.holesCanonical) canonicalParts(bytes, cv.holes, part);
    }
  }
  const out = new Out();
  const d = finishInPlace(head, cv.starts, filled, provider, names, (keptOnly) => topOf(out, keptOnly), tail, head === cv.head);
  if (d === null) return null;
  if (listed === undefined) usedTools(known!);
  else if (listed.tail !== undefined) keepList(listed.tail, names);
  lastInPlace = true;
  return d;
}

/** Tool names from the core's view, in its chunk order (undefined: none). */
function toolNamesOf(bytes: Uint8Array, tn: Uint32Array): (string | undefined)[] {
  const names: (string | undefined)[] = [];
  for (let k = 0; k < tn.length; k += 3) names.push(tn[k + 1] === 0 ? undefined : unescapedText(bytes, tn[k]!, tn[k + 1]!, tn[k + 2]! | 0));
  return names;
}

const chatPart = (value: unknown, n: Normalizer): unknown[] => n.content(value, '$');

/**
 * The digests from the view the core wrote itself (assembly/view.ts): the common request
 * shapes with no JavaScript walk at all; null where an attachment hole leaves the body to the
 * walk here after all.
 */
export function coreDigests(bytes: Uint8Array, cv: CoreView, ignoreArgs: readonly string[], known?: KeptTools): RequestDigests | null {
  // A tool list kept already needs no copy; any other is copied first: the core's memory is
  // reused by the next call into it.
  const listed = cv.skipped ? undefined : viewTools(cv);
  const provider = PROVIDER_OF[cv.provider]!;
  const fast = inPlace(bytes, cv, listed, known, provider, (o, keptOnly) => chatTopEntry(o, bytes, cv.roots, provider, ignoreArgs, keptOnly), (tail, names) => keep(bytes, cv, tail, names), chatPart);
  if (fast !== null) return fast;
  const out = new Out();
  // Attachment parts, whose rules decode and hash data: the reference, one part at a time.
  if (!filled(out, bytes, cv.head, cv.holes, chatPart)) return null;
  const small = chatTop(out, bytes, cv.roots, provider, ignoreArgs);
  return withTools(out, bytes, cv, listed, known, provider, small, (tail, names) => keep(bytes, cv, tail, names));
}

/**
 * Ends the view with its tool list and finishes the digests: the kept form of a list the index
 * skipped (raw-keys/tools-cache.ts), or the list written; `keepList` keeps a written list whose
 * canonical form was made for the conversation's next request.
 */
function withTools(
  out: Out,
  bytes: Uint8Array,
  cv: CoreView,
  listed: ViewTools | undefined,
  known: KeptTools | undefined,
  provider: BuiltinProvider,
  small: Normalized,
  keepList: (tail: Uint8Array, names: readonly (string | undefined)[]) => void,
): RequestDigests {
  if (listed === undefined) {
    usedTools(known!);
    out.bytes(L.close);
    return finish(out, provider, cv.messageCount, known!.names, small, known!.tail);
  }
  const names = toolNamesOf(bytes, cv.toolNames);
  const tail = endTools(out, listed);
  const d = finish(out, provider, cv.messageCount, names, small, tail);
  if (tail !== undefined) keepList(tail, names);
  return d;
}

/** The view's tool list: its kept canonical end, or else a copy of its bytes. */
interface ViewTools {
  readonly tail: Uint8Array | undefined;
  readonly copy: Uint8Array | undefined;
}

// A view without tools (most requests): one answer for all, not a copy of nothing each time.
const NO_TOOLS: ViewTools = Object.freeze({ tail: undefined, copy: new Uint8Array(0) });

function viewTools(cv: CoreView): ViewTools {
  if (cv.tools.length === 0) return NO_TOOLS;
  const tail = keptToolsTail(cv.tools);
  return tail !== undefined ? { tail, copy: undefined } : { tail: undefined, copy: cv.tools.slice() };
}

/**
 * Ends the view: the tool list written into it (`,"tools":[...]`, the view's last member) and
 * `}`, or only `}` for a list whose canonical form is kept (raw-keys/tools-cache.ts): the key's
 * digest then ends with that kept form, returned here.
 */
function endTools(out: Out, listed: ViewTools): Uint8Array | undefined {
  const tail = listed.tail ?? newToolsTail(listed.copy!);
  if (tail === undefined) out.bytes(listed.copy!);
  out.bytes(L.close);
  return tail;
}

const TOOLS_KEY = new TextEncoder().encode('"tools"');
const FUNCTIONS_KEY = new TextEncoder().encode('"functions"');

/** Whether the key at [start, end) of `bytes` is `key` (quotes included), byte for byte. */
function keyIs(bytes: Uint8Array, start: number, end: number, key: Uint8Array): boolean {
  if (end - start !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (bytes[start + i] !== key[i]) return false;
  return true;
}

/**
 * Keeps the body's root `tools` value for the next request of the conversation, when the view
 * ended with its kept canonical form `tail` and no `functions` list was sorted in with it.
 */
function keep(bytes: Uint8Array, cv: CoreView, tail: Uint8Array, names: readonly (string | undefined)[]): void {
  const r = cv.roots;
  let member = -1;
  for (let i = 0; i < r.length; i += 5) {
    if (keyIs(bytes, r[i]!, r[i + 1]!, FUNCTIONS_KEY)) return;
    if (keyIs(bytes, r[i]!, r[i + 1]!, TOOLS_KEY)) member = i;
  }
  if (member < 0 || bytes[r[member + 3]!] !== 0x5b) return;
  keepTools(bytes, r[member + 3]!, r[member + 4]!, cv.provider, cv.toolsVerdict, names, tail);
}

/**
 * The digests of a provider module's body from the core's own view of its shape (Gemini,
 * Bedrock Converse), as coreDigests() for the chat family: model and options by the module on
 * the top level, holes by the reference; null leaves the body to the shape's walk.
 */
export function moduleCoreDigests(bytes: Uint8Array, cv: CoreView, opts: NormalizeOptions, shape: ModuleShape, known?: KeptTools): RequestDigests | null {
  lastInPlace = false;
  const listed = cv.skipped ? undefined : viewTools(cv);
  // Decoded only where the kept top level is not found by its bytes (topByBytes()).
  let text: string | undefined;
  const textOf = (): string => (text ??= topText(bytes, cv.roots, shape.conversation, shape.first, cv.cut));
  // The module reads the model (and the operation) from the endpoint: part of what is kept.
  const method = opts.endpoint?.method;
  const url = opts.endpoint?.url;
  const key = (method === undefined || typeof method === 'string') && typeof url === 'string' ? moduleTopKey(shape.code, method, url, opts.provider) : undefined;
  const make = (): Normalized | null => {
    const top = JSON.parse(textOf()) as Record<string, unknown>;
    shape.top(top);
    const small = normalizeModule(top, opts);
    return small.provider !== shape.provider || !allFinite(small.view.options, NO_SKIP) || !allFinite(small.view.model, NO_SKIP) ? null : small;
  };
  const keepList = (tail: Uint8Array, names: readonly (string | undefined)[]): void => {
    if (shape.toolsIn === 'root') keep(bytes, cv, tail, names);
    else if (cv.cut[1] > cv.cut[0] && bytes[cv.cut[0]] === 0x5b) keepTools(bytes, cv.cut[0], cv.cut[1], cv.provider, 0, names, tail, true);
  };
  if (key !== undefined) {
    const topOf = (o: Out, keptOnly: boolean): Top | null | undefined => topByBytes(bytes, cv.roots, quotedNames(shape.conversation), key, () => topEntry(o, key, textOf(), make), cv.cut, keptOnly);
    const fast = inPlace(bytes, cv, listed, known, undefined, topOf, keepList, shape.part);
    if (fast !== null) return fast;
  }
  const out = new Out();
  if (!filled(out, bytes, cv.head, cv.holes, shape.part)) return null;
  let small: Normalized | null;
  if (key === undefined) {
    small = make();
    if (small !== null) modelAndOptions(out, small);
  } else {
    small = keptTop(out, key, textOf(), make);
  }
  if (small === null) return null;
  return withTools(out, bytes, cv, listed, known, small.provider as BuiltinProvider, small, keepList);
}

/** What a module shape's kept top level depends on besides its bytes: the shape and the endpoint (the last one's key kept: requests mostly repeat one). */
function moduleTopKey(code: number, method: string | undefined, url: string, provider: unknown): string {
  const l = lastModuleKey;
  if (l !== undefined && l.code === code && l.method === method && l.url === url && l.provider === provider) return l.key;
  const key = JSON.stringify([code, method ?? null, url, provider ?? null]);
  lastModuleKey = { code, method, url, provider, key };
  return key;
}
let lastModuleKey: { code: number; method: string | undefined; url: string; provider: unknown; key: string } | undefined;

/** An Ollama body's root members that are no option: the conversation and its tool list. */
const OLLAMA_CONVERSATION = ['messages', 'tools'];

/**
 * The digests of an Ollama /api/chat body from the core's own view of it (assembly/view.ts
 * P_OLLAMA: the chat rules with Ollama's calls, links and thinking), as the walk in its Ollama
 * mode gives them (raw-keys/ollama.ts): the top level rewritten by the module's ollamaAsOpenAI()
 * and normalized as a chat body's, the root tool list kept between requests under OLLAMA_KEPT;
 * null leaves the body to the walk.
 */
export function ollamaCoreDigests(bytes: Uint8Array, cv: CoreView, ignoreArgs: readonly string[], known?: KeptTools): RequestDigests | null {
  const key = topKey('ollama-core', ignoreArgs);
  const topOf = (out: Out, keptOnly = false): Top | undefined =>
    topByBytes(bytes, cv.roots, quotedNames(OLLAMA_CONVERSATION), key, () => {
      const text = topText(bytes, cv.roots, OLLAMA_CONVERSATION);
      return topEntry(out, key, text, () => topLevel('openai-chat', ollamaAsOpenAI('chat', JSON.parse(text)) as Record<string, unknown>, ignoreArgs))!;
    }, NO_CUT, keptOnly)!;
  const keepList = (tail: Uint8Array, names: readonly (string | undefined)[]): void => {
    const r = cv.roots;
    for (let i = 0; i < r.length; i += 5) {
      if (keyIs(bytes, r[i]!, r[i + 1]!, TOOLS_KEY) && bytes[r[i + 3]!] === 0x5b) keepTools(bytes, r[i + 3]!, r[i + 4]!, OLLAMA_KEPT, 0, names, tail);
    }
  };
  const listed = cv.skipped ? undefined : viewTools(cv);
  const fast = inPlace(bytes, cv, listed, known, 'openai-chat', topOf, keepList, chatPart);
  if (fast !== null) return { ...fast, provider: 'ollama-chat' };
  const out = new Out();
  if (!filled(out, bytes, cv.head, cv.holes, chatPart)) return null;
  const small = topOf(out)!;
  out.bytes(small.bytes);
  const d = withTools(out, bytes, cv, listed, known, 'openai-chat', small.small, keepList);
  return { ...d, provider: 'ollama-chat' };
}
