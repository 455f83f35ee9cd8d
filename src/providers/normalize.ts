/*
 * Request normalization: turns an LLM API request body into the JSON value whose digest is the
 * request key, plus the pieces of the signature. docs/matching.md is the full statement of
 * these rules; this is the summary kept next to the code.
 *
 * Detection (detectProvider), first rule that applies:
 *   1. not a JSON object -> E_REQUEST;
 *   2. no `messages`, but `input`, `instructions` or `previous_response_id` -> openai-responses;
 *      neither -> E_REQUEST; `messages` that is not an array -> E_REQUEST;
 *   3. a `context` or `options` object at top level -> generic (the JSON recordings directory shape);
 *   4. Anthropic evidence: top-level `system`, `stop_sequences`, `top_k`, `thinking`; a tool with
 *      `input_schema`; a content block tool_use / tool_result / thinking / redacted_thinking, or
 *      image / document with a `source` -> anthropic;
 *   5. OpenAI evidence: every message role is system/developer/user/assistant/tool/function, or
 *      a message carries tool_calls / tool_call_id / function_call, or a part is image_url /
 *      input_audio / file, or a tool is `{ type: 'function', function }`, or an argument only
 *      chat completions has (functions, max_completion_tokens, response_format, n, ...) ->
 *      openai-chat;
 *   6. otherwise generic.
 * Detection only chooses where the messages and system prompt live (`input`/`instructions` for
 * Responses). Messages, parts and tools go through one normalizer that knows every shape's
 * part types, because their type names never mean different things across providers; so a
 * body detected as the "wrong" one of two similar shapes still gets the same view.
 *
 * The view is { model?, messages, tools, options }:
 *   - content is always a list of parts; a string is one text part; empty text is no part;
 *   - text parts `text` / `input_text` / `output_text` -> { type: 'text', text };
 *   - attachments (image_url, input_image, image, input_audio, file, input_file, document)
 *     -> { type: 'image' | 'audio' | 'file', image|audio|file: Attachment, ...detail/filename };
 *     Attachment is { sha256, mediaType } of the decoded bytes (base64 and data: URLs alike), or
 *     { url }, { path }, { fileId };
 *   - tool calls (OpenAI tool_calls, Responses function_call items, Anthropic tool_use)
 *     -> { type: 'tool_call', id, name, arguments }, `arguments` JSON text parsed (kept as
 *     `argumentsText` if it is not JSON); tool results (OpenAI tool messages, Responses
 *     function_call_output, Anthropic tool_result) -> { type: 'tool_result', id, content };
 *   - call ids are renumbered: the k-th distinct id, in order of first appearance (system, then
 *     messages in order, within a message content before tool_calls), becomes "call_<k>", so a
 *     re-recorded conversation (new ids from the provider) keeps its key, and a prefix of a
 *     conversation is numbered as it is inside the whole one (path hashes stay prefix-stable);
 *     a result's id whose call is not in the request (dangling: Responses previous_response_id)
 *     is kept as given, since the positional name would lose which call the result answers;
 *   - message-level ids, timestamps and statuses, `cache_control`, thinking signatures, members
 *     that are null or [] are dropped;
 *   - tools -> { name, description?, parameters?, ... } (input_schema is parameters, legacy
 *     `functions` get `legacy: true`), sorted by name;
 *   - options: every other top-level argument, except the never-list DROPPED_ARGS and ignoreArgs;
 *     null means absent; `temperature` only when it is 0 (greedy decoding, so the recording is
 *     the answer; any other value is sampling, and a recording is just one draw of it, so it
 *     must not split recordings); `stop`/`stop_sequences` strings become one-element lists.
 *     Unknown arguments are kept on purpose: one we do not know may decide the answer, and a
 *     wrong replay is worse than a miss (ignoreArgs is the escape hatch).
 *
 * A system prompt kept apart by the shape (Anthropic `system`, Responses `instructions`) becomes
 * a leading { role: 'system', content } message, so an Anthropic conversation and the same one
 * in OpenAI chat form have the same key and path hashes, and RequestView.messages (what path
 * hashes cover) is exactly view.messages: one canonical text serves the key and the chain.
 *
 * Guarantees: deterministic, idempotent (normalizing a view as a generic request returns the
 * same view), and the input is never mutated or shared with the result.
 */

import { MAX_DEPTH, TapedeckError } from '../errors.ts';
import { canonicalize, canonicalizeJSON, sha256 } from '../core/index.ts';
import { compareBytes, hex } from '../core/engine.ts';
import { COMPATIBLE_VOLATILE_ARGS } from './openai-compatible.ts';
import type { Attachment, BuiltinProvider, NormalizeOptions, Provider, RequestView } from './types.ts';
import { replaceVolatileText, volatilePatterns } from './volatile-text.ts';
import { isBytes } from '../bytes.ts';

export type { Attachment, BuiltinProvider, NormalizeOptions, Provider, RequestView } from './types.ts';

/**
 * Top-level arguments that never enter the key: accounting and identity (user, metadata, ids,
 * keys), storage and caching hints, client plumbing. None of them changes what the model
 * answers or the shape of the answer. (Streaming does change the shape: see SHAPE_DEFAULTS.)
 */
export const DROPPED_ARGS: readonly string[] = [
  'user',
  'metadata',
  'store',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'safety_identifier',
  'api_key',
  'apiKey',
  'api_base',
  'base_url',
  'organization',
  'timeout',
  'request_timeout',
  'request_id',
  'requestId',
  'idempotency_key',
  'timestamp',
  'created',
  'created_at',
  'createdAt',
  'headers',
  'extra_headers',
  'extra_query',
  'num_retries',
  'max_retries',
  'maxRetries',
  'abortSignal',
  // How long a local server keeps the model loaded, scheduling priority, cache placement
  // (LM Studio, vLLM, Ollama's /v1): ./openai-compatible.ts says which API sends which.
  ...COMPATIBLE_VOLATILE_ARGS,
];
export const DROPPED = new Set(DROPPED_ARGS);

/**
 * The request key spec version this module implements (docs/hash-spec.md, "Versioning"). Tapes
 * store it with every key; a key written under another version is recomputed from the stored
 * request when the tape is opened (src/match/rekey.ts).
 */
export const KEY_SPEC_VERSION = 2;

/**
 * Top-level arguments that decide the *shape* of the answer (a stream of events or one JSON
 * body, how many choices, which format, extra log-probabilities or usage chunks), each with the
 * value that means the same as leaving it out. They are always in the key, except when they
 * have that default value: a streamed and a plain call of the same prompt never share a
 * recording, while `stream: false` and no `stream` do.
 */
export const SHAPE_DEFAULTS: Readonly<Record<string, unknown>> = Object.freeze({
  stream: false,
  background: false,
  n: 1,
  logprobs: false,
  encoding_format: 'float',
  response_format: { type: 'text' },
});

/**
 * Shape-deciding arguments with no default: in the key whenever present (not null). Listed so
 * the docs, the tests and a fingerprint know them; like every unknown argument they would be
 * kept anyway.
 */
export const SHAPE_ARGS_KEPT: readonly string[] = [
  'stream_options', 'top_logprobs', 'dimensions', 'text', 'include', 'modalities', 'audio', 'output_format',
];

// Members of a message that are bookkeeping, not content (Responses item ids and statuses,
// database ids and timestamps in generic messages).
export const MESSAGE_NOISE = new Set([
  'id',
  'status',
  'timestamp',
  'created',
  'created_at',
  'createdAt',
  'updated_at',
  'updatedAt',
  'request_id',
  'requestId',
]);

export const BUILTIN_PROVIDERS: readonly BuiltinProvider[] = ['openai-chat', 'openai-responses', 'openai-embeddings', 'anthropic', 'generic'];

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isPlain(v: unknown): v is Obj {
  if (!isObj(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

// `o[k] = v` would set the prototype for k === '__proto__' (JSON.parse makes such own members).
export function put(o: Obj, k: string, v: unknown): void {
  if (v === undefined) return;
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}

export function requestError(message: string, path: string, hint?: string): TapedeckError {
  return new TapedeckError('E_REQUEST', message, { path, hint });
}

export function kindOf(v: unknown): string {
  if (v == null) return String(v);
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

const SHAPES_HINT =
  'Expected an OpenAI chat body { model, messages }, an OpenAI Responses body { model, input }, an OpenAI embeddings body ' +
  '{ model, input, encoding_format? }, an Anthropic body { model, system?, messages }, a generic one { messages, tools?, context?, options? } ' +
  'or Vercel AI SDK call options { model, system?, prompt }.';

/** Deep copy of JSON-like data, so the result never aliases the caller's objects. */
export function copy(v: unknown, depth = 0): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (depth > MAX_DEPTH) {
    throw new TapedeckError('E_DEPTH', `Request nests deeper than ${MAX_DEPTH} levels (or contains a cycle).`, {
      hint: 'Request bodies must be JSON data.',
    });
  }
  if (Array.isArray(v)) return v.map((x) => copy(x, depth + 1));
  if (!isPlain(v)) return v; // toJSON and friends are the hasher's business
  const out: Obj = {};
  for (const k of Object.keys(v)) put(out, k, copy(v[k], depth + 1));
  return out;
}

/** Copy without the given member names at any depth. */
export function strip(v: unknown, keys: ReadonlySet<string>, depth = 0): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (depth > MAX_DEPTH) return copy(v, depth); // throws E_DEPTH
  if (Array.isArray(v)) return v.map((x) => strip(x, keys, depth + 1));
  if (!isPlain(v)) return v;
  const out: Obj = {};
  for (const k of Object.keys(v)) if (!keys.has(k)) put(out, k, strip(v[k], keys, depth + 1));
  return out;
}

// "Absent", null and [] mean the same thing for the optional members of messages and parts.
function empty(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0);
}

/**
 * Copies the members of src that `out` does not already have, minus skipped and empty ones.
 * "Already have" means an own member: `k in out` is also true for the names `out` inherits
 * (`constructor`, `toString`, `__proto__`, ...), which left such members out of the key, so
 * requests differing only there shared one key and replayed each other's answers.
 */
function rest(src: Obj, out: Obj, skip: readonly string[] = []): Obj {
  for (const k of Object.keys(src)) {
    if (Object.hasOwn(out, k) || k === 'cache_control' || skip.includes(k)) continue;
    const v = src[k];
    if (!empty(v)) put(out, k, copy(v));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Attachments

const utf8 = new TextEncoder();

function digestOf(bytes: Uint8Array): string {
  return hex(sha256(bytes));
}

// Standard and URL-safe alphabets, padding optional; whitespace (MIME line breaks) is ignored.
// Node's decoder would silently skip anything else, making different strings hash alike.
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function decodeBase64(s: string): Uint8Array | undefined {
  const t = s.replace(/[\t\n\f\r ]+/g, '');
  if (!BASE64.test(t) || t.replace(/=+$/, '').length % 4 === 1) return undefined;
  // Padding is optional (and its amount unchecked): decode without it, as atob would reject
  // a wrong amount while Buffer ignores it.
  const std = t.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
  if (typeof Buffer !== 'undefined') {
    const b = Buffer.from(std, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.length);
  }
  const bin = atob(std);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function percentDecode(s: string): Uint8Array {
  if (!s.includes('%')) return utf8.encode(s);
  const parts: number[] = [];
  for (let i = 0; i < s.length; ) {
    if (s[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 1, i + 3))) {
      parts.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 3;
      continue;
    }
    const cp = s.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    for (const b of utf8.encode(ch)) parts.push(b);
    i += ch.length;
  }
  return Uint8Array.from(parts);
}

// A media type is its `type/subtype` only: parameters (`;charset=utf-8`) describe the
// encoding of bytes that are hashed decoded, so they are dropped everywhere (RFC 2045 names
// are case-insensitive).
function mediaTypeOf(v: unknown): string | undefined {
  const s = str(v)?.split(';')[0]!.trim().toLowerCase();
  return s ? s : undefined;
}

function fromBytes(bytes: Uint8Array, mediaType: string | undefined): Attachment {
  return mediaType ? { sha256: digestOf(bytes), mediaType } : { sha256: digestOf(bytes) };
}

function fromBase64(data: string, mediaType: string | undefined): Attachment {
  // A URL with a scheme is no base64 (`:` is outside both alphabets): the AI SDK's file part
  // holds a URL object in `data`, which a stored request keeps as its text, and both must be
  // the one `{ url }` (A(v) reads a string so).
  if (/^(data:|[a-z][a-z0-9+.-]*:\/\/)/i.test(data)) return fromUrl(data);
  const bytes = decodeBase64(data);
  if (bytes) return fromBytes(bytes, mediaType);
  const textSha256 = digestOf(utf8.encode(data));
  return mediaType ? { textSha256, mediaType } : { textSha256 };
}

// RFC 2397: data:[<mediatype>][;base64],<data>; the media type defaults to text/plain.
function fromUrl(url: string): Attachment {
  if (!/^data:/i.test(url)) return { url };
  const comma = url.indexOf(',');
  if (comma < 0) return { textSha256: digestOf(utf8.encode(url)) };
  const params = url.slice(5, comma).split(';');
  const mediaType = mediaTypeOf(params[0]) ?? 'text/plain';
  const data = url.slice(comma + 1);
  if (params.slice(1).some((p) => p.trim().toLowerCase() === 'base64')) {
    const b64 = data.includes('%') ? new TextDecoder().decode(percentDecode(data)) : data;
    const bytes = decodeBase64(b64);
    return bytes ? fromBytes(bytes, mediaType) : { textSha256: digestOf(utf8.encode(data)), mediaType };
  }
  return fromBytes(percentDecode(data), mediaType);
}

/**
 * The attachment an object describes, whichever provider's fields it uses: Anthropic sources
 * ({ type: 'base64' | 'url' | 'file' | 'text', ... }), OpenAI file and audio objects, Responses
 * input_image / input_file, generic { data, mediaType } / { url } / { path }, and the
 * normalized forms themselves (so normalization is idempotent).
 */
export function attachment(src: Obj): Attachment | undefined {
  const mediaType = mediaTypeOf(src.media_type ?? src.mediaType ?? src.mime_type ?? src.mimeType);
  if (typeof src.sha256 === 'string') return mediaType ? { sha256: src.sha256, mediaType } : { sha256: src.sha256 };
  if (typeof src.textSha256 === 'string') return mediaType ? { textSha256: src.textSha256, mediaType } : { textSha256: src.textSha256 };
  if (src.type === 'text' && typeof src.data === 'string') return fromBytes(utf8.encode(src.data), mediaType ?? 'text/plain');
  if (isBytes(src.data)) return fromBytes(src.data, mediaType);
  if (src.data instanceof URL) return fromUrl(src.data.href);
  const data = str(src.data) ?? str(src.file_data);
  if (data !== undefined) return fromBase64(data, mediaType);
  const url = str(src.url) ?? str(src.file_url) ?? str(src.image_url);
  if (url !== undefined) return fromUrl(url);
  if (typeof src.path === 'string') return { path: src.path };
  const fileId = str(src.file_id) ?? str(src.fileId);
  if (fileId !== undefined) return { fileId };
  return undefined;
}

/** An attachment as the view holds it (A(v) in docs/hash-spec.md): by digest, URL, path or file id. */
export function attachmentOf(v: unknown): Attachment | unknown {
  if (typeof v === 'string') {
    return /^(data:|[a-z][a-z0-9+.-]*:\/\/)/i.test(v) ? fromUrl(v) : { path: v };
  }
  if (isObj(v)) return attachment(v) ?? copy(v);
  return copy(v);
}

const AUDIO_TYPES: Record<string, string> = { mp3: 'audio/mpeg', wav: 'audio/wav' };

// ---------------------------------------------------------------------------------------------
// Messages and parts

/** The canonical JSON (RFC 8785) text of a non-string call id; its JSON text if it has none. */
function idText(raw: unknown): string {
  try {
    return idDecoder.decode(canonicalize(raw));
  } catch {
    return JSON.stringify(raw) ?? String(raw);
  }
}
const idDecoder = new TextDecoder();

/** The positional name an id would take: a result's dangling id of this form keeps it (see Ids). */
const POSITIONAL = /^call_[0-9]+$/;

export class Ids {
  private readonly map = new Map<string, string>();
  /** Ids seen as a call's own id (or in a position that is no result's reference). */
  private readonly called = new Set<string>();
  /** Ids seen as a result's reference, with their raw value. */
  private readonly referenced = new Map<string, unknown>();

  /**
   * @param kept ids (as {@link Ids.dangling} names them) that a result's reference keeps as
   *   given instead of their positional name: the second pass of normalizeRequest().
   */
  constructor(private readonly kept?: ReadonlySet<string>) {}

  /** How many distinct ids have been numbered. */
  get size(): number {
    return this.map.size;
  }

  /**
   * The positional name of a call id: "call_<k>" for the k-th distinct id seen. Ids are
   * distinct by type and JSON value: an id that is not a string is compared as its canonical
   * JSON, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are one id (key order never matters).
   * Used for a call's own id; a result's reference to a call goes through {@link Ids.ref}.
   */
  of(raw: unknown): string | undefined {
    if (raw === undefined || raw === null) return undefined;
    const key = idKey(raw);
    this.called.add(key);
    return this.name(key);
  }

  /**
   * A result's reference to a call (tool_result ids, `tool_call_id`, function_call_output
   * `call_id`): its positional name, numbered as {@link Ids.of} numbers it, or the id as given
   * when it is one of the `kept` (dangling) ids.
   *
   * @example
   * new Ids().ref('call_PARIS')                                // 'call_0'
   * new Ids(new Set(['string:call_PARIS'])).ref('call_PARIS') // 'call_PARIS'
   */
  ref(raw: unknown): unknown {
    if (raw === undefined || raw === null) return undefined;
    const key = idKey(raw);
    if (!this.referenced.has(key)) this.referenced.set(key, raw);
    const name = this.name(key); // numbered even when kept: the other ids keep their numbers
    return this.kept?.has(key) ? copy(raw) : name;
  }

  /**
   * The dangling ids: referenced by a result, never a call's own id in the request (the call
   * lives on the server: Responses `previous_response_id`). Their positional name would throw
   * away which call each result answers, so the request's second pass keeps them as given. An
   * id whose text is itself of the positional form `call_<digits>` keeps its positional name (as
   * given it could pass for another id's name). Undefined when there are none (most requests).
   *
   * @example
   * const ids = new Ids()
   * ids.of('call_a'); ids.ref('call_a'); ids.ref('call_PARIS')
   * ids.dangling() // Set { 'string:call_PARIS' }
   */
  dangling(): Set<string> | undefined {
    let out: Set<string> | undefined;
    for (const [key, raw] of this.referenced) {
      if (this.called.has(key) || (typeof raw === 'string' && POSITIONAL.test(raw))) continue;
      (out ??= new Set()).add(key);
    }
    return out;
  }

  private name(key: string): string {
    let id = this.map.get(key);
    if (id === undefined) {
      id = `call_${this.map.size}`;
      this.map.set(key, id);
    }
    return id;
  }
}

// Ids are distinct by type and JSON value.
function idKey(raw: unknown): string {
  return `${Array.isArray(raw) ? 'array' : typeof raw}:${typeof raw === 'string' ? raw : idText(raw)}`;
}

/**
 * Tool-call arguments given as JSON text are compared as the JSON value when the text is
 * I-JSON (RFC 7493: no duplicate member names, no lone surrogates, finite numbers), the rules
 * canonical JSON enforces; any other text is kept as `argumentsText`, so it keys, and keys
 * distinctly: JSON.parse would turn `{"a":1,"a":2}` into `{"a":2}` and reject `1e400`.
 */
function setArguments(out: Obj, raw: unknown): void {
  if (typeof raw === 'string') {
    let value: unknown;
    try {
      canonicalizeJSON(raw);
      value = JSON.parse(raw);
    } catch (e) {
      if (!(e instanceof TapedeckError) && !(e instanceof SyntaxError)) throw e;
      put(out, 'argumentsText', raw);
      return;
    }
    if (value !== null) put(out, 'arguments', value); // "null" is no arguments, as null is
  } else if (raw !== undefined && raw !== null) {
    put(out, 'arguments', copy(raw));
  }
}

// Members of the view that are null (or []) are absent: put them only when they are not.
function keep(o: Obj, k: string, v: unknown): void {
  if (!empty(v)) put(o, k, v);
}

function keepIn(o: Obj, k: string, v: unknown): Obj {
  keep(o, k, v);
  return o;
}

export class Normalizer {
  readonly ids: Ids;

  /** @param kept dangling ids to keep as given (see Ids); none by default. */
  constructor(kept?: ReadonlySet<string>) {
    this.ids = new Ids(kept);
  }

  private depth = 0;

  content(v: unknown, path: string): unknown[] {
    if (v === undefined || v === null) return [];
    // Tool results nest content; a cyclic body must end in E_DEPTH, not a stack overflow.
    if (++this.depth > MAX_DEPTH) {
      throw new TapedeckError('E_DEPTH', `Content at ${path} nests deeper than ${MAX_DEPTH} levels (or contains a cycle).`, { path });
    }
    const parts = Array.isArray(v) ? v : [v];
    const out: unknown[] = [];
    parts.forEach((p, i) => {
      const n = this.part(p, Array.isArray(v) ? `${path}[${i}]` : path);
      if (n !== undefined) out.push(n);
    });
    this.depth--;
    return out;
  }

  private part(p: unknown, path: string): unknown {
    if (typeof p === 'string') return p === '' ? undefined : { type: 'text', text: p };
    if (!isObj(p)) return copy(p);
    const type = p.type;
    switch (type) {
      case 'text':
      case 'input_text':
      case 'output_text': {
        // No text (absent, null or "") is no part, as an empty string content is no part.
        if (p.text === '' || p.text === undefined || p.text === null) return undefined;
        return rest(p, { type: 'text', text: copy(p.text) }, ['type']);
      }
      case 'image_url': {
        // OpenAI chat: image_url is { url, detail } (or, from older SDKs, the URL itself).
        const iu = p.image_url;
        // image_url null (or []) is absent, as every null member is: no image member.
        const out: Obj = { type: 'image' };
        keep(out, 'image', attachmentOf(isObj(iu) ? (str(iu.url) ?? iu) : iu));
        if (isObj(iu)) rest(iu, out, ['url']);
        return rest(p, out, ['type', 'image_url']);
      }
      case 'input_image':
        // Responses: image_url is a string (https or data:), or file_id.
        return rest(p, { type: 'image', image: attachmentOf(p) }, ['type', 'image_url', 'file_id']);
      case 'image': {
        const src = p.source ?? p.image ?? p;
        return rest(p, { type: 'image', image: attachmentOf(src) }, [
          'type', 'source', 'image', 'data', 'url', 'path', 'image_url', 'file_id', 'media_type', 'mediaType', 'mime_type', 'mimeType',
        ]);
      }
      case 'input_audio':
      case 'audio': {
        const a = isObj(p.input_audio) ? p.input_audio : isObj(p.audio) ? p.audio : p;
        const format = str(a.format);
        // Own names only: `format: 'constructor'` is audio/constructor, not Object's constructor.
        const f = format?.toLowerCase();
        const mediaType = f !== undefined ? (Object.hasOwn(AUDIO_TYPES, f) ? AUDIO_TYPES[f] : `audio/${f}`) : undefined;
        // A null media type is an absent one: the format still gives it.
        const src: Obj = mediaType !== undefined && a.mediaType == null && a.media_type == null ? { ...a, mediaType } : a;
        return rest(p, { type: 'audio', audio: attachmentOf(src) }, [
          'type', 'input_audio', 'audio', 'data', 'format', 'url', 'path', 'media_type', 'mediaType',
        ]);
      }
      case 'file':
      case 'input_file':
      case 'document': {
        // OpenAI chat { file: { file_data, file_id, filename } }, Responses { file_data,
        // file_id, file_url, filename }, Anthropic { source, title, context, citations }.
        const holder = isObj(p.file) ? p.file : isObj(p.source) ? p.source : p;
        const out: Obj = { type: 'file' };
        const att = holder.type === 'content' ? undefined : attachment(holder);
        if (att) out.file = att;
        else if (holder.type === 'content') out.content = this.content(holder.content, `${path}.source.content`);
        else if (holder === p && p.content !== undefined) out.content = this.content(p.content, `${path}.content`);
        else if (holder !== p) out.file = copy(holder);
        keep(out, 'filename', copy(p.filename ?? (holder !== p ? holder.filename : undefined)));
        return rest(p, out, [
          'type', 'file', 'source', 'data', 'file_data', 'file_id', 'fileId', 'file_url', 'url', 'path', 'media_type', 'mediaType',
        ]);
      }
      case 'tool_use':
      case 'tool_call': {
        // Anthropic tool_use { id, name, input }, or the normalized form (arguments as is).
        const out: Obj = { type: 'tool_call' };
        put(out, 'id', this.ids.of(p.id));
        keep(out, 'name', copy(p.name));
        if (type === 'tool_use') setArguments(out, p.input ?? null);
        else {
          // Arguments are data: [] is a value here, only null is no arguments.
          if (p.arguments !== null) put(out, 'arguments', copy(p.arguments));
          if (p.argumentsText !== null) put(out, 'argumentsText', copy(p.argumentsText));
        }
        return rest(p, out, ['type', 'input']);
      }
      case 'tool-call': {
        // Vercel AI SDK prompt part { toolCallId, toolName, input } (`args` before AI SDK 5).
        const out: Obj = { type: 'tool_call' };
        put(out, 'id', this.ids.of(p.toolCallId));
        keep(out, 'name', copy(p.toolName));
        setArguments(out, p.input ?? p.args ?? null);
        return rest(p, out, ['type', 'toolCallId', 'toolName', 'input', 'args']);
      }
      case 'tool_result': {
        const out: Obj = { type: 'tool_result' };
        put(out, 'id', this.ids.ref(p.tool_use_id ?? p.id));
        out.content = this.content(p.content, `${path}.content`);
        if (p.is_error === true) out.is_error = true;
        return rest(p, out, ['type', 'tool_use_id', 'is_error']);
      }
      case 'tool-result': {
        // Vercel AI SDK { toolCallId, toolName, output: { type: 'text' | 'json' | 'error-text'
        // | 'error-json', value } } (`result` before AI SDK 5). The tool name is the call's.
        const out: Obj = { type: 'tool_result' };
        put(out, 'id', this.ids.ref(p.toolCallId));
        const o = isObj(p.output) ? p.output : undefined;
        const value = o ? o.value : (p.output ?? p.result);
        out.content = this.content(typeof value === 'string' || value === undefined || value === null ? value : [{ type: 'json', json: value }], `${path}.output`);
        if (p.isError === true || (o && typeof o.type === 'string' && o.type.startsWith('error'))) out.is_error = true;
        return rest(p, out, ['type', 'toolCallId', 'toolName', 'output', 'result', 'isError']);
      }
      case 'thinking':
        // The signature is an opaque server blob that changes whenever the thinking is regenerated.
        return rest(p, keepIn({ type: 'thinking' }, 'thinking', copy(p.thinking)), ['type', 'signature']);
      case 'function_call': {
        const out: Obj = { type: 'function_call' };
        keep(out, 'name', copy(p.name));
        if (p.arguments !== null) put(out, 'arguments', copy(p.arguments));
        return rest(p, out, ['type']);
      }
      default:
        return this.other(p);
    }
  }

  /**
   * A part or item of a type not listed above: kept, with its call ids renumbered. `tool_use_id`
   * and `tool_call_id` name another part's call, as does the `call_id` of an output item
   * (`custom_tool_call_output`, `computer_call_output`, ...): those are results' references.
   */
  private other(p: Obj): Obj {
    const out: Obj = {};
    const type = str(p.type) ?? '';
    put(out, 'tool_use_id', this.ids.ref(p.tool_use_id));
    put(out, 'tool_call_id', this.ids.ref(p.tool_call_id));
    put(out, 'call_id', type.endsWith('_output') ? this.ids.ref(p.call_id) : this.ids.of(p.call_id));
    if (/(tool_use|_call)$/.test(type)) put(out, 'id', this.ids.of(p.id));
    return rest(p, out);
  }

  private toolCall(c: unknown): unknown {
    if (!isObj(c)) return copy(c);
    const out: Obj = { type: 'tool_call' };
    put(out, 'id', this.ids.of(c.id));
    if (c.type === undefined || c.type === null || c.type === 'function') {
      const f = isObj(c.function) ? c.function : {};
      keep(out, 'name', copy(f.name));
      setArguments(out, f.arguments);
      return out;
    }
    // Custom and future call types: the payload is kept under its own name. `index` is the
    // position in a streamed delta, which says nothing about the call.
    put(out, 'kind', c.type);
    return rest(c, out, ['type', 'index']);
  }

  message(given: unknown, path: string): unknown {
    if (!isObj(given)) {
      throw requestError(`${path} must be a message object; got ${kindOf(given)}.`, path, 'Messages look like { role, content }.');
    }
    const m = fromLangChain(given) ?? given;
    if (m.role === undefined && typeof m.type === 'string' && m.type !== 'message') return this.item(m, path);
    const out: Obj = {};
    keep(out, 'role', copy(m.role));
    // A tool message's call id is numbered before its content, as a tool_result part's is.
    const resultId = m.tool_call_id === undefined || m.tool_call_id === null ? undefined : this.ids.ref(m.tool_call_id);
    let parts = this.content(m.content, `${path}.content`);
    if (Array.isArray(m.tool_calls)) parts.push(...m.tool_calls.map((c) => this.toolCall(c)));
    if (isObj(m.function_call)) {
      const call: Obj = { type: 'function_call' };
      keep(call, 'name', copy(m.function_call.name));
      setArguments(call, m.function_call.arguments);
      parts.push(call);
    }
    if (resultId !== undefined) parts = [{ type: 'tool_result', id: resultId, content: parts }];
    out.content = parts;
    return rest(m, out, ['type', 'tool_calls', 'function_call', 'tool_call_id', ...MESSAGE_NOISE]);
  }

  /** OpenAI Responses input items other than messages. */
  private item(m: Obj, path: string): unknown {
    switch (m.type) {
      case 'function_call': {
        const call: Obj = { type: 'tool_call' };
        put(call, 'id', this.ids.of(m.call_id));
        keep(call, 'name', copy(m.name));
        setArguments(call, m.arguments);
        return { role: 'assistant', content: [call] };
      }
      case 'function_call_output': {
        const result: Obj = { type: 'tool_result' };
        put(result, 'id', this.ids.ref(m.call_id));
        result.content = this.content(m.output, `${path}.output`);
        return { role: 'tool', content: [result] };
      }
      case 'item_reference':
        return copy(m); // the id is the content here
      default: {
        // reasoning, web_search_call, custom_tool_call, ...: server item ids and statuses go.
        const trimmed: Obj = {};
        for (const k of Object.keys(m)) if (k !== 'id' && k !== 'status') put(trimmed, k, m[k]);
        return this.other(trimmed);
      }
    }
  }

  tool(t: unknown, legacy: boolean): unknown {
    if (!isObj(t)) return copy(t);
    let out: Obj;
    if (t.type === 'function' && isObj(t.function)) {
      out = this.toolDef(t.function);
      rest(t, out, ['type', 'function']);
    } else if (t.type === undefined || t.type === null || t.type === 'function' || (t.type === 'custom' && t.input_schema !== undefined)) {
      // `type: null` is no type (null members are absent), so it is a function tool too.
      out = this.toolDef(t);
    } else {
      out = rest(t, {}); // built-in tools ({ type: 'web_search' }, Anthropic's bash_20250124, ...)
    }
    if (legacy) out.legacy = true;
    return out;
  }

  private toolDef(f: Obj): Obj {
    const out: Obj = {};
    keep(out, 'name', copy(f.name));
    keep(out, 'description', copy(f.description));
    // Anthropic `input_schema`, Vercel AI SDK `inputSchema` (its jsonSchema() wrapper holds
    // the schema in `jsonSchema`).
    let params = f.parameters ?? f.input_schema ?? f.inputSchema;
    if (isObj(params) && isObj(params.jsonSchema)) params = params.jsonSchema;
    keep(out, 'parameters', copy(params));
    return rest(f, out, ['type', 'input_schema', 'inputSchema']);
  }
}

// LangChain message kinds (`_getType()`, or the class name without `Message`/`Chunk`) -> role.
const LANGCHAIN_ROLES: Record<string, string> = {
  human: 'user', ai: 'assistant', system: 'system', developer: 'developer', tool: 'tool', function: 'function',
};

/**
 * A LangChain message (a BaseMessage instance, which carries `lc_namespace`, or its serialized
 * form `{ lc: 1, type: 'constructor', id: [..., 'HumanMessage'], kwargs }`) as the OpenAI chat
 * message it stands for: role from its kind, `content`, `name`, `tool_call_id`, and
 * `tool_calls` ({ id, name, args }) as function calls. Its bookkeeping (ids, additional_kwargs,
 * response and usage metadata) is not content. Anything else: undefined.
 */
function fromLangChain(m: Obj): Obj | undefined {
  let fields: Obj;
  let kind: string;
  if (m.lc === 1 && m.type === 'constructor' && Array.isArray(m.id) && isObj(m.kwargs)) {
    fields = m.kwargs;
    kind = String(m.id[m.id.length - 1]);
  } else if (Array.isArray(m.lc_namespace)) {
    fields = m;
    const getType = (m as { _getType?: unknown; getType?: unknown }).getType ?? (m as { _getType?: unknown })._getType;
    // The class name from the prototype: a JSON object's own `constructor` member is data, and a
    // plain object's class is Object (docs/hash-spec.md, LangChain).
    const proto = Object.getPrototypeOf(m) as { constructor?: { name?: unknown } } | null;
    kind = typeof getType === 'function' ? String(getType.call(m)) : proto === null ? 'Object' : String(proto.constructor?.name);
  } else {
    return undefined;
  }
  kind = kind.replace(/Chunk$/, '').replace(/Message$/, '').toLowerCase();
  // Own names only: a kind `constructor` or `__proto__` is no role of the table.
  const out: Obj = { role: (Object.hasOwn(LANGCHAIN_ROLES, kind) ? LANGCHAIN_ROLES[kind] : undefined) ?? fields.role ?? kind, content: copy(fields.content) };
  if (typeof fields.name === 'string') out.name = fields.name;
  if (fields.tool_call_id !== undefined) out.tool_call_id = fields.tool_call_id;
  if (Array.isArray(fields.tool_calls) && fields.tool_calls.length > 0) {
    out.tool_calls = fields.tool_calls.map((c) => (isObj(c) ? { id: c.id, type: 'function', function: { name: c.name, arguments: c.args } } : c));
  }
  return out;
}

/**
 * A tool result is its own `tool` message in every shape: Anthropic (and the AI SDK) send tool
 * results as parts of a `user` message, OpenAI chat and Responses as one message per result.
 * A user message is split into runs, in order: each tool_result part becomes
 * `{ role: 'tool', content: [part] }`, the other parts stay user messages. So the same
 * conversation has the same messages, and path hashes, in every shape.
 */
export function splitToolResults(messages: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const m of messages) {
    if (!isObj(m) || m.role !== 'user' || !Array.isArray(m.content) || !m.content.some((p) => isObj(p) && p.type === 'tool_result')) {
      out.push(m);
      continue;
    }
    let run: unknown[] = [];
    const flush = () => {
      if (run.length > 0) out.push({ ...m, content: run });
      run = [];
    };
    for (const p of m.content) {
      if (isObj(p) && p.type === 'tool_result') {
        flush();
        out.push({ role: 'tool', content: [p] });
      } else {
        run.push(p);
      }
    }
    flush();
  }
  return out;
}

/**
 * Responses sends the calls of one assistant turn as separate `function_call` items after the
 * assistant's message item; chat completions and Anthropic keep them in the assistant message.
 * A function_call item right after an assistant message joins it (in order).
 */
function joinCalls(raw: readonly unknown[], messages: unknown[]): unknown[] {
  const out: unknown[] = [];
  messages.forEach((m, i) => {
    const prev = out[out.length - 1];
    const r = raw[i];
    if (isObj(r) && r.type === 'function_call' && r.role === undefined && isObj(prev) && prev.role === 'assistant' && Array.isArray(prev.content) && isObj(m)) {
      out[out.length - 1] = { ...prev, content: [...prev.content, ...(m.content as unknown[])] };
    } else {
      out.push(m);
    }
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Detection

export const OPENAI_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);
export const OPENAI_PARTS = new Set(['image_url', 'input_audio', 'file']);
export const OPENAI_ARGS = [
  'functions', 'function_call', 'max_completion_tokens', 'response_format', 'n', 'logit_bias', 'logprobs', 'top_logprobs',
  'frequency_penalty', 'presence_penalty', 'reasoning_effort', 'modalities', 'audio', 'prediction', 'seed',
  'parallel_tool_calls', 'stream_options', 'web_search_options',
];
export const ANTHROPIC_ARGS = ['system', 'stop_sequences', 'top_k', 'thinking'];
export const ANTHROPIC_BLOCKS = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking']);

function blocksOf(m: unknown): Obj[] {
  return isObj(m) && Array.isArray(m.content) ? m.content.filter(isObj) : [];
}

function looksAnthropic(body: Obj, messages: readonly unknown[], tools: readonly unknown[]): boolean {
  if (ANTHROPIC_ARGS.some((k) => body[k] !== undefined)) return true;
  if (tools.some((t) => isObj(t) && t.input_schema !== undefined)) return true;
  return messages.some((m) =>
    blocksOf(m).some((b) => ANTHROPIC_BLOCKS.has(b.type as string) || ((b.type === 'image' || b.type === 'document') && isObj(b.source))),
  );
}

const isTokens = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === 'number');

/**
 * An embeddings body and a Responses body can both be `{ model, input: 'text' }`: embeddings
 * evidence is an embeddings-only argument (`encoding_format`, `dimensions`), an `input` list of
 * strings or token lists (Responses items are objects), a model whose name says `embed`, or an
 * `options` object (the normalized embeddings view).
 */
function looksEmbeddings(body: Obj): boolean {
  if (body.encoding_format !== undefined || body.dimensions !== undefined || isObj(body.options)) return true;
  const input = body.input;
  if (Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'string' || typeof x === 'number' || isTokens(x))) return true;
  return typeof body.model === 'string' && /embed/i.test(body.model);
}

function looksOpenAI(body: Obj, messages: readonly unknown[], tools: readonly unknown[]): boolean {
  if (OPENAI_ARGS.some((k) => body[k] !== undefined)) return true;
  if (tools.some((t) => isObj(t) && t.type === 'function' && isObj(t.function))) return true;
  if (messages.some((m) => isObj(m) && (m.tool_calls !== undefined || m.tool_call_id !== undefined || m.function_call !== undefined))) {
    return true;
  }
  if (messages.some((m) => blocksOf(m).some((b) => OPENAI_PARTS.has(b.type as string)))) return true;
  return messages.every((m) => isObj(m) && typeof m.role === 'string' && OPENAI_ROLES.has(m.role));
}

/**
 * Which request shape a body has (the rules are listed at the top of this file and in
 * docs/matching.md). Throws a TapedeckError `E_REQUEST` for a body that is none of them.
 *
 * @example
 * detectProvider({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })         // 'openai-chat'
 * detectProvider({ model: 'gpt-4o', input: 'hi' })                                          // 'openai-responses'
 * detectProvider({ model: 'claude-sonnet-4-5', system: 'Be brief.', max_tokens: 256, messages: [] }) // 'anthropic'
 * detectProvider({ messages: [], tools: [], context: { currentNode: 'start' } })          // 'generic'
 */
export function detectProvider(body: unknown): BuiltinProvider {
  if (!isObj(body)) throw requestError(`A request body must be a JSON object; got ${kindOf(body)}.`, '$', SHAPES_HINT);
  if (body.messages === undefined) {
    if (body.instructions !== undefined || body.previous_response_id !== undefined) return 'openai-responses';
    if (body.input !== undefined) return looksEmbeddings(body) ? 'openai-embeddings' : 'openai-responses';
    if (body.prompt !== undefined) return 'generic';
    throw requestError('The request has none of `messages`, `input` and `prompt`, so it is no known LLM request shape.', '$', SHAPES_HINT);
  }
  if (!Array.isArray(body.messages)) {
    throw requestError(`\`messages\` must be an array; got ${kindOf(body.messages)}.`, '$.messages', SHAPES_HINT);
  }
  if (isObj(body.context) || isObj(body.options)) return 'generic';
  const tools = Array.isArray(body.tools) ? body.tools : [];
  if (looksAnthropic(body, body.messages, tools)) return 'anthropic';
  if (looksOpenAI(body, body.messages, tools)) return 'openai-chat';
  return 'generic';
}

// ---------------------------------------------------------------------------------------------
// The request view

/**
 * The key options checked (throws E_ARG naming `where`: normalizeRequest, or the entry point
 * whose options they are, which checks them when it is made rather than at its first request).
 *
 * @example
 * checkKeyOptions({ ignoreArgs: 'max_tokens' }, 'createFetch') // throws E_ARG: createFetch: ignoreArgs must be an array of strings
 */
export function checkKeyOptions(opts: NormalizeOptions | undefined, where = 'normalizeRequest'): NormalizeOptions {
  if (opts === undefined) return {};
  if (!isObj(opts)) throw new TapedeckError('E_ARG', `normalizeRequest options must be an object; got ${kindOf(opts)}.`);
  if (opts.provider !== undefined && !(BUILTIN_PROVIDERS as readonly unknown[]).includes(opts.provider)) {
    throw new TapedeckError('E_ARG', `${JSON.stringify(opts.provider)} is not a provider.`, { hint: `Valid values: ${BUILTIN_PROVIDERS.join(', ')}.` });
  }
  for (const name of ['ignoreArgs', 'volatileKeys'] as const) {
    const list = opts[name];
    if (list !== undefined && (!Array.isArray(list) || list.some((k) => typeof k !== 'string'))) {
      throw new TapedeckError('E_ARG', `${where}: ${name} must be an array of strings; got ${kindOf(list)}.`, {
        hint: name === 'ignoreArgs' ? "e.g. { ignoreArgs: ['temperature'] }" : "e.g. { volatileKeys: ['timestamp'] }",
      });
    }
  }
  volatilePatterns(opts.volatileText);
  return opts;
}

/** A top-level option as the key holds it (docs/hash-spec.md, "Options"); undefined when absent. */
export function optionValue(name: string, v: unknown): unknown {
  if (v === undefined || v === null) return undefined;
  if (name === 'temperature') return v === 0 ? 0 : undefined;
  if ((name === 'stop' || name === 'stop_sequences') && typeof v === 'string') return [v];
  if (Object.hasOwn(SHAPE_DEFAULTS, name) && isDefault(v, SHAPE_DEFAULTS[name])) return undefined;
  if (name === 'stream_options' && isObj(v)) {
    // include_usage: false is the default; the other members are kept.
    const out: Obj = {};
    for (const k of Object.keys(v)) if (!(v[k] === null || (k === 'include_usage' && v[k] === false))) put(out, k, copy(v[k]));
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (name === 'text' && isObj(v)) {
    // Responses `text: { format: { type: 'text' } }` is the default format.
    const out: Obj = {};
    for (const k of Object.keys(v)) if (!(v[k] === null || (k === 'format' && isDefault(v[k], { type: 'text' })))) put(out, k, copy(v[k]));
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return copy(v);
}

function isDefault(v: unknown, d: unknown): boolean {
  if (isObj(d)) return isObj(v) && Object.keys(v).length === Object.keys(d).length && Object.keys(d).every((k) => v[k] === d[k]);
  return v === d;
}

/** An AI SDK model object ({ modelId, provider, ... }) is keyed by its model id. */
function modelOf(m: unknown): unknown {
  return isObj(m) && typeof m.modelId === 'string' ? m.modelId : copy(m);
}

/** The Vercel AI SDK `tools` map { name: { description, inputSchema, execute } } as a list. */
function toolList(list: unknown, name: string): unknown[] | undefined {
  if (list === undefined || list === null) return undefined;
  if (Array.isArray(list)) return list;
  if (name === 'tools' && isPlain(list)) return Object.keys(list).map((k) => (isObj(list[k]) ? { name: k, ...(list[k] as Obj) } : list[k]));
  throw requestError(`\`${name}\` must be an array; got ${kindOf(list)}.`, `$.${name}`, SHAPES_HINT);
}

/** Tools in key order: by name, ties by their canonical bytes. */
export function sortTools(tools: unknown[]): unknown[] {
  const keyed = tools.map((t) => ({ t, name: isObj(t) && typeof t.name === 'string' ? t.name : '', bytes: undefined as Uint8Array | undefined }));
  const bytes = (x: (typeof keyed)[number]): Uint8Array => (x.bytes ??= canonicalize(x.t));
  keyed.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : compareBytes(bytes(a), bytes(b))));
  return keyed.map((x) => x.t);
}

const LAYOUT: Record<BuiltinProvider, readonly string[]> = {
  'openai-chat': ['model', 'messages', 'system', 'tools', 'functions', 'context'],
  anthropic: ['model', 'messages', 'system', 'tools', 'functions', 'context'],
  generic: ['model', 'messages', 'prompt', 'system', 'tools', 'functions', 'context', 'options'],
  'openai-responses': ['model', 'input', 'instructions', 'tools', 'functions', 'context'],
  'openai-embeddings': ['model', 'input', 'options'],
};

// Top-level names that detection or the layout looks at. Leaving one of them out of a
// fingerprint could let two bodies that normalize differently share it.
const SHAPE_ARGS = new Set<string>([
  ...OPENAI_ARGS,
  ...ANTHROPIC_ARGS,
  ...Object.values(LAYOUT).flat(),
  'previous_response_id',
  'encoding_format',
  'dimensions',
]);

/**
 * The top-level arguments a request fingerprint may leave out: those normalization always drops
 * (DROPPED_ARGS and the caller's ignoreArgs) minus any that detection or the layout reads. Two
 * bodies whose root members are equal apart from these normalize to the same view, so a digest
 * of the body with them left out (`hashJSON(body, { ignoreKeys, rootOnly: true })`) can stand in
 * for the request key when it is found among the recordings' fingerprints.
 *
 * @example
 * hashJSON(body, { ignoreKeys: fingerprintIgnoreKeys(['temperature']), rootOnly: true })
 */
export function fingerprintIgnoreKeys(ignoreArgs: readonly string[] = []): string[] {
  return [...new Set([...DROPPED_ARGS, ...ignoreArgs])].filter((k) => !SHAPE_ARGS.has(k));
}

/**
 * Normalizes an LLM API request body (OpenAI chat completions, OpenAI Responses, Anthropic
 * messages, or the generic `{ messages, tools, context, model, options }` shape) into the view
 * whose digest is the request key, the message list for path hashes, and the signature's tool
 * names and context keys. Deterministic and idempotent; never mutates `body`. Throws a
 * TapedeckError `E_REQUEST` for a body that is no request, `E_ARG` for bad options.
 *
 * @example
 * const a = normalizeRequest({ model: 'gpt-4o', user: 'u-1', temperature: 0.7,
 *   messages: [{ role: 'user', content: 'hi' }] })
 * const b = normalizeRequest({ messages: [{ content: [{ type: 'text', text: 'hi' }], role: 'user' }],
 *   model: 'gpt-4o' })
 * hashValue(a.view) === hashValue(b.view) // true: the user id and a sampling temperature are not in the key
 * normalizeRequest(body, { ignoreArgs: ['max_tokens'], volatileKeys: ['timestamp'] })
 */
export function normalizeRequest(body: unknown, opts?: NormalizeOptions): RequestView {
  const o = checkKeyOptions(opts);
  // Detection reads the whole body: ignoreArgs apply after it (ignoring `system` does not make
  // an Anthropic body a chat one).
  const provider = (o.provider ?? detectProvider(body)) as BuiltinProvider;
  if (!isObj(body)) throw requestError(`A request body must be a JSON object; got ${kindOf(body)}.`, '$', SHAPES_HINT);
  const ignore = new Set(o.ignoreArgs ?? []);
  const arg = (k: string): unknown => (ignore.has(k) ? undefined : body[k]);
  const layout = LAYOUT[provider];
  const options: Obj = {};
  for (const k of Object.keys(body)) {
    if (layout.includes(k) || DROPPED.has(k) || ignore.has(k)) continue;
    put(options, k, optionValue(k, body[k]));
  }
  const nested = provider === 'generic' || provider === 'openai-embeddings' ? arg('options') : undefined;
  if (isPlain(nested)) {
    for (const k of Object.keys(nested)) {
      if (DROPPED.has(k) || ignore.has(k)) continue;
      const v = optionValue(k, nested[k]);
      if (v === undefined) delete options[k];
      else put(options, k, v);
    }
  }
  const view: Obj = {};
  const model = arg('model');
  if (model !== undefined && model !== null) view.model = modelOf(model);

  if (provider === 'openai-embeddings') {
    const input = arg('input');
    // One input (a string or one token list) is a batch of one: the answer is the same.
    const items = input === undefined || input === null ? [] : Array.isArray(input) && !isTokens(input) ? input.map((x) => copy(x)) : [copy(input)];
    view.input = items;
    view.options = options;
    return { provider, view, messages: items, toolNames: [], contextKeys: [] };
  }

  // The conversation: system prompt, then messages. A result whose call is not in the request
  // (a dangling id: the call lives on the server, Responses `previous_response_id`) is known
  // only once every message has been read, so such a request is normalized a second time with
  // those ids kept as given (Ids.dangling()); every other request is read once, as before.
  const conversation = (n: Normalizer): { system: unknown[]; messages: unknown[] } => {
    // System prompt first: its ids (if any) are numbered before the messages'.
    const systemRaw = provider === 'openai-responses' ? arg('instructions') : arg('system');
    const system = n.content(systemRaw, provider === 'openai-responses' ? '$.instructions' : '$.system');

    let raw: unknown[];
    let where = '$.messages';
    if (provider === 'openai-responses') {
      where = '$.input';
      const input = arg('input');
      if (typeof input === 'string') raw = [{ role: 'user', content: input }];
      else if (Array.isArray(input)) raw = input;
      else if (input === undefined || input === null) raw = [];
      else throw requestError(`\`input\` must be a string or an array of items; got ${kindOf(input)}.`, '$.input', SHAPES_HINT);
    } else {
      const messages = arg('messages');
      if (Array.isArray(messages)) raw = messages;
      else if (messages === undefined && (ignore.has('messages') || provider === 'generic')) raw = [];
      else throw requestError(`\`messages\` must be an array; got ${kindOf(messages)}.`, '$.messages', SHAPES_HINT);
    }
    let messages = raw.map((m, i) => n.message(m, `${where}[${i}]`));
    if (provider === 'generic') {
      // Vercel AI SDK call options: `prompt` is a string (one user message) or a message list;
      // it follows `messages` if a body has both.
      const prompt = arg('prompt');
      if (typeof prompt === 'string') messages.push(n.message({ role: 'user', content: prompt }, '$.prompt'));
      else if (Array.isArray(prompt)) prompt.forEach((m, i) => messages.push(n.message(m, `$.prompt[${i}]`)));
      else if (prompt !== undefined && prompt !== null) {
        throw requestError(`\`prompt\` must be a string or an array of messages; got ${kindOf(prompt)}.`, '$.prompt', SHAPES_HINT);
      }
    }
    if (provider === 'openai-responses') messages = joinCalls(raw, messages);
    messages = splitToolResults(messages);
    return { system, messages };
  };
  let n = new Normalizer();
  let { system, messages } = conversation(n);
  const dangling = n.ids.dangling();
  if (dangling !== undefined) ({ system, messages } = conversation((n = new Normalizer(dangling))));

  let tools: unknown[] = [];
  for (const [name, legacy] of [['tools', false], ['functions', true]] as const) {
    const list = toolList(arg(name), name);
    if (list) for (const t of list) tools.push(n.tool(t, legacy));
  }

  let all = system.length > 0 ? [{ role: 'system', content: system }, ...messages] : messages;
  if (o.volatileKeys && o.volatileKeys.length > 0) {
    // After the system prompt became a message: its own members are members like any other's.
    const keys = new Set(o.volatileKeys);
    all = strip(all, keys) as unknown[];
    tools = strip(tools, keys) as unknown[];
  }
  if (o.volatileText && o.volatileText.length > 0) all = replaceVolatileText(all, volatilePatterns(o.volatileText));
  tools = sortTools(tools);

  view.messages = all;
  view.tools = tools;
  view.options = options;

  const names = new Set<string>();
  for (const t of tools) if (isObj(t) && typeof t.name === 'string') names.add(t.name);
  const context = arg('context');

  return {
    provider,
    view,
    messages: all,
    toolNames: [...names].sort(),
    contextKeys: isPlain(context) ? Object.keys(context).sort() : [],
  };
}
