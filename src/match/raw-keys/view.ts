// The parts of the view every walk writes the same way, and the one core call that hashes it:
// the message list, the tools in the reference's order, model and options, the digests.

// node:crypto's one-shot SHA-256 where the runtime has it (browser bundles leave these files
// out): a few hundred bytes of UTF-8 hashed in one native call, where the core's sha256()
// encodes the text, copies it into memory and copies the digest out.
import { nodeCreateHash, nodeHash } from '../../core/node-crypto.ts';
import { canonicalize, hashJSON, hashValue, pathHashesOfUtf8, sha256Hex } from '../../core/index.ts';
import type { normalizeRequest } from '../../providers/normalize.ts';
import type { BuiltinProvider } from '../../providers/types.ts';
import type { RequestDigests } from '../matcher.ts';
import { answerShape } from '../answer-shape.ts';
import { COMMA, L, type Out } from './out.ts';
import { decline, NONE } from './walk.ts';

export type Normalized = ReturnType<typeof normalizeRequest>;


/**
 * Writes `,"tools":[...]` from the tool chunks written at the end of `out` (in body order), in
 * the reference's order (by name), over the chunks themselves. Equal names sort by canonical
 * bytes in the reference: left to it (decline).
 */
export function sortedTools(out: Out, chunks: readonly { name: string | undefined; start: number; end: number }[]): void {
  const sortName = (c: (typeof chunks)[number]): string => c.name ?? '';
  const sorted = [...chunks].sort((a, b) => (sortName(a) < sortName(b) ? -1 : sortName(a) > sortName(b) ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) if (sortName(sorted[i]!) === sortName(sorted[i - 1]!)) decline();
  const toolsAt = out.at;
  out.bytes(L.tools);
  sorted.forEach((c, i) => {
    if (i > 0) out.byte(COMMA);
    out.own(c.start, c.end);
  });
  // Move the sorted tools over the unsorted chunks.
  const firstChunk = chunks.length > 0 ? chunks[0]!.start : toolsAt;
  out.buf.copyWithin(firstChunk, toolsAt, out.at);
  out.at = firstChunk + (out.at - toolsAt);
  out.bytes(L.closeArr);
}

/**
 * The view's message list as the Gemini and Converse walks write it in place: a separator before
 * every message but the first, the end of a message, and one message of all the parts a turn
 * keeps. `count` is the number of messages written (a walk that takes a message back lowers it).
 */
export class MessageList {
  count = 0;

  constructor(private readonly out: Out) {
    out.bytes(L.view);
  }

  next(): void {
    if (this.count++ > 0) this.out.byte(COMMA);
  }

  close(): void {
    this.out.bytes(L.closeArr);
    this.out.bytes(L.close);
  }

  /** One message of the parts `write` keeps (NONE: nothing kept); none for no parts when `dropEmpty`. */
  whole(head: Uint8Array, parts: readonly number[], write: (p: number) => number, dropEmpty: boolean): void {
    const out = this.out;
    const mark = out.at;
    this.next();
    out.bytes(head);
    let n = 0;
    for (const p of parts) {
      const at = out.at;
      if (n > 0) out.byte(COMMA);
      if (write(p) === NONE) out.at = at;
      else n++;
    }
    if (n === 0 && dropEmpty) {
      out.at = mark;
      this.count--;
      return;
    }
    this.close();
  }
}

/**
 * Writes `,"model":...,"options":...`: the root's members in canonical order (input or
 * messages, model, options, tools), so the core need not sort the root object, which would
 * move the whole view twice.
 */
export function modelAndOptions(out: Out, small: Normalized): void {
  const view = small.view;
  if (view.model !== undefined) {
    out.bytes(L.model);
    out.text(JSON.stringify(view.model));
  }
  out.bytes(L.options);
  out.text(JSON.stringify(view.options));
}

// The top level (model, options, context) repeats between the requests of a conversation, as
// the tool list does: its normalized form and the view's bytes for it are kept by the exact
// top-level text (with the provider and the ignored arguments), so that JSON.parse, the
// normalizer and JSON.stringify of it run once per conversation rather than per request.
export interface Top {
  readonly small: Normalized;
  /** `,"model":...,"options":...` as modelAndOptions() wrote it. */
  readonly bytes: Uint8Array;
  /** The same members in RFC 8785 form, made when first asked for (canonicalTop()). */
  canonical?: Uint8Array;
}
const tops = new Map<string, Top>();
// At most TOPS_MAX entries of top levels up to TOP_MAX_CHARS (a top level carrying a large
// member is normalized each time rather than held).
const TOPS_MAX = 64;
const TOP_MAX_CHARS = 16 * 1024;

/**
 * Writes the view's model and options of a top level whose text is `text` (`key` names the
 * rest of what its normalized form depends on); its normalized form, from `make` the first time
 * (null: the body goes to its walk, nothing is written or kept).
 */
export function keptTop(out: Out, key: string, text: string, make: () => Normalized | null): Normalized | null {
  const top = topEntry(out, key, text, make);
  if (top === null) return null;
  out.bytes(top.bytes);
  return top.small;
}

/**
 * The kept top level of `text` (see keptTop()), made by `make` the first time (null: none);
 * writes nothing into `out` (it only lends its buffer to make the bytes).
 */
export function topEntry(out: Out, key: string, text: string, make: () => Normalized | null): Top | null {
  // A string key is compared whole by the Map (its hash only finds the bucket).
  const full = text.length > TOP_MAX_CHARS ? undefined : `${key}${text}`;
  const known = full === undefined ? undefined : tops.get(full);
  if (known !== undefined) return known;
  const small = make();
  if (small === null) return null;
  const at = out.at;
  modelAndOptions(out, small);
  const top: Top = { small, bytes: out.buf.slice(at, out.at) };
  out.at = at;
  if (full !== undefined) {
    if (tops.size >= TOPS_MAX) tops.clear();
    tops.set(full, top);
  }
  return top;
}

const MODEL = new TextEncoder().encode(',"model":');
const OPTIONS = new TextEncoder().encode(',"options":');

/** `,"model":...,"options":...` in RFC 8785 form (the root's members in canonical order). */
function canonicalTop(top: Top): Uint8Array {
  if (top.canonical !== undefined) return top.canonical;
  const view = top.small.view;
  const parts = view.model === undefined ? [] : [MODEL, canonicalize(view.model)];
  parts.push(OPTIONS, canonicalize(view.options));
  const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return (top.canonical = bytes);
}

/**
 * What the deck's record path asks of finish() besides the digests (raw-keys.ts
 * rawRequestKey()). `keyOnly`: the key and signature alone, as requestKey() gives them (one
 * digest of the view, not one per message and step, and no digest of the signature), which is
 * all a stored record keeps; the other digests are then left empty. `model`: the view's model
 * member, set by every answer.
 */
export const keyRequest: { keyOnly: boolean; model: unknown } = { keyOnly: false, model: undefined };

/** One core call over the view written to `out`, and the signature. */
export function finish(out: Out, provider: BuiltinProvider, count: number, names: readonly (string | undefined)[], small: Normalized, tail?: Uint8Array): RequestDigests {
  const member = provider === 'openai-embeddings' ? 'input' : 'messages';
  // Both copied: the sorted names are kept with `names`, the normalized top level for the next
  // request (core.ts).
  const signature = { toolNames: [...sortedNames(names).sorted], messageCount: count, contextKeys: [...small.contextKeys] };
  keyRequest.model = small.view.model;
  // The view is valid UTF-8: ranges of a body checked above (cut at ASCII delimiters) and text
  // encoded from well-formed strings.
  const view = out.buf.subarray(0, out.at);
  if (keyRequest.keyOnly && tail === undefined) return { provider, key: hashJSON(view), signature, signatureDigest: '', shape: '', messageHashes: [], pathHashes: [] };
  const paths = pathHashesOfUtf8(view, member, tail);
  return {
    provider,
    key: paths.digest,
    signature,
    signatureDigest: signatureDigest(signature),
    shape: answerShape(small.view.options),
    messageHashes: paths.messageHashes,
    pathHashes: paths.pathHashes,
  };
}

/**
 * finish() for messages the core wrote as RFC 8785 text (CoreView.starts): each message hashed
 * where it lies in `head` (the core's memory), then the view's digest: `topOf` gives the top
 * level (which may call into the core, reusing that memory, unless asked only for a kept one),
 * and the digest ends with the top level's canonical members and `tail` (`,"tools":[...]}`).
 * No canonicalizing pass and no copy of the view. `movable`: `head` lies in memory of its own
 * (the core's), whose bytes after it are free, and none of `filled` lies there. null where
 * node:crypto is missing.
 */
export function finishInPlace(
  head: Uint8Array,
  starts: Uint32Array,
  filled: ReadonlyMap<number, Uint8Array> | undefined,
  provider: BuiltinProvider | undefined,
  names: readonly (string | undefined)[],
  topOf: (keptOnly: boolean) => Top | null | undefined,
  tail: Uint8Array,
  movable: boolean,
): RequestDigests | null {
  if (nodeHash === undefined || nodeCreateHash === undefined) return null;
  const count = starts.length;
  const keyOnly = keyRequest.keyOnly;
  const messageHashes = keyOnly ? [] : new Array<string>(count);
  const pathHashes = keyOnly ? [] : new Array<string>(count);
  if (!keyOnly) {
    const buffer = head.buffer;
    const base = head.byteOffset;
    let prev = '';
    for (let i = 0; i < count; i++) {
      const s = starts[i]!;
      const m = nodeHash('sha256', (filled === undefined ? undefined : filled.get(i)) ?? new Uint8Array(buffer, base + s, messageEnd(starts, i, head.length) - s), 'hex');
      messageHashes[i] = m;
      pathHashes[i] = prev = i === 0 ? m : nodeHash('sha256', `${prev}:${m}`, 'hex');
    }
  }
  // A top level kept with its canonical form needs no call into the core: the view is hashed
  // where it lies with the top level and the tail written after it, in one call (a hash object
  // cost ~2.5 us of an M body's key, a copy of the view out of the core's memory as much).
  let top: Top | null | undefined;
  let key: string | undefined;
  if (movable) {
    top = topOf(true);
    if (top != null && top.canonical !== undefined) key = keyWhereItLies(head, starts, filled, top.canonical, tail);
  }
  if (key === undefined) {
    // A short view is copied out (topOf may reuse the core's memory) and hashed with the top
    // level and tail in one call: an incremental hash object costs more than the copy (~1.5 us,
    // most of a small body's key on the record path).
    const short = filled === undefined && head.length <= SHORT_VIEW;
    const whole = short ? undefined : nodeCreateHash('sha256');
    if (short) scratch.set(head);
    else if (filled === undefined) {
      whole!.update(head);
    } else {
      // The view with each filled message in place of its text with holes.
      let at = 0;
      for (const i of [...filled.keys()].sort((a, b) => a - b)) {
        whole!.update(head.subarray(at, starts[i]!)).update(filled.get(i)!);
        at = messageEnd(starts, i, head.length);
      }
      whole!.update(head.subarray(at));
    }
    top = topOf(false);
    if (top == null) return null;
    key = short ? shortKey(head.length, canonicalTop(top), tail) : whole!.update(canonicalTop(top)).update(tail).digest('hex');
  }
  const small = top!.small;
  provider ??= small.provider as BuiltinProvider;
  const names_ = sortedNames(names);
  const signature = { toolNames: [...names_.sorted], messageCount: count, contextKeys: [...small.contextKeys] };
  keyRequest.model = small.view.model;
  if (keyOnly) return { provider, key, signature, signatureDigest: '', shape: '', messageHashes, pathHashes };
  // The signature's canonical text from the kept parts' JSON (the same lists each request).
  const contextText = jsonOf(small.contextKeys);
  const sig = names_.text !== undefined && contextText !== undefined
    ? nodeHash('sha256', `{"contextKeys":${contextText},"messageCount":${count},"toolNames":${names_.text}}`, 'hex')
    : signatureDigest(signature);
  return { provider, key, signature, signatureDigest: sig, shape: answerShape(small.view.options), messageHashes, pathHashes };
}

/** Where message `i` of `starts` ends in a head of `length` bytes (one byte before the next one's start). */
export const messageEnd = (starts: Uint32Array, i: number, length: number): number => (i + 1 < starts.length ? starts[i + 1]! - 1 : length - 1);

/**
 * SHA-256 hex of the view (`head` with each filled message in place of its text with holes),
 * then `top`, then `tail`, made where `head` lies: the memory after it is free once its
 * messages are hashed, so the filled messages are widened into it from the last one back (only
 * the bytes after the first one move) and the top level and tail written after the view.
 * undefined where that memory has no room, or a filled message is shorter than its text.
 */
function keyWhereItLies(head: Uint8Array, starts: Uint32Array, filled: ReadonlyMap<number, Uint8Array> | undefined, top: Uint8Array, tail: Uint8Array): string | undefined {
  let grow = 0;
  let order: number[] | undefined;
  if (filled !== undefined) {
    order = [...filled.keys()].sort((a, b) => a - b);
    for (const i of order) {
      const more = filled.get(i)!.length - (messageEnd(starts, i, head.length) - starts[i]!);
      if (more < 0) return undefined;
      grow += more;
    }
  }
  const size = head.length + grow;
  const n = size + top.length + tail.length;
  if (head.byteOffset + n > head.buffer.byteLength) return undefined;
  const whole = new Uint8Array(head.buffer, head.byteOffset, n);
  if (order !== undefined) {
    // What follows message i moves right by the growth of the messages up to it.
    let shift = grow;
    let after = head.length;
    for (let k = order.length - 1; k >= 0; k--) {
      const i = order[k]!;
      const s = starts[i]!;
      const e = messageEnd(starts, i, head.length);
      const f = filled!.get(i)!;
      if (shift > 0) whole.copyWithin(e + shift, e, after);
      shift -= f.length - (e - s);
      whole.set(f, s + shift);
      after = s;
    }
  }
  whole.set(top, size);
  whole.set(tail, size + top.length);
  return nodeHash!('sha256', whole, 'hex');
}

/** Views up to this many bytes are hashed in one call from {@link scratch} (finishInPlace()). */
const SHORT_VIEW = 4096;
let scratch = new Uint8Array(SHORT_VIEW * 2);

/** SHA-256 hex of the view's first `at` bytes in {@link scratch}, then `top`, then `tail`. */
function shortKey(at: number, top: Uint8Array, tail: Uint8Array): string {
  const n = at + top.length + tail.length;
  if (n > scratch.length) {
    const grown = new Uint8Array(n * 2);
    grown.set(scratch.subarray(0, at));
    scratch = grown;
  }
  scratch.set(top, at);
  scratch.set(tail, at + top.length);
  return nodeHash!('sha256', scratch.subarray(0, n), 'hex');
}

// A conversation's requests name the same tools and context keys: their sorted, deduplicated
// names and JSON text are kept with the lists they come from (a kept tool list's names, a kept
// top level's context keys).
const NO_NAMES: { sorted: string[]; text: string | undefined } = Object.freeze({ sorted: Object.freeze([]) as unknown as string[], text: '[]' });
const sortedOf = new WeakMap<readonly (string | undefined)[], { sorted: string[]; text: string | undefined }>();
const jsonText = new WeakMap<readonly string[], string | undefined>();

/** The signature's tool names of `names` (sorted, no duplicates) and their JSON text (undefined: not all well-formed). */
function sortedNames(names: readonly (string | undefined)[]): { sorted: string[]; text: string | undefined } {
  // A request without tools comes with a new empty list each time: remembering each would cost
  // a weak entry per request (most of a small body's keying, and work for every collection).
  if (names.length === 0) return NO_NAMES;
  let known = sortedOf.get(names);
  if (known === undefined) {
    const sorted = [...new Set(names.filter((n): n is string => n !== undefined))].sort();
    known = { sorted, text: sorted.every(wellFormed) ? JSON.stringify(sorted) : undefined };
    sortedOf.set(names, known);
  }
  return known;
}

/** JSON text of a list of well-formed strings (RFC 8785's spelling of it), or undefined. */
function jsonOf(list: readonly string[]): string | undefined {
  if (jsonText.has(list)) return jsonText.get(list);
  const text = list.every(wellFormed) ? JSON.stringify(list) : undefined;
  jsonText.set(list, text);
  return text;
}

const wellFormed = (x: string): boolean => x.isWellFormed();

/**
 * hashValue(signature), from its canonical text written here: members in canonical order, an
 * integer, and strings as JSON.stringify spells them, which is RFC 8785's spelling for
 * well-formed strings (names read from a body checked for lone surrogates). hashValue()
 * stringifies, copies into the core and canonicalizes: ~4 us of a ~160 us request.
 */
function signatureDigest(s: { toolNames: string[]; messageCount: number; contextKeys: string[] }): string {
  if (!Number.isSafeInteger(s.messageCount) || !s.toolNames.every(wellFormed) || !s.contextKeys.every(wellFormed)) return hashValue(s);
  const text = `{"contextKeys":${JSON.stringify(s.contextKeys)},"messageCount":${s.messageCount},"toolNames":${JSON.stringify(s.toolNames)}}`;
  return sha256Hex(text);
}
