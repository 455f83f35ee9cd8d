/**
 * Credentials in streamed answers, and AWS event-stream answers redacted frame by frame.
 *
 * A streamed answer carries its text in pieces, one per event (a server-sent event, an NDJSON
 * line, an AWS event-stream frame, a realtime event, an element of a JSON array sent one at a
 * time): a key the model repeats from the prompt
 * arrives as "y sk-pr", "oj-ABCD", "EFGHIJK", ... and no event holds enough of it for the text
 * scan to see a credential, so every piece used to reach the tape. Here the pieces of each text
 * stream (the string members at one place in successive events of one type: `delta.content` of
 * OpenAI's chunks, `delta.text` of Anthropic's `content_block_delta`, Gemini's
 * `candidates[0].content.parts[0].text`) are read joined, and a credential found across them is
 * masked where it lies: its mask in the piece where it begins, the rest of its characters taken
 * out of the pieces after. So is a PEM private key's body written out a few characters an event
 * (its markers kept, as in one string). Joined as an SDK joins them, the pieces read as the
 * whole answer would after redaction.
 * The joined text is read as JSON text too: tool-call arguments streamed a few characters an
 * event (`{"password":"…"}` in OpenAI's `function.arguments` deltas, Anthropic's
 * `input_json_delta`) have their secret-named members' values masked the same way, as
 * redaction masks them in one string (redact.ts, JSON text inside a string).
 *
 * AWS event-stream frames carry a length and two CRCs: masking a credential in their bytes, as
 * text, left frames the SDK rejects (a CRC mismatch), so a Bedrock answer holding a key was
 * recorded but could not be replayed. Their JSON payloads (and the base64 JSON chunks of
 * InvokeModel streams inside them) are redacted as JSON, and the frames that changed are
 * encoded again.
 */
import { decodeEventStream, encodeEventStreamMessage, headerString, mayBeEventStream, type EventStreamMessage } from '../providers/wire/aws-eventstream.ts';
import { awsSecretsIn } from './aws-secret.ts';
import { CREDENTIAL, credentialFrom, keptInView, privateKeysIn, searchedJsonText } from './credential.ts';
import { EMBEDDED_MEMBER, embeddedSecret, isMask, latin1Text, type KnownBody } from './redact.ts';
import type { EchoingRedactor } from './echo-redact.ts';
import type { HttpRecord } from './records.ts';
import { sameRange } from '../bytes.ts';
import { sameLengthRedaction } from './binary-answer.ts';

/** How a streamed body is framed. */
export type StreamFraming = 'sse' | 'ndjson' | 'eventstream';

/** What of the store's redactor masking a stream needs. */
export interface StreamMasks {
  /** The mask of a credential found across pieces (keyed under the store's salt). */
  mask(value: string): string;
  /** A JSON value with secret members and credential-looking strings masked (the same value when nothing changed). */
  value<T>(value: T): T;
  /** Raw bytes redacted as redaction does a body (a frame payload that is not JSON). */
  bytes(body: Uint8Array, contentType?: string): Uint8Array;
  /** Values the request carried, masked wherever they stand, like credentials (src/store/echo-redact.ts). */
  readonly echoes?: readonly string[];
  /** Whether a member of this name is a secret: its string value in a stream's joined JSON text is masked (tool-call arguments). */
  isSecretField?(name: string): boolean;
}

/** One event of a stream as JSON documents: `kind` tells its text streams apart (an event's name or type). */
export interface StreamEvent {
  kind: string;
  docs: unknown[];
}

/** A credential found across the pieces of one text stream: the events it spans (indices) and its text. */
export interface SplitCredential {
  first: number;
  last: number;
  text: string;
  /** Set when the text is the value of a secret-named member of JSON text (decoded), not a credential format. */
  member?: true;
}

/** What is looked for in a text stream's joined text: the echoes given, and members whose names this judges secret. */
interface Seek {
  echoes?: readonly string[];
  secretField?: (name: string) => boolean;
}

/**
 * A find in a joined text: where it begins, its text as it stands there, for a member's value the
 * value decoded, and for an AWS secret access key where its id begins (the two are one find).
 */
type Found = [number, string, string?, number?];

/** Quick test for JSON text with a member holding a string (`"name": "`): most text streams have none. */
const MEMBER_GATE = /"[ \t\n\r]*:[ \t\n\r]*"/;

/** A string of an event: in a parsed document (`holder[key]`), or as a JSON literal in a stream's text (`from`, `to`). */
interface Piece {
  text: string;
  event: number;
  holder?: Record<string, unknown> | unknown[];
  key?: string | number;
  /** The literal's place in the text, quotes included (from, to). */
  from?: number;
  to?: number;
}

/** An AWS access key id's length (`AKIA` and 16). */
const AWS_ID_LENGTH = 20;

/** Past this nesting a document's strings are not read as pieces (no provider's event comes near). */
const MAX_PIECE_DEPTH = 64;

/** The string members of each event, grouped by the event's kind and the member's place (`alone`: see textGroups; `every`: all of them). */
function textStreams(events: readonly StreamEvent[], alone = true, every = false): Piece[][] {
  const groups = new Map<string, Piece[]>();
  const visit = (v: unknown, path: string, event: number, depth: number): void => {
    if (v === null || typeof v !== 'object' || depth > MAX_PIECE_DEPTH) return;
    const at = (holder: Record<string, unknown> | unknown[], key: string | number, x: unknown, step: string | number = key): void => {
      const p = `${path}/${step}`;
      if (typeof x === 'string') {
        let g = groups.get(p);
        if (g === undefined) groups.set(p, (g = []));
        g.push({ holder, key, text: x, event });
      } else visit(x, p, event, depth + 1);
    };
    // An element that says its own `index` is placed by it (see lexedStreams).
    if (Array.isArray(v)) v.forEach((x, i) => at(v, i, x, ownIndex(x) ?? i));
    else for (const k of Object.keys(v)) at(v as Record<string, unknown>, k, (v as Record<string, unknown>)[k]);
  };
  events.forEach((e, i) => {
    e.docs.forEach((d, j) => {
      // A top-level `type` tells an event's text streams apart where the names are shared
      // (Responses' `delta` of output text and of function call arguments).
      const type = d !== null && typeof d === 'object' && !Array.isArray(d) && typeof (d as { type?: unknown }).type === 'string' ? (d as { type: string }).type : '';
      visit(d, `${e.kind}\u0000${j}\u0000${type}`, i, 0);
    });
  });
  return every ? [...groups.values()] : textGroups(groups, alone);
}

/** Whether a document holds an AWS access key id in a string (no allocation: asked of every event). */
function holdsId(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return v.indexOf('AKIA') >= 0 || v.indexOf('ASIA') >= 0;
  if (v === null || typeof v !== 'object' || depth > MAX_PIECE_DEPTH) return false;
  if (Array.isArray(v)) return v.some((x) => holdsId(x, depth + 1));
  for (const k in v) if (holdsId((v as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}

/** An array element's own `index` member (a non-negative integer), if it has one. */
function ownIndex(x: unknown): number | undefined {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return undefined;
  const k = (x as { index?: unknown }).index;
  return typeof k === 'number' && Number.isInteger(k) && k >= 0 && k <= 0xffff ? k : undefined;
}

/**
 * The groups that may be text arriving in pieces: a string the same in every event (an id, a
 * model name) is none. Nor is a string alone at its place, unless it holds JSON text with a
 * member (`"name": "`): a secret-named member's value in it is masked as in one string of a
 * JSON answer. No other redaction reads inside it, since the event's text has the member's
 * quotes escaped (a Responses stream's `arguments` in `response.completed`, written whole once).
 */
function textGroups(groups: Map<unknown, Piece[]>, alone = true): Piece[][] {
  return [...groups.values()].filter((g) => (g.length > 1 && g.some((p) => p.text !== g[0]!.text) && g.some((p) => p.event !== g[0]!.event)) || (alone && g.some(holdsMember)));
}

/** Whether a piece's text may hold a JSON member with a string value (its shortest: `"a":"b"`). */
const holdsMember = (p: Piece): boolean => p.text.length >= 7 && p.text.indexOf('"') >= 0 && MEMBER_GATE.test(p.text);

/**
 * CREDENTIAL's matches in a text, its PEM private key bodies, the places of the echoes given, and
 * the raw string values of secret-named members of JSON text in it (tool-call arguments streamed
 * a few characters an event, `{"password":"…"}`, which no single event holds whole): in order,
 * none overlapping.
 */
function credentialsIn(s: string, seek?: Seek): Found[] {
  const out: Found[] = [];
  let aws: Found[] | undefined;
  const echoes = seek?.echoes;
  const from = credentialFrom(s);
  // A PEM private key's body (its lines are runs of key characters, so a text without a long
  // run holds none): masked as one string's is (credential.ts), here across the pieces.
  const keys = from >= 0 ? privateKeysIn(s) : [];
  if (from >= 0) {
    // The pieces are JSON string text as sent (`\n` escapes in it).
    const view = searchedJsonText(s, from);
    CREDENTIAL.lastIndex = from;
    let id = false;
    // A bot token's `bot` and a connection string key's name are kept in view, as redaction keeps them in one string (maskCredential).
    for (let m = CREDENTIAL.exec(view); m !== null; m = CREDENTIAL.exec(view)) {
      const kept = keptInView(m[0]);
      out.push([m.index + kept, m[0].slice(kept)]);
      id ||= m[0].startsWith('AKIA') || m[0].startsWith('ASIA');
    }
    CREDENTIAL.lastIndex = 0;
    // An AWS secret access key beside its id (./aws-secret.ts): looked for only where an id is.
    if (id) aws = awsSecretsIn(s, view).map((x): Found => [x.index, x.text, undefined, x.id]);
  }
  const members = seek?.secretField !== undefined && MEMBER_GATE.test(s) ? membersIn(s, seek.secretField) : [];
  if ((echoes === undefined || echoes.length === 0) && members.length === 0 && keys.length === 0 && (aws === undefined || aws.length === 0)) return out;
  if (aws !== undefined) out.push(...aws);
  for (const e of echoes ?? []) for (let i = s.indexOf(e); i >= 0; i = s.indexOf(e, i + e.length)) out.push([i, e]);
  out.push(...members);
  for (const k of keys) out.push([k.index, k.text]);
  // By place, the longer first at one place (a member's value before a key at its start: it is the
  // whole value); one that overlaps a match kept before is left (it is masked with it).
  out.sort(([a, x, u], [b, y, v]) => a - b || y.length - x.length || (u === undefined ? 1 : 0) - (v === undefined ? 1 : 0));
  const kept: Found[] = [];
  for (const m of out) if (kept.length === 0 || kept[kept.length - 1]![0] + kept[kept.length - 1]![1].length <= m[0]) kept.push(m);
  return kept;
}

/**
 * The string values of secret-named members of JSON text (as redact.ts's embedded masking finds
 * them in one string): [where the raw value begins, the raw value, the value decoded]. Values
 * that are masks already or empty are left.
 */
function membersIn(s: string, secretField: (name: string) => boolean): Found[] {
  const out: Found[] = [];
  for (const m of s.matchAll(EMBEDDED_MEMBER)) {
    const v = embeddedSecret(m[1]!, m[3]!, secretField);
    if (v === undefined || isMask(v)) continue;
    out.push([m.index + m[0].length - m[3]!.length - 1, m[3]!, v]);
  }
  return out;
}

/**
 * Each text stream's pieces, its joined text's credentials that span two pieces or more (a
 * secret member's value wherever it lies: its name may be in another piece, where no single
 * event's redaction reads the two together), and where each piece starts in it.
 */
function spanning(groups: readonly Piece[][], seek?: Seek): { pieces: Piece[]; starts: number[]; found: Found[] }[] {
  const out: { pieces: Piece[]; starts: number[]; found: Found[] }[] = [];
  for (const pieces of groups) {
    const starts: number[] = [];
    let n = 0;
    for (const p of pieces) {
      starts.push(n);
      n += p.text.length;
    }
    const joined = pieces.map((p) => p.text).join('');
    // An AWS secret whose id is in another piece: no one event's redaction reads the two together.
    const found = credentialsIn(joined, seek).filter(([a, t, v, id]) => v !== undefined || pieceAt(starts, Math.min(a, id ?? a)) !== pieceAt(starts, Math.max(a + t.length, id === undefined ? 0 : id + AWS_ID_LENGTH) - 1));
    if (found.length > 0) out.push({ pieces, starts, found });
  }
  return out;
}

/** The piece holding character i of the joined text (the last piece starting at or before it). */
function pieceAt(starts: readonly number[], i: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The credentials that no single event of a stream holds: each with the first and last event it
 * spans. What `tapedeck scan` reports of a stream recorded before they were masked. With
 * `secretField`, also the values of secret-named members of the JSON text the pieces join into
 * (`member: true`, the value decoded).
 *
 * @example
 * splitCredentials([{ kind: '', docs: [{ t: 'key sk-pr' }] }, { kind: '', docs: [{ t: 'oj-abcdefghijklmnopqrstuvwx' }] }])
 * // [{ first: 0, last: 1, text: 'sk-proj-abcdefghijklmnopqrstuvwx' }]
 * splitCredentials([{ kind: '', docs: [{ a: '{"password":"hun' }] }, { kind: '', docs: [{ a: 'ter2"}' }] }], (n) => n === 'password')
 * // [{ first: 0, last: 1, text: 'hunter2', member: true }]
 */
export function splitCredentials(events: readonly StreamEvent[], secretField?: (name: string) => boolean): SplitCredential[] {
  const out: SplitCredential[] = [];
  // Not the strings alone at their place: what one event holds whole, `tapedeck scan` reads in that event.
  for (const { pieces, starts, found } of spanning(textStreams(events, false), { secretField })) {
    // An AWS secret spans the events from its id's to its own.
    for (const [a, text, v, id] of found) out.push({ first: pieces[pieceAt(starts, Math.min(a, id ?? a))]!.event, last: pieces[pieceAt(starts, Math.max(a + text.length, id === undefined ? 0 : id + AWS_ID_LENGTH) - 1)]!.event, text: v ?? text, ...(v === undefined ? {} : { member: true as const }) });
  }
  // An AWS secret in another text of the answer than its id's (pairsAcross).
  if (events.some((e) => e.docs.some(holdsId))) for (const x of secretsAcross(textStreams(events, false, true))) out.push({ first: x.event, last: x.event, text: x.value });
  return out;
}

/**
 * Masks, in place in the events' documents, the credentials that span two events or more (see
 * the top); returns the indices of the events changed.
 *
 * @example
 * const events = [{ kind: '', docs: [{ t: 'key sk-pr' }] }, { kind: '', docs: [{ t: 'oj-abcdefghijklmnopqrstuvwx!' }] }]
 * maskSplitCredentials(events, (v) => '[REDACTED]') // Set {0, 1}; the texts are now 'key [REDACTED]' and '!'
 */
export function maskSplitCredentials(events: readonly StreamEvent[], mask: (value: string) => string, echoes?: readonly string[], secretField?: (name: string) => boolean): Set<number> {
  const changed = new Set<number>();
  const groups = textStreams(events);
  for (const [p, text] of maskedPieces(groups, mask, { echoes, secretField })) {
    (p.holder as Record<string | number, unknown>)[p.key!] = text;
    changed.add(p.event);
  }
  if (events.some((e) => e.docs.some(holdsId)))
    for (const [p, text] of pairsAcross(textStreams(events, true, true), mask)) {
      (p.holder as Record<string | number, unknown>)[p.key!] = text;
      changed.add(p.event);
    }
  return changed;
}

/**
 * The AWS secret access keys of an answer's text streams (`groups`) that stand a short way from
 * an id in another of them (see pairsAcross), each once, with the first event its stream holds.
 */
function secretsAcross(groups: readonly Piece[][]): { text: string; value: string; event: number }[] {
  if (groups.length < 2) return [];
  // Each stream's text at its first event, so the answer's texts stand in the order it gave them.
  const sorted = [...groups].sort((a, b) => a[0]!.event - b[0]!.event);
  const texts = sorted.map((g) => g.map((p) => p.text).join(''));
  const ends: number[] = [];
  let n = 0;
  for (const t of texts) ends.push((n += t.length + 1));
  const all = texts.join('\n');
  const streamAt = (i: number): number => ends.findIndex((e) => i < e);
  const out: { text: string; value: string; event: number }[] = [];
  for (const x of awsSecretsIn(all, searchedJsonText(all, 0))) {
    const at = streamAt(x.index);
    if (at !== streamAt(x.id) && !out.some((y) => y.text === x.text)) out.push({ text: x.text, value: x.value, event: sorted[at]![0]!.event });
  }
  return out;
}

/**
 * An AWS secret access key that stands in another text stream of the answer than its id (the id
 * in the model's text, the secret in a tool call's arguments just after it): each stream is read
 * alone elsewhere, and no event holds the two, so the secret was stored as sent. Read as the
 * answer's texts one after another (`groups`: every string's stream), as a whole answer's JSON
 * reads them; the secret is masked wherever it stands, keyed as the id's secret is. The pieces
 * whose text changes, with their new text. Asked only of a stream that holds an id.
 */
function pairsAcross(groups: readonly Piece[][], mask: (value: string) => string): Map<Piece, string> {
  const out = new Map<Piece, string>();
  const secrets = secretsAcross(groups);
  // Whole in one piece: masked there; cut across pieces: as an echo is, across them.
  const split: string[] = [];
  for (const x of secrets) {
    let whole = false;
    for (const g of groups)
      for (const p of g) {
        const t = out.get(p) ?? p.text;
        if (t.indexOf(x.text) < 0) continue;
        whole = true;
        out.set(p, t.split(x.text).join(mask(x.value)));
      }
    if (!whole) split.push(x.text);
  }
  if (split.length > 0) for (const [p, t] of maskedPieces(groups, mask, { echoes: split })) if (!out.has(p)) out.set(p, t);
  return out;
}

/** The pieces whose text masking the credentials across them changes, with their new text. */
function maskedPieces(groups: readonly Piece[][], mask: (value: string) => string, seek: Seek): Map<Piece, string> {
  const out = new Map<Piece, string>();
  for (const { pieces, starts, found } of spanning(groups, seek)) {
    const texts = pieces.map((p) => p.text);
    // Right to left: an edit leaves the characters before it where they were.
    for (let m = found.length - 1; m >= 0; m--) {
      const [a, text, v] = found[m]!;
      const b = a + text.length;
      for (let i = pieceAt(starts, a); i < pieces.length && starts[i]! < b; i++) {
        const s = starts[i]!;
        const lo = Math.max(a, s) - s;
        const hi = Math.min(b, s + pieces[i]!.text.length) - s;
        if (hi <= lo) continue;
        // A member's value is masked decoded, as redact.ts masks it in one string (a mask needs no escapes).
        texts[i] = texts[i]!.slice(0, lo) + (s <= a ? mask(v ?? text) : '') + texts[i]!.slice(hi);
      }
    }
    pieces.forEach((p, i) => {
      if (texts[i] !== p.text) out.set(p, texts[i]!);
    });
  }
  return out;
}

/**
 * maskSplitCredentials for events given as JSON texts (a realtime session's server events):
 * the new text of each event that changed, by index. Texts that are no JSON document (and
 * undefined ones: events that are no text) take no part.
 *
 * @example
 * maskSplitTexts(['{"delta":"key sk-pr"}', '{"delta":"oj-abcdefghijklmnopqrstuvwx"}'], (v) => '[REDACTED]')
 * // Map { 0 => '{"delta":"key [REDACTED]"}', 1 => '{"delta":""}' }
 */
export function maskSplitTexts(texts: readonly (string | undefined)[], mask: (value: string) => string, echoes?: readonly string[], secretField?: (name: string) => boolean): Map<number, string> {
  const events = texts.map((t): StreamEvent => {
    const doc = t === undefined ? undefined : documentOf(t);
    return { kind: '', docs: doc ? [doc] : [] };
  });
  const out = new Map<number, string>();
  for (const i of maskSplitCredentials(events, mask, echoes, secretField)) out.set(i, JSON.stringify(events[i]!.docs[0]));
  return out;
}

/**
 * How a streamed body is framed, by its content type (sniffed when there is none), or
 * undefined for a body that is no stream.
 *
 * @example
 * streamFramingOf('text/event-stream; charset=utf-8', body) // 'sse'
 */
export function streamFramingOf(contentType: string | undefined, body: Uint8Array): StreamFraming | undefined {
  const t = (contentType ?? '').toLowerCase();
  if (t.startsWith('text/event-stream')) return 'sse';
  // Cohere's v1 chat stream is NDJSON labelled application/stream+json.
  if (/^application\/(?:(?:x-)?(?:ndjson|jsonl|jsonlines|json-seq)\b|stream\+json\b)/.test(t)) return 'ndjson';
  if (t.startsWith('application/vnd.amazon.eventstream')) return 'eventstream';
  if (t !== '') return undefined;
  if (mayBeEventStream(body)) return 'eventstream';
  const head = latin1Text(body.subarray(0, 6));
  return head.startsWith('data:') || head.startsWith('event:') ? 'sse' : undefined;
}

/** A redacted stream: its bytes, and where each of its units (events, lines, frames) ends before and after. */
export interface RedactedStream {
  body: Uint8Array;
  /** End offsets of the units in the body as it came. */
  before: number[];
  /** End offsets of the same units in `body`. */
  after: number[];
}

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();

/**
 * A JSON document (an object or an array), or undefined. The redactor and `tapedeck scan` read
 * text as JSON through it.
 *
 * @example
 * documentOf(' {"a":1} ')        // { a: 1 }
 * documentOf('[REDACTED:3f9a…]') // undefined, without a parse
 */
export function documentOf(text: string): object | undefined {
  const t = text.trim();
  const open = t[0];
  if (open !== '{' && open !== '[') return undefined;
  // Text that cannot be a document is not parsed: the parser's error costs ~10 us, and every
  // redacted header's `[REDACTED:…]` mask starts with a bracket.
  if (t.at(-1) !== (open === '{' ? '}' : ']') || isMask(t)) return undefined;
  try {
    const v = JSON.parse(t) as unknown;
    return v !== null && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The end offsets of a body's units: server-sent events (each through the blank line that ends
 * it) or lines (NDJSON). A last unit without its end runs to the body's end.
 */
export function unitEnds(body: Uint8Array, framing: 'sse' | 'ndjson'): number[] {
  const ends: number[] = [];
  let lineStart = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== 0x0a && c !== 0x0d) continue;
    const blank = i === lineStart;
    if (c === 0x0d && body[i + 1] === 0x0a) i++;
    lineStart = i + 1;
    if (framing === 'ndjson' || blank) ends.push(i + 1);
  }
  if (ends.at(-1) !== body.length && body.length > 0) ends.push(body.length);
  return ends;
}

/** A server-sent event or NDJSON line: its kind, and where its one JSON object lies in the body's text. */
interface TextUnit {
  kind: string;
  /** Where the object's text lies in the text (from === to: none). */
  from: number;
  to: number;
}

/**
 * The units of a stream's text (see unitEnds) that hold a JSON object: an NDJSON line that is
 * one, or a server-sent event whose one data line is one (an event of several data lines is one
 * document split over them: rare for JSON, left as it is). Lines are found by indexOf, not split.
 */
function textUnits(text: string, framing: 'sse' | 'ndjson'): TextUnit[] {
  const units: TextUnit[] = [];
  let kind = '';
  let from = 0;
  let to = 0;
  let dataLines = 0;
  // The next carriage return, found again only once passed: most streams have none, and a
  // search for one from every line read the rest of the text each time.
  let cr = -1;
  for (let at = 0; at < text.length; ) {
    let nl = text.indexOf('\n', at);
    if (cr !== Infinity && cr < at) {
      cr = text.indexOf('\r', at);
      if (cr < 0) cr = Infinity;
    }
    if (cr !== Infinity && (nl < 0 || cr < nl)) nl = cr;
    const lineEnd = nl < 0 ? text.length : nl;
    const next = nl < 0 ? text.length : text.charCodeAt(nl) === 0x0d && text.charCodeAt(nl + 1) === 0x0a ? nl + 2 : nl + 1;
    if (framing === 'ndjson') {
      if (text.charCodeAt(at) === 0x7b) units.push({ kind: '', from: at, to: lineEnd });
    } else if (lineEnd === at) {
      if (dataLines === 1) units.push({ kind, from, to });
      kind = '';
      dataLines = 0;
    } else if (text.startsWith('data:', at)) {
      dataLines++;
      from = at + (text.charCodeAt(at + 5) === 0x20 ? 6 : 5);
      to = lineEnd;
      if (text.charCodeAt(from) !== 0x7b) dataLines = 2; // not an object ([DONE], text): no document
    } else if (text.startsWith('event:', at)) kind = text.slice(at + 6, lineEnd).trim();
    at = next;
  }
  if (framing === 'sse' && dataLines === 1) units.push({ kind, from, to });
  return units;
}

/**
 * The string values of each unit's JSON text, grouped by the unit's kind and the value's place,
 * read from the text without parsing it: a recorded stream is read whole at every record, and
 * JSON.parse made an object of every event (a 10,000-entry HAR import, a fifth of its answers
 * streamed: 0.47x -> 0.38x its baseline). A value's place is a 32-bit hash of its path (member
 * names, array indices) made as the text is read, so no name becomes a string; two places of
 * one hash (a chance of one in 2^32 for a pair) would be read as one stream. Text that is no
 * JSON gives pieces that join no other's, at worst.
 *
 * An array element that says its own `index` (OpenAI's `choices[]` and `tool_calls[]`) is placed
 * by it, not by where it stands: parallel tool calls stream their arguments interleaved, each
 * event holding one call at `tool_calls[0]`, and joined by position two calls' pieces made one
 * text of neither (a `password` member or a key in either was found in no text, and written to
 * disk). OpenAI writes `index` first; an element whose strings come before its `index` has its
 * event read again, placed by what the first reading found.
 */
function lexedStreams(text: string, units: readonly TextUnit[], every = false): Piece[][] {
  const groups = new Map<number, Piece[]>();
  const lexer = new UnitLexer(text, groups);
  for (let event = 0; event < units.length; event++) {
    if (lexer.lex(units[event]!, event, undefined)) {
      // Read again with each element's index known from the start: this event's pieces so far
      // (the last of each group they went to) are taken back first.
      for (const g of lexer.touched) while (g.length > 0 && g[g.length - 1]!.event === event) g.pop();
      lexer.lex(units[event]!, event, lexer.indices);
    }
  }
  return every ? [...groups.values()] : textGroups(groups);
}

/** FNV-1a of `index`, as the lexer hashes a member name. */
const INDEX_NAME = (() => {
  let h = 0x811c9dc5;
  for (const c of 'index') h = Math.imul(h ^ c.charCodeAt(0), 0x01000193);
  return h;
})();

/** The lexer of one unit's JSON text at a time (see lexedStreams); its arrays are reused between units. */
class UnitLexer {
  // Per open container: is it an array, its index, its path's hash, the hash of its last member
  // name, and how many pieces this unit had read when it opened.
  private readonly arr: boolean[] = [];
  private readonly idx: number[] = [];
  private readonly at: number[] = [];
  private readonly named: number[] = [];
  private readonly piecesAt: number[] = [];
  /** Per open container: the order its bracket opened in, in this unit. */
  private readonly openedAt: number[] = [];
  /** The groups the last unit put pieces in. */
  readonly touched: Piece[][] = [];
  /** The last unit's elements that said their index: by the order their `{` opened in, the index. */
  readonly indices = new Map<number, number>();

  constructor(
    private readonly text: string,
    private readonly groups: Map<number, Piece[]>,
  ) {}

  /**
   * Reads one unit; with `placed`, each element is placed by the index it says from its `{` on.
   * True when an element said an index other than its position after strings of it were read
   * (so they were placed by position): then it must be read again, with `indices`.
   */
  lex(u: TextUnit, event: number, placed: ReadonlyMap<number, number> | undefined): boolean {
    const { text, groups, arr, idx, at, named, piecesAt, openedAt, touched, indices } = this;
    touched.length = 0;
    if (placed === undefined) indices.clear();
    let again = false;
    let pieces = 0;
    let opened = 0;
    let depth = 0;
    let expectKey = false;
    let root = 0x811c9dc5;
    for (let i = 0; i < u.kind.length; i++) root = Math.imul(root ^ u.kind.charCodeAt(i), 0x01000193);
    let p = u.from;
    lex: while (p < u.to) {
      const c = text.charCodeAt(p);
      // Digits, letters of literals and white space: one test, not five.
      if (c >= 0x80 || STRUCTURAL[c] === 0) {
        p++;
        continue;
      }
      if (c === 0x22) {
        if (expectKey) {
          // A member name, to its closing quote a character at a time, hashed on the way: names
          // are short, and a search call for each cost more than reading them. An escape's
          // backslash and the character after it are read together (an escaped quote closes
          // nothing).
          let e = p + 1;
          let h = 0x811c9dc5;
          for (;;) {
            if (e >= u.to) break lex;
            let ch = text.charCodeAt(e);
            if (ch === 0x22) break;
            if (ch === 0x5c) {
              h = Math.imul(h ^ ch, 0x01000193);
              if (++e >= u.to) break lex;
              ch = text.charCodeAt(e);
            }
            h = Math.imul(h ^ ch, 0x01000193);
            e++;
          }
          named[depth - 1] = h;
          expectKey = false;
          p = e + 1;
          // An array element's own `index`: its place from here on (see lexedStreams).
          if (h === INDEX_NAME && placed === undefined && depth >= 2 && arr[depth - 2] && !arr[depth - 1]) {
            const k = indexValue(text, p, u.to);
            if (k >= 0 && k !== idx[depth - 2]) {
              indices.set(openedAt[depth - 1]!, k);
              at[depth - 1] = placeOf(at[depth - 2]!, k);
              if (pieces > piecesAt[depth - 1]!) again = true;
            }
          }
          continue;
        }
        // A value: the closing quote is the next one not escaped by an odd run of backslashes.
        let e = text.indexOf('"', p + 1);
        let escaped = false;
        while (e >= 0 && e < u.to) {
          let b = e - 1;
          while (text.charCodeAt(b) === 0x5c) b--;
          if ((e - 1 - b) % 2 === 0) break;
          escaped = true;
          e = text.indexOf('"', e + 1);
        }
        if (e < 0 || e >= u.to) break;
        if (depth <= MAX_PIECE_DEPTH) {
          const inner = text.slice(p + 1, e);
          let value: string;
          try {
            value = escaped || inner.includes('\\') ? (JSON.parse(text.slice(p, e + 1)) as string) : inner;
          } catch {
            break;
          }
          const place = depth === 0 ? root : placeOf(at[depth - 1]!, arr[depth - 1] ? idx[depth - 1]! : named[depth - 1]!);
          let g = groups.get(place);
          if (g === undefined) groups.set(place, (g = []));
          if (g.length === 0 || g[g.length - 1]!.event !== event) touched.push(g);
          g.push({ text: value, event, from: p, to: e + 1 });
          pieces++;
        }
        p = e + 1;
        continue;
      }
      if (c === 0x7b || c === 0x5b) {
        const k = c === 0x7b && depth > 0 && arr[depth - 1] && placed !== undefined ? placed.get(opened) : undefined;
        at[depth] = depth === 0 ? root : placeOf(at[depth - 1]!, k ?? (arr[depth - 1] ? idx[depth - 1]! : named[depth - 1]!));
        arr[depth] = c === 0x5b;
        idx[depth] = 0;
        named[depth] = 0;
        piecesAt[depth] = pieces;
        openedAt[depth] = opened;
        opened++;
        depth++;
        expectKey = c === 0x7b;
      } else if (c === 0x7d || c === 0x5d) {
        depth--;
        expectKey = false;
        if (depth < 0) break;
      } else if (c === 0x2c && depth > 0) {
        if (arr[depth - 1]) idx[depth - 1]!++;
        else expectKey = true;
      }
      p++;
    }
    return again;
  }
}

/**
 * The non-negative integer literal after a member name's closing quote (`": 3`), or -1 for
 * any other value.
 */
function indexValue(text: string, p: number, to: number): number {
  while (p < to && (text.charCodeAt(p) === 0x20 || text.charCodeAt(p) === 0x3a || text.charCodeAt(p) === 0x09 || text.charCodeAt(p) === 0x0a || text.charCodeAt(p) === 0x0d)) p++;
  let k = -1;
  for (; p < to; p++) {
    const d = text.charCodeAt(p) - 0x30;
    if (d < 0 || d > 9) break;
    k = (k < 0 ? 0 : k * 10) + d;
    if (k > 0xffff) return -1;
  }
  const c = text.charCodeAt(p);
  return c === 0x2c || c === 0x7d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 ? k : -1;
}

/** The characters of JSON text the lexer acts on: a quote, brackets, braces and the comma. */
const STRUCTURAL = new Uint8Array(128);
for (const c of '"{}[],') STRUCTURAL[c.charCodeAt(0)] = 1;

/**
 * The hash of a place one step (a member name's hash, or an index) below a container's: a
 * 32-bit integer, which a Map keys without making a number object (a 52-bit hash made one for
 * every string of every event). The chain of a path was 32 bits wide before as well.
 */
function placeOf(container: number, step: number): number {
  let x = Math.imul(container ^ Math.imul(step, 0x9e3779b1), 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return x ^ (x >>> 16);
}

/** The member judge of a redactor, bound (a redactor's methods are closures, but a StreamMasks may be any object). */
const secretFieldOf = (masks: StreamMasks): ((name: string) => boolean) | undefined => (masks.isSecretField === undefined ? undefined : (n) => masks.isSecretField!(n));
const seekOf = (masks: StreamMasks): Seek => ({ echoes: masks.echoes, secretField: secretFieldOf(masks) });

/** Server-sent events or NDJSON lines with the credentials across them masked. */
function redactTextStream(body: Uint8Array, framing: 'sse' | 'ndjson', masks: StreamMasks, ascii?: string): RedactedStream {
  const text = ascii !== undefined && ascii.length === body.length ? ascii : utf8Text.decode(body);
  const units = textUnits(text, framing);
  if (units.length < 2) return { body, before: [], after: [] };
  // With an AWS access key id in it, every string's stream is lexed, for a secret in another (pairsAcross).
  const id = text.indexOf('AKIA') >= 0 || text.indexOf('ASIA') >= 0;
  const every = id ? lexedStreams(text, units, true) : undefined;
  const masked = maskedPieces(every ? textGroups(new Map(every.map((g, i) => [i, g]))) : lexedStreams(text, units), masks.mask, seekOf(masks));
  if (every) {
    for (const [p, t] of masked) p.text = t;
    for (const [p, t] of pairsAcross(every, masks.mask)) masked.set(p, t);
  }
  const edits = [...masked].sort(([a], [b]) => a.from! - b.from!);
  if (edits.length === 0) return { body, before: [], after: [] };
  let out = '';
  let start = 0;
  for (const [p, t] of edits) {
    out += text.slice(start, p.from!) + JSON.stringify(t);
    start = p.to!;
  }
  const redacted = utf8.encode(out + text.slice(start));
  // Where the units end in bytes, for the chunks' boundaries: counted again in each body, so
  // an event's characters past ASCII are counted as their bytes.
  return { body: redacted, before: unitEnds(body, framing), after: unitEnds(redacted, framing) };
}

/**
 * Base64 text of a JSON document (an InvokeModel stream chunk's `bytes`), decoded.
 *
 * @example
 * base64Document('eyJhIjoxfQ==') // { a: 1 }
 */
export function base64Document(s: unknown): object | undefined {
  if (typeof s !== 'string' || s.length < 8 || s.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(s)) return undefined;
  return documentOf(Buffer.from(s, 'base64').toString('utf8'));
}

/** An AWS event-stream frame's payload as JSON: the payload, and the chunk inside it (`bytes`) if it is base64 JSON. */
export interface FrameEvent extends StreamEvent {
  message: EventStreamMessage;
  payload?: Record<string, unknown>;
  chunk?: object;
}

/**
 * An AWS event-stream frame as an event of its stream: its kind (event or exception type), and
 * its JSON payload with an InvokeModel chunk's base64 JSON read in its place (the chunk's
 * strings are the stream's text; its base64 is none). The redactor and `tapedeck scan` read
 * frames alike through it.
 *
 * @example
 * frameEvent(message).docs // [payload] or [payload without `bytes`, chunk]
 */
export function frameEvent(message: EventStreamMessage): FrameEvent {
  const kind = headerString(message, ':event-type') ?? headerString(message, ':exception-type') ?? '';
  const doc = documentOf(utf8Text.decode(message.body));
  if (doc === undefined || Array.isArray(doc)) return { kind, docs: [], message };
  const payload = doc as Record<string, unknown>;
  const chunk = base64Document(payload.bytes);
  return chunk ? { kind, docs: [{ ...payload, bytes: undefined }, chunk], message, payload, chunk } : { kind, docs: [payload], message, payload };
}

/** AWS event-stream frames redacted as JSON and encoded again where they changed; undefined if the body does not decode. */
function redactEventStream(body: Uint8Array, masks: StreamMasks): RedactedStream | undefined {
  let messages: EventStreamMessage[];
  try {
    messages = decodeEventStream(body);
  } catch {
    return undefined;
  }
  const units = messages.map(frameEvent);
  const split = maskSplitCredentials(units, masks.mask, masks.echoes, secretFieldOf(masks));
  const before: number[] = [];
  const after: number[] = [];
  const parts: Uint8Array[] = [];
  let start = 0;
  let n = 0;
  let any = false;
  for (const [i, u] of units.entries()) {
    // Frame lengths, from the prelude: the decoder checked them.
    const total = ((body[start]! << 24) | (body[start + 1]! << 16) | (body[start + 2]! << 8) | body[start + 3]!) >>> 0;
    const end = start + total;
    before.push(end);
    let payload: Uint8Array | undefined;
    if (u.payload === undefined) {
      const masked = masks.bytes(u.message.body);
      if (masked !== u.message.body) payload = masked;
    } else {
      const outer = u.docs[0] as Record<string, unknown>;
      const red = masks.value(outer);
      const chunk = u.chunk ? masks.value(u.chunk) : undefined;
      if (split.has(i) || red !== outer || chunk !== u.chunk) {
        const doc = u.chunk ? { ...red, bytes: Buffer.from(JSON.stringify(chunk), 'utf8').toString('base64') } : red;
        // The payload's members in their order, `bytes` where it was.
        const ordered = u.chunk ? Object.fromEntries(Object.keys(u.payload).map((k) => [k, (doc as Record<string, unknown>)[k]])) : doc;
        payload = utf8.encode(JSON.stringify(ordered));
      }
    }
    const part = payload === undefined ? body.subarray(start, end) : encodeEventStreamMessage({ headers: u.message.headers, body: payload });
    if (payload !== undefined) any = true;
    parts.push(part);
    n += part.length;
    after.push(n);
    start = end;
  }
  if (!any) return { body, before, after: before };
  return { body: Buffer.concat(parts, n), before, after };
}

/**
 * A streamed answer with its credentials masked across events (server-sent events, NDJSON), or
 * frame by frame and across frames (AWS event-stream); undefined for a body that is no stream
 * or an event stream that does not decode (redacted as text, as before). The body is the same
 * array when nothing changed. `ascii`: the body's text when every byte is ASCII, if the caller
 * has it (not made again).
 *
 * @example
 * const out = redactStream(body, 'text/event-stream', redactor({ salt }))
 * out?.body // the events, a key cut across them masked
 */
export function redactStream(body: Uint8Array, contentType: string | undefined, masks: StreamMasks, ascii?: string): (RedactedStream & { framing: StreamFraming }) | undefined {
  const framing = streamFramingOf(contentType, body);
  if (framing === undefined) return undefined;
  const out = framing === 'eventstream' ? redactEventStream(body, masks) : redactTextStream(body, framing, masks, ascii);
  return out && { ...out, framing };
}

/**
 * A recorded answer's bytes redacted whole: a stream first (see redactStream), then, for any body
 * but AWS event-stream frames (redacted as frames already), by the redactor as a body. Returns
 * the bytes (the same array when nothing changed) and the stream's units, if it was one.
 *
 * @example
 * redactAnswerBody(bytes, 'text/event-stream', redactor({ salt })).body
 */
export function redactAnswerBody(body: Uint8Array, contentType: string | undefined, masks: StreamMasks & { bytes(body: Uint8Array, contentType?: string, known?: { ascii?: string; parsed?: { value: unknown } }): Uint8Array }, known?: { ascii?: string; parsed?: { value: unknown } }): { body: Uint8Array; stream?: RedactedStream & { framing: StreamFraming } } {
  // Text in UTF-16 (its charset declared, or a byte order mark): every other check reads bytes as
  // UTF-8 or Latin-1, where a UTF-16 key is its characters with a NUL between them, and no key
  // format matched it. Redacted as the same text in UTF-8, then written back in its encoding.
  const wide = utf16Of(body, contentType);
  if (wide !== undefined) {
    const bom = (wide === 'le' && body[0] === 0xff && body[1] === 0xfe) || (wide === 'be' && body[0] === 0xfe && body[1] === 0xff) ? 2 : 0;
    const text = new TextDecoder(wide === 'le' ? 'utf-16le' : 'utf-16be').decode(body.subarray(bom));
    const asUtf8 = (contentType ?? 'text/plain').replace(/;\s*charset=[^;]*/i, '') + '; charset=utf-8';
    const inner = redactAnswerBody(utf8.encode(text), asUtf8, masks);
    const back = utf8Text.decode(inner.body);
    if (back === text) return { body };
    const out = Buffer.from(back, 'utf16le');
    if (wide === 'be') out.swap16();
    return { body: bom === 0 ? out : Buffer.concat([body.subarray(0, 2), out]) };
  }
  const stream = redactStream(body, contentType, masks, known?.ascii);
  if (stream?.framing === 'eventstream') return { body: stream.body, stream };
  const input = stream?.body ?? jsonArrayMasked(body, contentType, masks.mask, masks.echoes, secretFieldOf(masks)) ?? body;
  const red = masks.bytes(input, contentType, input === body ? known : undefined);
  // A file (audio, an image, a PDF) keeps its length: its internal sizes must still hold.
  const out = stream ? red : sameLengthRedaction(input, red, contentType, (b) => masks.bytes(b, contentType));
  return stream ? { body: out, stream } : { body: out };
}

/**
 * Whether a body is UTF-16 text, and its byte order: by its content type's charset (`utf-16le`,
 * `utf-16be`, or `utf-16`, ordered by its byte order mark, big-endian without one), or, with no
 * charset, by a byte order mark alone. Undefined for any other body.
 */
function utf16Of(body: Uint8Array, contentType: string | undefined): 'le' | 'be' | undefined {
  // Every answer comes here: most are told apart by their first byte and a short search.
  if (body[0] !== 0xff && body[0] !== 0xfe && (contentType === undefined || !/utf-16/i.test(contentType))) return undefined;
  const charset = /;\s*charset="?([\w-]+)/i.exec(contentType ?? '')?.[1]?.toLowerCase();
  if (charset === 'utf-16le') return 'le';
  if (charset === 'utf-16be') return 'be';
  const bom = body[0] === 0xff && body[1] === 0xfe ? 'le' : body[0] === 0xfe && body[1] === 0xff ? 'be' : undefined;
  if (charset === 'utf-16') return bom ?? 'be';
  // A mark alone is trusted only for text (audio or an image may open with those two bytes).
  const textual = contentType === undefined || /^\s*(?:text\/|application\/(?:[\w.-]+\+)?(?:json|xml)\b)/i.test(contentType);
  return charset === undefined && textual && body.length % 2 === 0 ? bom : undefined;
}

/**
 * A JSON array answer whose objects are a stream's events (Gemini's streamGenerateContent
 * without `alt=sse` sends one array, an element at a time) with a key cut across its elements
 * masked, written again; undefined when it is none or nothing changed. Only a body whose JSON
 * starts with `[` is parsed: other JSON answers are objects.
 */
function jsonArrayMasked(body: Uint8Array, contentType: string | undefined, mask: (value: string) => string, echoes?: readonly string[], secretField?: (name: string) => boolean): Uint8Array | undefined {
  if (contentType !== undefined && !/[/+]json\b/i.test(contentType)) return undefined;
  let i = 0;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++;
  if (body[i] !== 0x5b) return undefined;
  const doc = documentOf(utf8Text.decode(body));
  if (!Array.isArray(doc) || doc.length < 2) return undefined;
  const events: StreamEvent[] = doc.map((d: unknown) => ({ kind: '', docs: d !== null && typeof d === 'object' ? [d] : [] }));
  return maskSplitCredentials(events, mask, echoes, secretField).size > 0 ? utf8.encode(JSON.stringify(doc)) : undefined;
}

/**
 * Chunk boundaries (end offsets, as recorded) moved to the same places in a redacted stream: a
 * boundary between two units stays between them; one inside a unit that changed moves to the
 * unit's end. `final` is the redacted body, `ends` its units' ends (which must be as many as
 * `before`), undefined when they are not.
 *
 * @example
 * remapChunkEnds([10, 25], [10, 25], [10, 20], body, body2) // [10, 20]
 */
export function remapChunkEnds(chunkEnds: readonly number[], before: readonly number[], after: readonly number[], original: Uint8Array, final: Uint8Array): number[] | undefined {
  if (before.length !== after.length) return undefined;
  const out: number[] = [];
  let u = 0;
  for (const b of chunkEnds) {
    while (u < before.length && before[u]! < b) u++;
    if (u >= before.length) {
      out.push(final.length);
      continue;
    }
    const oldStart = u === 0 ? 0 : before[u - 1]!;
    const newStart = u === 0 ? 0 : after[u - 1]!;
    if (b === before[u]) out.push(after[u]!);
    else if (before[u]! - oldStart === after[u]! - newStart && sameRange(original, oldStart, final, newStart, before[u]! - oldStart)) out.push(newStart + (b - oldStart));
    else out.push(after[u]!);
  }
  return out;
}

/**
 * A recorded answer as the proxy and createFetch store it (src/proxy/deck.ts, recordOf; `known`:
 * the body's text and parse where the caller has them; `masks`: the redactor, with the request's
 * own secrets). Response headers are redacted like request headers. A body is kept byte for byte
 * unless it carries a credential-looking string (an answer that echoes a key from the prompt):
 * then the credential is masked, chunk by chunk so stream boundaries survive. A stream's key cut
 * across its events (one text delta each) is masked across them, and AWS event-stream frames are
 * redacted as frames (above); chunk boundaries then stay between the same events, or move to the
 * end of an event that changed. When neither keeps them, the stream is stored as one chunk,
 * because exact bytes on disk matter less than the key never reaching it.
 *
 * @example
 * const stored = redactedResponse(response, {}, echoing(redactor(), req))
 */
export function redactedResponse(r: HttpRecord['response'], known: KnownBody, masks: EchoingRedactor): HttpRecord['response'] {
  const headers = masks.headers(r.headers);
  if (masks.keepSecrets) return { ...r, headers };
  const ct = r.headers['content-type'];
  const type = ct === undefined ? undefined : String(ct);
  // The whole body, whatever number of chunks it came in: a secret member of a JSON answer
  // (a token endpoint's access_token sent in two writes) is only seen in the whole.
  const { body, stream } = redactAnswerBody(r.body, type, masks, known);
  if (body === r.body) return { ...r, headers };
  if (!r.chunks) return { ...r, headers, body };
  // Masked in place (a file keeps its length): every chunk ends where it did.
  if (stream === undefined && body.length === r.body.length) return { ...r, headers, body };
  const one = { status: r.status, ...(r.statusText ? { statusText: r.statusText } : {}), headers, body };
  if (stream === undefined || (stream.body === r.body && stream.framing !== 'eventstream')) {
    // Credentials each inside one chunk: masked chunk by chunk, the boundaries as they were.
    const masked = latin1Text(body);
    const whole = latin1Text(r.body);
    const chunks: [number, number][] = [];
    let start = 0;
    let end = 0;
    let joined = '';
    for (const [ms, stop] of r.chunks) {
      const piece = masks.text(whole.slice(start, stop));
      joined += piece;
      end += piece.length;
      chunks.push([ms, end]);
      start = stop;
    }
    if (joined === masked) return { ...r, headers, body, chunks };
    if (stream === undefined) return one;
  }
  const after = stream.framing === 'eventstream' ? stream.after : unitEnds(body, stream.framing);
  const ends = remapChunkEnds(r.chunks.map(([, stop]) => stop), stream.before, after, r.body, body);
  if (ends === undefined) return one;
  return { ...r, headers, body, chunks: r.chunks.map(([ms], i) => [ms, ends[i]!] as [number, number]) };
}
