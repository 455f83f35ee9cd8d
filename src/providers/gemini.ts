/**
 * Google Gemini: the Generative Language API (`/v1beta/models/{model}:generateContent`) and
 * Vertex AI (`/v1/projects/{p}/locations/{l}/publishers/google/models/{model}:...`):
 * generateContent, streamGenerateContent (server-sent events with `alt=sse`, one JSON array sent
 * piece by piece without it), countTokens, embedContent and batchEmbedContents.
 *
 * The model is in the URL, so a body is keyed with its route's model and operation. Messages
 * take the shared normalized form (./normalize.ts), so one conversation has the same message
 * and path hashes here as in OpenAI or Anthropic shape: `contents` are messages (`model` is
 * the assistant), `systemInstruction` the leading system message, `text` parts text parts,
 * `inlineData` attachments by digest, `functionCall` / `functionResponse` tool calls and
 * results. Gemini call ids are optional and usually absent: a call without one gets the next
 * fresh id, and a response without one answers the earliest unanswered call of its name, so
 * the renumbered ids (`call_0`, ...) are the ones the same conversation has in OpenAI shape.
 * Thought signatures are opaque and change with every answer: they are out of the key, so they
 * cannot make two conversations differ (docs/hash-spec.md, "Google Gemini").
 *
 * The REST API accepts snake_case member names as well as camelCase (`system_instruction`,
 * `inline_data`, `mime_type`); both key alike. Member names inside free-form values (function
 * arguments and responses, schemas) are kept as written.
 */
import { canonicalize } from '../core/index.ts';
import { compareBytes } from '../core/engine.ts';
import { TapedeckError } from '../errors.ts';
import { errorMessage, safeJSON, type ErrorStyle } from './error-shape.ts';
import { attachmentOf, copy, DROPPED, kindOf, Normalizer, put, requestError, sortTools, splitToolResults, strip } from './normalize.ts';
import { count, newRead } from './answer-read.ts';
import type { AnswerRead, ErrorAnswer, FaultAnswer, NormalizeContext, ProviderModule, RouteMatch, StatusFault } from './provider.ts';
import { parseSse } from './sse-parse.ts';
import { replaceVolatileText, volatilePatterns } from './volatile-text.ts';
import type { RequestView } from './types.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

const HINT =
  'Expected a Gemini body { contents: [{ role, parts: [{ text }] }], systemInstruction?, tools?, toolConfig?, generationConfig?, safetySettings? }, ' +
  'an embedContent body { content: { parts } } or a batchEmbedContents body { requests: [{ model, content }] }.';

/** `system_instruction` -> `systemInstruction`. */
const camel = (k: string): string => (k.includes('_') ? k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase()) : k);

/**
 * The members of an object (one level) under their camelCase names; a camelCase member wins
 * over its snake_case spelling. Values are shared, not copied.
 */
function camelNames(o: Obj): Obj {
  const out: Obj = {};
  for (const k of Object.keys(o)) {
    const c = camel(k);
    if (!Object.hasOwn(out, c) || c === k) put(out, c, o[k]);
  }
  return out;
}

/** camelNames() with the values copied. */
function camelMembers(o: Obj): Obj {
  const out = camelNames(o);
  for (const k of Object.keys(out)) put(out, k, copy(out[k]));
  return out;
}

/** Adds the members of src not in skip and not already in out, as the shared rest() does: null and [] are absent. */
function addRest(out: Obj, src: Obj, skip: readonly string[]): void {
  for (const k of Object.keys(src)) {
    const v = src[k];
    if (skip.includes(k) || Object.hasOwn(out, k) || v === null || v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    put(out, k, copy(v));
  }
}

// Part members that are bookkeeping, not content: opaque, and new with every answer.
const PART_NOISE = 'thoughtSignature';

// Where the model and operation are in the URL. `tunedModels/` for tuned models; Vertex AI
// puts `projects/{p}/locations/{l}/publishers/google/` before `models/`.
const MODEL_PATH = String.raw`\/(?:models|tunedModels)\/(?<model>[^/:]+)`;
const route = (operation: string, shape: string, streams = false) => ({
  method: 'POST',
  path: new RegExp(`${MODEL_PATH}:${operation}$`),
  operation,
  shape,
  ...(streams ? { streams } : {}),
});

/** The role a Gemini content has in the shared form: `model` answers, everything else asks. */
function roleOf(role: unknown): unknown {
  if (role === 'model') return 'assistant';
  if (role === undefined || role === null || role === 'function' || role === 'tool') return 'user';
  return copy(role);
}

/** image/*, audio/*, anything else a file: the part type the other shapes use. */
export function kindOfMedia(mimeType: unknown): 'image' | 'audio' | 'file' {
  const t = typeof mimeType === 'string' ? mimeType.toLowerCase() : '';
  return t.startsWith('image/') ? 'image' : t.startsWith('audio/') ? 'audio' : 'file';
}

/**
 * Call ids of one request: an explicit id is numbered as every shape numbers ids; a call without
 * one gets a fresh id, and a response without one answers the earliest unanswered call of the
 * same name.
 */
export class Calls {
  private fresh = 0;
  private readonly open: { name: unknown; raw: unknown }[] = [];

  constructor(private readonly n: Normalizer) {}

  call(name: unknown, id: unknown): string | undefined {
    const raw = id ?? { gemini: this.fresh++ };
    this.open.push({ name, raw });
    return this.n.ids.of(raw);
  }

  /** The id of the call a response answers; `paired` false when it answers none. */
  response(name: unknown, id: unknown): { id: string | undefined; paired: boolean } {
    let at = -1;
    if (id !== undefined && id !== null) at = this.open.findIndex((c) => c.raw === id);
    else at = this.open.findIndex((c) => c.name === name);
    if (at >= 0) {
      const [c] = this.open.splice(at, 1);
      return { id: this.n.ids.of(c!.raw), paired: true };
    }
    return { id: this.n.ids.of(id ?? { gemini: this.fresh++ }), paired: id !== undefined && id !== null };
  }
}

/** What a function response holds: `{ output }`, `{ result }` or `{ content }` alone is that value. */
export function resultValue(response: unknown): unknown {
  if (!isObj(response)) return response;
  const keys = Object.keys(response).filter((k) => k !== 'name');
  if (keys.length === 1 && (keys[0] === 'output' || keys[0] === 'result' || keys[0] === 'content')) return response[keys[0]];
  return response;
}

class GeminiNormalizer {
  readonly n = new Normalizer();
  private readonly calls = new Calls(this.n);

  parts(v: unknown, path: string): unknown[] {
    if (v === undefined || v === null) return [];
    const list = Array.isArray(v) ? v : [v];
    const out: unknown[] = [];
    list.forEach((p, i) => {
      const part = this.part(p, Array.isArray(v) ? `${path}[${i}]` : path);
      if (part !== undefined) out.push(part);
    });
    return out;
  }

  private part(p: unknown, path: string): unknown {
    if (typeof p === 'string') return p === '' ? undefined : { type: 'text', text: p };
    if (!isObj(p)) return copy(p);
    const src = camelNames(p);
    const out: Obj = {};
    let used: string[];
    if (src.text !== undefined) {
      used = ['text', 'thought'];
      if (src.thought === true) {
        out.type = 'thinking';
        if (src.text !== '' && src.text !== null) put(out, 'thinking', copy(src.text));
      } else {
        if (src.text === '' || src.text === null) return undefined;
        out.type = 'text';
        put(out, 'text', copy(src.text));
      }
    } else if (isObj(src.inlineData) || isObj(src.fileData)) {
      const inline = isObj(src.inlineData);
      used = [inline ? 'inlineData' : 'fileData'];
      const d = camelNames((inline ? src.inlineData : src.fileData) as Obj);
      const kind = kindOfMedia(d.mimeType);
      out.type = kind;
      let att: unknown;
      if (inline) {
        const given: Obj = {};
        if (d.data !== undefined) given.data = d.data;
        if (d.mimeType !== undefined) given.mimeType = d.mimeType;
        att = attachmentOf(given);
      } else {
        att = attachmentOf(typeof d.fileUri === 'string' ? d.fileUri : camelMembers(d));
      }
      put(out, kind, att);
      if (d.displayName !== undefined && d.displayName !== null) put(out, 'filename', copy(d.displayName));
    } else if (isObj(src.functionCall)) {
      used = ['functionCall'];
      const c = camelNames(src.functionCall);
      out.type = 'tool_call';
      put(out, 'id', this.calls.call(c.name, c.id));
      if (c.name !== undefined && c.name !== null) put(out, 'name', copy(c.name));
      if (c.args !== undefined && c.args !== null) put(out, 'arguments', copy(c.args));
      addRest(out, c, ['name', 'args', 'id']);
    } else if (isObj(src.functionResponse)) {
      used = ['functionResponse'];
      const r = camelNames(src.functionResponse);
      const { id, paired } = this.calls.response(r.name, r.id);
      out.type = 'tool_result';
      put(out, 'id', id);
      if (!paired && r.name !== undefined && r.name !== null) put(out, 'name', copy(r.name));
      const value = resultValue(r.response);
      const content = value === undefined || value === null ? [] : typeof value === 'string' ? value : [{ type: 'json', json: value }];
      out.content = this.n.content(content, `${path}.functionResponse.response`);
      addRest(out, r, ['name', 'response', 'id']);
    } else {
      // executableCode, codeExecutionResult, ...: `{ type: <member>, <member>: value }`, by the
      // first name in UTF-16 order among the members that are not null (so member order says nothing).
      const names = Object.keys(src).filter((k) => k !== PART_NOISE && src[k] !== null && src[k] !== undefined).sort();
      if (names.length === 0) return undefined;
      const first = names[0]!;
      out.type = first;
      put(out, first, copy(src[first]));
      used = [first];
    }
    // videoMetadata, mediaResolution, partMetadata, ...: kept.
    addRest(out, src, [...used, PART_NOISE]);
    return out;
  }

  content(c: unknown, path: string): Obj {
    if (!isObj(c)) throw requestError(`${path} must be a content object { role, parts }; got ${kindOf(c)}.`, path, HINT);
    const out: Obj = {};
    const role = roleOf(c.role);
    if (role !== undefined && role !== null) put(out, 'role', role);
    out.content = this.parts(c.parts, `${path}.parts`);
    addRest(out, camelNames(c), ['role', 'parts']);
    return out;
  }

  tools(list: unknown): unknown[] {
    if (list === undefined || list === null) return [];
    if (!Array.isArray(list)) throw requestError(`\`tools\` must be an array; got ${kindOf(list)}.`, '$.tools', HINT);
    const out: unknown[] = [];
    for (const t of list) {
      if (!isObj(t)) {
        out.push(copy(t));
        continue;
      }
      const named = camelNames(t);
      const fns = named.functionDeclarations;
      if (Array.isArray(fns)) {
        for (const f of fns) {
          if (!isObj(f)) {
            out.push(copy(f));
            continue;
          }
          const decl = camelMembers(f);
          if (decl.parameters === undefined && decl.parametersJsonSchema !== undefined) {
            decl.parameters = decl.parametersJsonSchema;
            delete decl.parametersJsonSchema;
          }
          out.push(this.n.tool(decl, false));
        }
      }
      // Built-in tools (googleSearch, codeExecution, urlContext, retrieval, ...): kept as given.
      const builtin: Obj = {};
      for (const k of Object.keys(named)) if (k !== 'functionDeclarations' && named[k] !== null) put(builtin, k, copy(named[k]));
      if (Object.keys(builtin).length > 0) out.push(builtin);
    }
    return out;
  }
}

// Generation options whose value says the same as leaving them out.
const GENERATION_DEFAULTS: Record<string, unknown> = { candidateCount: 1, responseMimeType: 'text/plain' };

/** generationConfig as the key holds it: the same rules as every shape's options. */
function generationConfig(v: unknown): unknown {
  if (!isObj(v)) return copy(v);
  const out: Obj = {};
  const named = camelNames(v);
  for (const name of Object.keys(named)) {
    const x = named[name];
    if (x === null || x === undefined) continue;
    // A sampling temperature is one draw of many: only greedy decoding (0) decides the answer.
    if (name === 'temperature') {
      if (x === 0) out.temperature = 0;
      continue;
    }
    if (GENERATION_DEFAULTS[name] === x) continue;
    if (name === 'thinkingConfig' && isObj(x)) put(out, name, camelMembers(x));
    else put(out, name, copy(x));
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

// Top-level members that are not options: the conversation, the tools, the model, and Vertex
// AI's billing `labels`.
const LAYOUT = new Set(['contents', 'systemInstruction', 'tools', 'model', 'labels']);

// Never-list names as they are and camelCased (`request_id` and `requestId` alike).
const NEVER = new Set([...DROPPED, ...[...DROPPED].map(camel)]);

/** The options of a (camelCased) body: every member not skipped, not on the never-list, not ignored. */
function options(body: Obj, ignore: ReadonlySet<string>, skip: ReadonlySet<string>): Obj {
  const out: Obj = {};
  for (const name of Object.keys(body)) {
    if (skip.has(name) || NEVER.has(name) || ignore.has(name)) continue;
    const v = body[name];
    if (v === null || v === undefined) continue;
    let value: unknown;
    if (name === 'generationConfig') value = generationConfig(v);
    else if (name === 'safetySettings' && Array.isArray(v)) {
      // One setting per category: their order says nothing.
      const keyed = v.map((x) => {
        const c = isObj(x) ? camelMembers(x) : copy(x);
        return { c, bytes: canonicalize(c) };
      });
      keyed.sort((a, b) => compareBytes(a.bytes, b.bytes));
      value = keyed.map((x) => x.c);
    } else if (name === 'toolConfig' && isObj(v)) value = camelMembers(v);
    else value = copy(v);
    if (value !== undefined) put(out, name, value);
  }
  return out;
}

/** The model a body or route names, without the `models/` prefix. */
function modelName(v: unknown): unknown {
  return typeof v === 'string' ? v.replace(/^(?:publishers\/google\/)?models\//, '') : copy(v);
}

/** The operation and query members that decide the answer's shape, beside the body's options. */
function endpointOptions(route: RouteMatch | undefined, out: Obj): void {
  if (!route) return;
  const op = route.route.operation;
  if (op !== 'generateContent' && op !== 'embedContent') out.operation = op;
  const alt = route.query.get('alt');
  if (alt !== null && alt !== 'json') out.alt = alt;
}

function checkOpts(ctx: NormalizeContext): { ignore: Set<string>; volatile: Set<string> | undefined } {
  // ignoreArgs name members as written or camelCased; the body is read camelCased.
  const { ignoreArgs, volatileKeys } = ctx.opts;
  for (const [name, list] of [['ignoreArgs', ignoreArgs], ['volatileKeys', volatileKeys]] as const) {
    if (list !== undefined && (!Array.isArray(list) || list.some((k) => typeof k !== 'string'))) {
      throw new TapedeckError('E_ARG', `normalizeRequest: ${name} must be an array of strings.`, { hint: `e.g. { ${name}: ['timestamp'] }` });
    }
  }
  return { ignore: new Set((ignoreArgs ?? []).map(camel)), volatile: volatileKeys && volatileKeys.length > 0 ? new Set(volatileKeys) : undefined };
}

function conversation(given: Obj, ctx: NormalizeContext, route: RouteMatch | undefined): RequestView {
  const { ignore, volatile } = checkOpts(ctx);
  const body = camelNames(given);
  // countTokens may wrap a whole generateContent request.
  const inner = body.generateContentRequest;
  if (isObj(inner) && body.contents === undefined) {
    const view = conversation(inner, ctx, undefined);
    endpointOptions(route, view.view.options as Obj);
    if (route?.model !== undefined && !ignore.has('model')) view.view.model = route.model;
    return view;
  }
  const g = new GeminiNormalizer();
  const arg = (k: string): unknown => (ignore.has(k) ? undefined : body[k]);
  const view: Obj = {};
  const model = route?.model ?? arg('model');
  if (model !== undefined && model !== null && !ignore.has('model')) view.model = modelName(model);

  const system = arg('systemInstruction');
  const messages: unknown[] = [];
  if (system !== undefined && system !== null) {
    const parts = isObj(system) ? g.parts(system.parts, '$.systemInstruction.parts') : g.parts(system, '$.systemInstruction');
    if (parts.length > 0) messages.push({ role: 'system', content: parts });
  }
  const contents = arg('contents');
  if (Array.isArray(contents)) contents.forEach((c, i) => messages.push(g.content(c, `$.contents[${i}]`)));
  else if (isObj(contents)) messages.push(g.content(contents, '$.contents'));
  else if (contents !== undefined && contents !== null) throw requestError(`\`contents\` must be an array of contents; got ${kindOf(contents)}.`, '$.contents', HINT);
  let all = splitToolResults(messages);
  let tools = g.tools(arg('tools'));
  if (volatile) {
    all = strip(all, volatile) as unknown[];
    tools = strip(tools, volatile) as unknown[];
  }
  // As the other providers' messages (the system instruction, text parts, function responses).
  const volatileText = ctx.opts.volatileText;
  if (volatileText && volatileText.length > 0) all = replaceVolatileText(all, volatilePatterns(volatileText));
  tools = sortTools(tools);
  const opts = options(body, ignore, new Set([...LAYOUT, 'generateContentRequest']));
  endpointOptions(route, opts);
  view.messages = all;
  view.tools = tools;
  view.options = opts;
  const names = new Set<string>();
  for (const t of tools) if (isObj(t) && typeof t.name === 'string') names.add(t.name);
  return { provider: 'gemini', view, messages: all, toolNames: [...names].sort(), contextKeys: [] };
}

/**
 * An embedding input: the text of a content with one text part, else its parts (so an input
 * keys as the same string in OpenAI's embeddings shape).
 */
function embedItem(g: GeminiNormalizer, content: unknown, path: string): unknown {
  if (!isObj(content)) return copy(content);
  const parts = g.parts(content.parts, `${path}.parts`);
  if (parts.length === 1 && isObj(parts[0]) && parts[0].type === 'text' && Object.keys(parts[0]).length === 2) return parts[0].text;
  return parts;
}

function embeddings(given: Obj, ctx: NormalizeContext, route: RouteMatch | undefined): RequestView {
  const { ignore, volatile } = checkOpts(ctx);
  const body = camelNames(given);
  const g = new GeminiNormalizer();
  const view: Obj = {};
  const model = route?.model ?? (ignore.has('model') ? undefined : body.model);
  if (model !== undefined && model !== null && !ignore.has('model')) view.model = modelName(model);
  let input: unknown[];
  const requests = body.requests;
  if (Array.isArray(requests)) {
    input = requests.map((r, i) => {
      if (!isObj(r)) return copy(r);
      const req = camelNames(r);
      const item = embedItem(g, req.content, `$.requests[${i}].content`);
      const extra = options(req, ignore, new Set(['content', 'model']));
      // The batch's own model repeated per request is no difference; another model is.
      const m = req.model === undefined || req.model === null || ignore.has('model') ? undefined : modelName(req.model);
      if (m !== undefined && m !== view.model) extra.model = m;
      return Object.keys(extra).length === 0 ? item : { content: item, ...extra };
    });
  } else {
    const content = body.content;
    input = content === undefined || content === null ? [] : [embedItem(g, content, '$.content')];
  }
  if (volatile) input = strip(input, volatile) as unknown[];
  const opts = options(body, ignore, new Set(['content', 'requests', 'model']));
  endpointOptions(route, opts);
  view.input = input;
  view.options = opts;
  return { provider: 'gemini-embeddings', view, messages: input, toolNames: [], contextKeys: [] };
}

// ---------------------------------------------------------------------------------------------
// Answers: streams and their completeness

const decoder = new TextDecoder('utf-8');

/** The chunks of a stream: SSE `data:` events, or the elements of the JSON-array stream. */
function chunksOf(bytes: Uint8Array, contentType: string | undefined): unknown[] | undefined {
  const type = contentType?.split(';')[0]?.trim().toLowerCase();
  const text = decoder.decode(bytes);
  if (type === 'text/event-stream') {
    const out: unknown[] = [];
    for (const e of parseSse(text)) {
      if (e.event === 'error') return undefined;
      try {
        out.push(JSON.parse(e.data));
      } catch {
        return undefined;
      }
    }
    return out;
  }
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v : [v];
  } catch {
    return undefined; // a JSON array cut before its `]`
  }
}

/**
 * Whether a stream's chunks end the answer: the prompt blocked, or every candidate they began
 * (by `index`, several with `candidateCount`) given its finishReason.
 */
function ends(chunks: readonly unknown[]): boolean {
  const open = new Map<number, boolean>();
  for (const chunk of chunks) {
    if (!isObj(chunk)) continue;
    if (isObj(chunk.promptFeedback) && typeof chunk.promptFeedback.blockReason === 'string') return true;
    for (const c of Array.isArray(chunk.candidates) ? chunk.candidates : []) {
      if (!isObj(c)) continue;
      const i = typeof c.index === 'number' ? c.index : 0;
      const done = typeof c.finishReason === 'string' && c.finishReason !== '' && c.finishReason !== 'FINISH_REASON_UNSPECIFIED';
      if (done || !open.has(i)) open.set(i, !done);
    }
  }
  return open.size > 0 && ![...open.values()].includes(true);
}

const isStreamRoute = (route: RouteMatch | undefined): boolean => route?.route.operation === 'streamGenerateContent';

/** The one response a stream's chunks add up to: parts joined per candidate, the last of everything else. */
function merge(chunks: readonly unknown[]): Obj | undefined {
  const out: Obj = {};
  const cands = new Map<number, Obj>();
  for (const chunk of chunks) {
    if (!isObj(chunk)) return undefined;
    if (isObj(chunk.error)) return undefined;
    for (const k of Object.keys(chunk)) if (k !== 'candidates') put(out, k, copy(chunk[k]));
    if (!Array.isArray(chunk.candidates)) continue;
    for (const c of chunk.candidates) {
      if (!isObj(c)) continue;
      const index = typeof c.index === 'number' ? c.index : 0;
      let cur = cands.get(index);
      if (!cur) cands.set(index, (cur = { content: { role: 'model', parts: [] as unknown[] } }));
      for (const k of Object.keys(c)) if (k !== 'content') put(cur, k, copy(c[k]));
      const content = c.content;
      if (!isObj(content)) continue;
      const into = cur.content as Obj;
      if (typeof content.role === 'string') into.role = content.role;
      const parts = into.parts as Obj[];
      for (const p of Array.isArray(content.parts) ? content.parts : []) {
        if (!isObj(p)) continue;
        const last = parts[parts.length - 1];
        // Text arrives in pieces: consecutive text parts of the same kind (thought or not) join.
        if (last && typeof last.text === 'string' && typeof p.text === 'string' && last.thought === p.thought && p.thoughtSignature === undefined) {
          last.text += p.text;
        } else {
          parts.push(copy(p) as Obj);
        }
      }
    }
  }
  if (cands.size > 0) out.candidates = [...cands.keys()].sort((a, b) => a - b).map((k) => cands.get(k));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Errors

/** google.rpc.Code names by HTTP status, as Google's APIs send them. */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/**
 * How a `generateContent` answer reads: each candidate's text parts (thoughts left out of the
 * text, read as other content with the parts of other kinds), its function calls,
 * `finishReason` (SAFETY and PROHIBITED_CONTENT are refusals), and usage with thinking tokens
 * counted as output (they are billed as output).
 *
 * @example
 * readGeminiAnswer({ candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP' }] })?.texts // ['hi']
 */
export function readGeminiAnswer(a: Obj): AnswerRead | undefined {
  if (!Array.isArray(a.candidates)) return undefined;
  const c = newRead('gemini');
  const candidates: unknown[] = [];
  const messages: unknown[][] = [];
  // One entry per candidate, so each compares with its own.
  const other: unknown[] = [];
  for (const cand of a.candidates) {
    if (!isObj(cand)) continue;
    // Each candidate's content ({ role: 'model', parts }) is what a follow-up sends back.
    if (isObj(cand.content)) messages.push([cand.content]);
    const content = isObj(cand.content) ? cand.content : {};
    let text = '';
    const kinds: unknown[] = [];
    // Thoughts and parts of other kinds (code and its result, inline data), as content.
    const more: Obj[] = [];
    for (const p of Array.isArray(content.parts) ? content.parts : []) {
      if (!isObj(p)) continue;
      if (p.thought === true) {
        kinds.push({ thought: true });
        // A stream's thought pieces join into parts where a thoughtSignature happens to come:
        // consecutive thoughts are one text here, so only their words are compared.
        const last = more[more.length - 1];
        if (last?.thought === true && typeof last.text === 'string' && typeof p.text === 'string') more[more.length - 1] = { ...last, text: last.text + p.text };
        else more.push(p);
      } else if (typeof p.text === 'string') text += p.text;
      else if (isObj(p.functionCall)) c.toolCalls.push({ name: String(p.functionCall.name ?? ''), args: p.functionCall.args });
      else {
        kinds.push(Object.keys(p).sort());
        more.push(p);
      }
    }
    other.push({ parts: more });
    c.texts.push(text);
    c.finish.push(String(cand.finishReason ?? ''));
    if (cand.finishReason === 'SAFETY' || cand.finishReason === 'PROHIBITED_CONTENT') c.refusal = String(cand.finishReason);
    const { content: _c, finishReason: _f, safetyRatings: _s, citationMetadata: _m, avgLogprobs: _l, ...crest } = cand;
    candidates.push({ ...crest, parts: kinds });
  }
  const u = isObj(a.usageMetadata) ? a.usageMetadata : undefined;
  if (u) c.usage = { input: count(u.promptTokenCount) ?? 0, output: (count(u.candidatesTokenCount) ?? 0) + (count(u.thoughtsTokenCount) ?? 0) };
  // The response id, the serving model's version and the creation time change on every call.
  const { candidates: _cs, usageMetadata: _u, responseId: _r, modelVersion: _v, createTime: _t, ...rest } = a;
  c.rest = { ...rest, candidates };
  c.other = other;
  if (typeof a.modelVersion === 'string') c.model = a.modelVersion;
  if (messages.length > 0) c.messages = messages;
  return c;
}

/**
 * The Gemini module.
 *
 * @example
 * gemini.normalize({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, { shape: 'gemini', opts: {} }).view
 * // { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], options: {} }
 * JSON.parse(gemini.errorAnswer(new TapedeckError('E_MISS', 'model differs'), 404).body).error.status // 'NOT_FOUND'
 */
export const gemini: ProviderModule = {
  name: 'gemini',
  routes: [
    route('generateContent', 'gemini'),
    route('streamGenerateContent', 'gemini', true),
    route('countTokens', 'gemini'),
    route('embedContent', 'gemini-embeddings'),
    route('batchEmbedContents', 'gemini-embeddings'),
  ],
  shapes: ['gemini', 'gemini-embeddings'],
  rawKeys: false,

  detect(body) {
    // Only bodies no chat-family shape claims (those have `messages`, `input` or `prompt`).
    if (['messages', 'input', 'prompt', 'instructions', 'previous_response_id'].some((k) => body[k] !== undefined)) return undefined;
    if (Array.isArray(body.contents) || isObj(body.contents) || isObj(body.generateContentRequest) || isObj(body.generate_content_request)) return 'gemini';
    if (isObj(body.content) && body.content.parts !== undefined) return 'gemini-embeddings';
    if (Array.isArray(body.requests) && body.requests.length > 0 && body.requests.every((r) => isObj(r) && isObj(r.content))) return 'gemini-embeddings';
    return undefined;
  },

  normalize(body, ctx) {
    if (!isObj(body)) throw requestError(`A request body must be a JSON object; got ${kindOf(body)}.`, '$', HINT);
    return ctx.shape === 'gemini-embeddings' ? embeddings(body, ctx, ctx.route) : conversation(body, ctx, ctx.route);
  },

  assemble(bytes, contentType, route) {
    const type = contentType?.split(';')[0]?.trim().toLowerCase();
    if (type !== 'text/event-stream' && !isStreamRoute(route)) return undefined;
    const chunks = chunksOf(bytes, contentType);
    if (!chunks || !ends(chunks)) return undefined;
    return merge(chunks);
  },

  continueRequest: (request, _shape, more) => ({ ...request, contents: [...(Array.isArray(request.contents) ? request.contents : []), ...more] }),

  complete(bytes, contentType, route) {
    const type = contentType?.split(';')[0]?.trim().toLowerCase();
    if (!isStreamRoute(route) && type !== 'text/event-stream') return undefined;
    if (type !== 'text/event-stream') {
      // One JSON object (an error answer, not a stream) is judged by its status, not here.
      const text = decoder.decode(bytes).trimStart();
      if (text.startsWith('{')) return undefined;
    }
    const chunks = chunksOf(bytes, contentType);
    if (!chunks) return false;
    if (chunks.some((c) => isObj(c) && isObj(c.error))) return false;
    return ends(chunks);
  },

  speaks: (path, headers) => /\/(?:models|tunedModels)\/[^/:]+:[A-Za-z]+$/.test(path) || headers['x-goog-api-key'] !== undefined || headers['x-goog-api-client'] !== undefined,

  errorAnswer(e: TapedeckError, status: number, style?: ErrorStyle): ErrorAnswer {
    // @google/genai puts the whole body, as JSON text, in its ApiError's message: it is kept to
    // the three members Google sends, plus the tapedeck code as an ErrorInfo reason.
    return {
      body: safeJSON({
        error: {
          code: status,
          message: errorMessage(e, style),
          status: STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION'),
          details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: e.code, domain: 'tapedeck' }],
        },
      }),
    };
  },

  fault(fault: StatusFault, message: string): FaultAnswer {
    // Google's status names: quota is RESOURCE_EXHAUSTED, an overloaded model is a 503 UNAVAILABLE.
    const status = fault === '529' ? 503 : Number(fault);
    return { status, body: JSON.stringify({ error: { code: status, message, status: STATUS_NAMES[status] } }) };
  },

  credentials: { headers: ['x-goog-api-key', 'authorization'], query: ['key'], fields: [] },
};
