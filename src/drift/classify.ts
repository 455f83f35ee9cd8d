// How an answer changed between two recordings of the same request, in classes a reviewer can
// act on. Each answer is split, by its shape, into what the application reads (text, tool calls,
// finish reason and refusal, JSON output) and the rest of the envelope; each part is compared on
// its own, so a new call id is noise while new call arguments are a change.
//
// Classes, most severe first (a pair may have several; its `primary` class is the first):
//   status      the HTTP status changed (an error now, or no longer; for MCP, an error answer)
//   structure   the answer's members or their types changed, its shape changed, JSON output
//               no longer parses or no longer fits the schema the request asked for, or another
//               model answered (not a new snapshot of the same one)
//   tool-calls  tool calls added, removed, renamed, or called with other arguments
//   finish      finish / stop reason or refusal changed
//   text        the text changed (word diff and similarity), or what else the application may
//               read (reasoning, server tool results, audio transcripts, citations); for plain
//               JSON answers, a value changed; with the same text, token usage beyond the
//               tolerance
//   stream      the same content streamed differently: other event types or order, or another
//               number of events; or one side streamed and the other did not
//   benign      only ids, timestamps, system_fingerprint (its value, or whether it is there),
//               the snapshot of the model that answered, usage within the tolerance, whitespace,
//               opaque members (signatures, encrypted content, audio bytes), or other envelope
//               values changed
//   identical   the same answer

import { isBytes, sameBytes } from '../bytes.ts';
import { canonicalize, sha256Hex } from '../core/index.ts';
import type { Answer } from './answer.ts';
import { errorMessage } from './error-answer.ts';
import { jsonDiff, jsonType, leafName, type JsonChange } from './json-diff.ts';
import { requestedSchema, schemaProblems } from './schema.ts';
import { diffText, type DiffOp } from './text-diff.ts';
import { compareUsage, type Usage, type UsageChange } from './usage.ts';

/** A drift class; see the module comment for what each means. */
export type DriftClass = 'status' | 'structure' | 'tool-calls' | 'finish' | 'text' | 'stream' | 'benign' | 'identical';

/** Every class, most severe first. */
export const DRIFT_CLASSES: readonly DriftClass[] = Object.freeze(['status', 'structure', 'tool-calls', 'finish', 'text', 'stream', 'benign', 'identical'] as const);

/** One tool call change. */
export interface ToolCallChange {
  change: 'added' | 'removed' | 'renamed' | 'arguments';
  /** Position of the call in the answer. */
  index: number;
  name: string;
  /** The old name of a renamed call. */
  oldName?: string;
  oldArguments?: unknown;
  newArguments?: unknown;
  /** For `arguments`, and `renamed` when the arguments changed too: what changed in them. */
  changes?: JsonChange[];
}

/** A tool call as compared: its name and its arguments (parsed JSON where they parse). */
export interface ToolCall {
  name: string;
  args: unknown;
}

/** What the classes of a pair are based on, for the reports. */
export interface DriftDetails {
  status?: { old: number; new: number };
  /**
   * The error each side answered with, for the `status` class; absent on a side that answered
   * without one. HTTP answers: what the API's error body says (`invalid_request_error
   * model_not_found: The model ... was retired`). MCP exchanges (mcp-diff.ts): the JSON-RPC error
   * (`error -32602: Unknown tool`) or a tool's own (`tool error: Access denied`).
   */
  error?: { old?: string; new?: string };
  text?: { similarity: number; ops: DiffOp[] };
  toolCalls?: ToolCallChange[];
  structure?: string[];
  finish?: { old: string[]; new: string[]; oldRefusal?: string; newRefusal?: string };
  stream?: { oldEvents: number; newEvents: number; oldOrder: string[]; newOrder: string[] };
  /**
   * Token usage that changed beyond the tolerance (within it, it is a `benign` phrase). With the
   * same text and the same tool calls, it is what the pair is classed `text` for, and `text` is
   * then absent: the words did not change.
   */
  usage?: UsageChange;
  /**
   * The model the answer names (`model`, Gemini's `modelVersion`), when it changed: a new snapshot
   * of the same model is noise, another model a `structure` change.
   */
  model?: { old: string; new: string };
  /** The noise that changed: one phrase each. */
  benign?: string[];
}

export interface Classification {
  classes: DriftClass[];
  primary: DriftClass;
  details: DriftDetails;
}

export interface ClassifyOptions {
  /** Largest relative change of token usage that is still noise (default 0.2). */
  usageTolerance?: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The parts of an answer the application reads, and the rest of its envelope. */
interface Content {
  texts: string[];
  calls: { name: string; args: unknown }[];
  finish: string[];
  refusal: string;
  usage: Usage | undefined;
  rest: unknown;
  /** What else the application may read (AnswerRead.other), noise and opaque members left out. */
  other: unknown[];
  /** The same as the answer has it, for naming the noise that changed. */
  rawOther: unknown[];
}

/**
 * What the classifier compares of an answer: its provider module's reading (src/providers,
 * readAnswer), else the text of a text answer, else the whole body as the envelope.
 */
function contentOf(a: Answer): Content {
  const r = a.read;
  if (r && r.shape !== 'json') return { texts: r.texts, calls: r.toolCalls, finish: r.finish, refusal: r.refusal, usage: r.usage, rest: r.rest, other: (r.other ?? []).map((v) => comparable(v)), rawOther: r.other ?? [] };
  const b = a.body;
  if (a.shape === 'text') return { texts: [String(b)], calls: [], finish: [], refusal: '', usage: undefined, rest: undefined, other: [], rawOther: [] };
  return { texts: [], calls: [], finish: [], refusal: '', usage: undefined, rest: isBytes(b) ? { bytes: Buffer.from(b).toString('base64') } : b, other: [], rawOther: [] };
}

// Members whose values differ on every call: ids, creation times, the serving fingerprint, the
// model snapshot name an answer reports.
export const NOISE = /^(id|object_id|created|created_at|completed_at|system_fingerprint|model|request_id|service_tier|\w+_id|\w+_at|timestamp)$/;

// Members of the other content that are opaque and new with every answer, the same content or
// not: a thinking block's signature (Anthropic's and Bedrock's `signature`, Gemini's
// `thoughtSignature`), reasoning and search results sent back encrypted (`encrypted_content`,
// `encrypted_index`, Bedrock's `redactedContent`).
const OPAQUE = /^(signature|thoughtSignature|thought_signature|encrypted_content|encrypted_index|redactedContent)$/;
// Objects whose `data` is such a member: redacted (encrypted) thinking. Under `audio`, `data` is
// the speech itself, synthesized anew on every call; its transcript says what it says.
const OPAQUE_DATA = new Set(['redacted_thinking', 'reasoning.encrypted']);

/**
 * The other content of an answer as it is compared: without the members that differ on every
 * call (NOISE: ids and times; OPAQUE: signatures, encrypted content, audio bytes) and without
 * null members or empty lists (null is as good as absent, and `annotations: []` holds no
 * citation), at any depth: the envelope says such a member came or went, the content is the same.
 *
 * @example
 * comparable({ type: 'thinking', thinking: 'I approve.', signature: 'EqQB...', citations: [] }) // { type: 'thinking', thinking: 'I approve.' }
 */
export function comparable(v: unknown, key = ''): unknown {
  if (Array.isArray(v)) return v.map((x) => comparable(x));
  if (!isObj(v)) return v;
  const opaqueData = key === 'audio' || OPAQUE_DATA.has(String(v.type));
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null || x === undefined || (Array.isArray(x) && x.length === 0) || NOISE.test(k) || OPAQUE.test(k) || (k === 'data' && opaqueData)) continue;
    out[k] = comparable(x, k);
  }
  return out;
}

// A string this long in the base64 (or base64url) alphabet, a data: URL's included, is bytes (an
// image, a file): compared whole, shown by its digest, or one of them would fill the report.
const OPAQUE_TEXT = /^(data:[\w.+/-]+;base64,)?[A-Za-z0-9+/_-]{200,}={0,2}$/;

/**
 * Other content as the text diff shows it: pretty JSON, long opaque strings as their SHA-256
 * prefix and length.
 *
 * @example
 * shownOther([{ type: 'image_generation_call', result: 'iVBORw0KGgo...' }])
 * // '[\n  {\n    "type": "image_generation_call",\n    "result": "sha256:3f9a0c1d2e4b… (40000 chars)"\n  }\n]'
 */
export function shownOther(other: readonly unknown[]): string {
  const short = (_k: string, v: unknown) => (typeof v === 'string' && OPAQUE_TEXT.test(v) ? `sha256:${sha256Hex(v).slice(0, 12)}… (${v.length} chars)` : v);
  return JSON.stringify(other, short, 2);
}

const decoder = new TextDecoder();
const canon = (v: unknown) => decoder.decode(canonicalize(v ?? null));
const sameJSON = (a: unknown, b: unknown) => {
  try {
    return canon(a) === canon(b);
  } catch {
    return false;
  }
};

function bytesEqual(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  return a !== undefined && b !== undefined && sameBytes(a, b);
}

/** The event sequence with runs of one type counted once: its order, whatever the text's length. */
function order(events: readonly string[]): string[] {
  const out: string[] = [];
  for (const e of events) if (out[out.length - 1] !== e) out.push(e);
  return out;
}

/**
 * How the tool calls of an answer changed, call by call in answer order (HTTP answers and
 * realtime sessions alike); arguments are compared as JSON, so member order is no change.
 *
 * @example
 * toolCallChanges([{ name: 'get_weather', args: { city: 'Paris' } }], [{ name: 'get_weather', args: { city: 'Lyon' } }])
 * // [{ change: 'arguments', index: 0, name: 'get_weather', ..., changes: [{ path: 'city', kind: 'value', old: 'Paris', new: 'Lyon' }] }]
 */
export function toolCallChanges(a: readonly ToolCall[], b: readonly ToolCall[]): ToolCallChange[] {
  const out: ToolCallChange[] = [];
  const n = Math.max(a.length, b.length);
  const oldNames = new Set(a.map((c) => c.name));
  const newNames = new Set(b.map((c) => c.name));
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (!x) out.push({ change: 'added', index: i, name: y!.name, newArguments: y!.args });
    else if (!y) out.push({ change: 'removed', index: i, name: x.name, oldArguments: x.args });
    else if (x.name !== y.name) {
      // Another tool in this place: a rename when the old tool is gone from the answer.
      // Its arguments are compared too: a rename can hide an argument gone or changed.
      if (!newNames.has(x.name) && !oldNames.has(y.name)) out.push({ change: 'renamed', index: i, name: y.name, oldName: x.name, oldArguments: x.args, newArguments: y.args, ...(sameJSON(x.args, y.args) ? {} : { changes: jsonDiff(x.args, y.args) }) });
      else {
        out.push({ change: 'removed', index: i, name: x.name, oldArguments: x.args });
        out.push({ change: 'added', index: i, name: y.name, newArguments: y.args });
      }
    } else if (!sameJSON(x.args, y.args)) {
      out.push({ change: 'arguments', index: i, name: y.name, oldArguments: x.args, newArguments: y.args, changes: jsonDiff(x.args, y.args) });
    }
  }
  return out;
}

function parseJSONText(s: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch {
    return { ok: false };
  }
}

/**
 * One JSON change in words, as the structure lines say it.
 *
 * @example
 * describe({ path: 'result.tools[2]', kind: 'added', new: {} }) // 'result.tools[2]: added (object)'
 */
export function describe(c: JsonChange): string {
  const show = (v: unknown) => {
    const t = jsonType(v);
    return t === 'object' || t === 'array' ? t : JSON.stringify(v);
  };
  if (c.kind === 'added') return `${c.path}: added (${jsonType(c.new)})`;
  if (c.kind === 'removed') return `${c.path}: removed (was ${jsonType(c.old)})`;
  if (c.kind === 'type') return `${c.path}: ${jsonType(c.old)} -> ${jsonType(c.new)}`;
  return `${c.path}: ${show(c.old)} -> ${show(c.new)}`;
}

/** The answered model's change, when `c` is one: the envelope's `model` (Gemini: `modelVersion`). */
function answeredModel(c: JsonChange): { old: string; new: string } | undefined {
  if ((c.path !== 'model' && c.path !== 'modelVersion') || c.kind !== 'value' || typeof c.old !== 'string' || typeof c.new !== 'string') return undefined;
  return { old: c.old, new: c.new };
}

// What tells two snapshots of one model apart, at the end of its name: a date (2024-07-18,
// 20241022, @20240620), a short release number (0125, 002), a version (-v1:0), -latest, -preview.
const SNAPSHOT = /(?:-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-\d{3,4}|-v\d+(?::\d+)?|-latest|-preview)+$/;

/**
 * Whether two model names are snapshots of the same model (`gpt-4o-mini-2024-07-18` and
 * `gpt-4o-mini-2025-01-01`), rather than two models (`gpt-4o-mini` and `gpt-3.5-turbo-0125`).
 *
 * @example
 * sameModel('claude-3-5-sonnet-20240620', 'claude-3-5-sonnet-20241022') // true
 */
function sameModel(a: string, b: string): boolean {
  const base = (m: string) => m.toLowerCase().replace(/^models\//, '').replace(SNAPSHOT, '');
  return base(a) === base(b);
}

/**
 * Classifies how the answer to a request changed from `before` to `after`. `request` is the
 * (new) request body: its response format decides whether the text is JSON output to check.
 *
 * @example
 * classifyPair(answerOf(oldRecord)!, answerOf(newRecord)!, newRequestBody).classes // ['text']
 */
export function classifyPair(before: Answer, after: Answer, request: unknown, opts: ClassifyOptions = {}): Classification {
  const tolerance = opts.usageTolerance ?? 0.2;
  const classes = new Set<DriftClass>();
  const details: DriftDetails = {};
  const benign: string[] = [];
  const done = (): Classification => {
    if (benign.length) details.benign = benign;
    if (classes.size === 0) classes.add(benign.length || !sameJSON(before.body, after.body) ? 'benign' : 'identical');
    const list = DRIFT_CLASSES.filter((c) => classes.has(c));
    return { classes: list, primary: list[0]!, details };
  };
  if (before.status === after.status && bytesEqual(before.raw, after.raw)) return { classes: ['identical'], primary: 'identical', details: {} };
  if (before.status !== after.status) {
    classes.add('status');
    details.status = { old: before.status, new: after.status };
    // Why a call fails now (or failed before): the API's own words, which the status alone lacks.
    const oldError = before.status >= 400 ? errorMessage(before.body) : undefined;
    const newError = after.status >= 400 ? errorMessage(after.body) : undefined;
    if (oldError !== undefined || newError !== undefined) details.error = { ...(oldError !== undefined ? { old: oldError } : {}), ...(newError !== undefined ? { new: newError } : {}) };
    // An error on one side only: its body is another kind of document, nothing more to compare.
    if ((before.status >= 400) !== (after.status >= 400)) return done();
  }
  if (before.streamed !== after.streamed) {
    classes.add('stream');
    details.stream = { oldEvents: before.events.length, newEvents: after.events.length, oldOrder: order(before.events), newOrder: order(after.events) };
  }
  if (before.shape !== after.shape) {
    classes.add('structure');
    details.structure = [`answer shape: ${before.shape} -> ${after.shape}`];
    return done();
  }
  if (before.shape === 'bytes') {
    if (!bytesEqual(before.body as Uint8Array, after.body as Uint8Array)) {
      classes.add('text');
      details.text = { similarity: 0, ops: [['-', `(${(before.body as Uint8Array).length} bytes)`], ['+', `(${(after.body as Uint8Array).length} bytes)`]] };
    }
    return done();
  }
  const a = contentOf(before);
  const b = contentOf(after);
  const structure: string[] = details.structure ?? [];

  // Text
  const ta = a.texts.join('\n\n');
  const tb = b.texts.join('\n\n');
  let textChanged = false;
  if (ta !== tb) {
    const d = diffText(ta, tb);
    if (d.whitespaceOnly) benign.push('whitespace in the text');
    else {
      textChanged = true;
      classes.add('text');
      details.text = { similarity: d.similarity, ops: d.ops };
    }
  }
  // What else the application reads: reasoning, server tool results, transcripts, citations.
  // Changed, it is shown after the text in one diff, so a reviewer sees both changes.
  if (!sameJSON(a.other, b.other)) {
    textChanged = true;
    classes.add('text');
    const both = (text: string, other: unknown[]) => [text, shownOther(other)].filter((s) => s !== '').join('\n\n');
    const d = diffText(both(ta, a.other), both(tb, b.other));
    details.text = { similarity: d.similarity, ops: d.ops };
  } else {
    // The same content with new signatures or encrypted members: named as the noise it is (an
    // item's id or time is said nowhere, as the envelope's are said once).
    const names = [...new Set(jsonDiff(a.rawOther, b.rawOther).map((c) => leafName(c.path)).filter((n) => n !== '' && !NOISE.test(n)))];
    if (names.length) benign.push(`opaque members changed: ${names.join(', ')}`);
  }
  // JSON output the request asked for
  const wanted = requestedSchema(request);
  if (wanted && (ta !== '' || tb !== '')) {
    const pa = parseJSONText(ta);
    const pb = parseJSONText(tb);
    if (pa.ok && !pb.ok) structure.push('output: no longer JSON');
    else if (!pa.ok && pb.ok) structure.push('output: now JSON (was not)');
    else if (pa.ok && pb.ok) {
      for (const c of jsonDiff(pa.value, pb.value)) if (c.kind !== 'value') structure.push(`output ${describe(c)}`);
      if (wanted.schema !== undefined) {
        const was = new Set(schemaProblems(wanted.schema, pa.value));
        for (const p of schemaProblems(wanted.schema, pb.value)) if (!was.has(p)) structure.push(`output does not fit the schema: ${p}`);
      }
    }
  }
  // Tool calls
  const calls = toolCallChanges(a.calls, b.calls);
  if (calls.length) {
    classes.add('tool-calls');
    details.toolCalls = calls;
  }
  // Finish reason and refusal
  if (a.finish.join('|') !== b.finish.join('|') || a.refusal !== b.refusal) {
    classes.add('finish');
    details.finish = { old: a.finish, new: b.finish, ...(a.refusal ? { oldRefusal: a.refusal } : {}), ...(b.refusal ? { newRefusal: b.refusal } : {}) };
  }
  // The rest of the envelope, usage counts left to the comparison below. A member left out is
  // removed, never null: strip gives usage back only to an answer that has it.
  const strip = (v: unknown) => (isObj(v) && isObj(v.usage) ? { ...v, usage: Object.fromEntries(Object.entries(v.usage).map(([k, x]) => [k, typeof x === 'number' ? 0 : x])) } : v);
  const envelope = jsonDiff(strip(a.rest), strip(b.rest));
  // Usage: within the tolerance, noise; beyond it, a change of its own, said with its numbers
  // (with the same text a similarity of 100% would read as no change at all). A count of another
  // type (a string) cannot be read as a number: its structure line says it, and no count is claimed.
  const usageRetyped = envelope.some((c) => c.kind === 'type' && /^usage(?:Metadata)?(?:[.[]|$)/.test(c.path));
  const u = usageRetyped ? { beyond: false, note: undefined } : compareUsage(a.usage, b.usage, tolerance);
  if (u.beyond) {
    if (!textChanged && calls.length === 0) classes.add('text');
    details.usage = { old: { ...a.usage }, new: { ...b.usage }, tolerance };
  } else if (u.note) benign.push(u.note);
  const generic = before.shape === 'json' || before.shape === 'none';
  const contentValues: string[] = [];
  for (const c of envelope) {
    const name = leafName(c.path);
    const answered = answeredModel(c);
    if (answered) {
      details.model = answered;
      if (sameModel(answered.old, answered.new)) benign.push(`model ${answered.old} -> ${answered.new}`);
      else structure.push(`${c.path}: ${answered.old} -> ${answered.new} (another model answered)`);
    } else if (c.kind === 'value' || (c.kind === 'type' && (c.old === null || c.new === null))) {
      if (NOISE.test(name)) benign.push(`${c.path} changed`);
      else if (generic) contentValues.push(describe(c));
      else benign.push(describe(c));
    } else if (NOISE.test(name) && c.kind !== 'type') {
      // Noise that comes and goes: OpenAI sends system_fingerprint on some days and models only,
      // and a hand-written answer seldom has one; its presence says no more than its value.
      benign.push(describe(c));
    } else structure.push(describe(c));
  }
  if (contentValues.length) {
    // A plain JSON answer has no text of its own: a changed value is its content changing.
    classes.add('text');
    const pretty = (v: unknown) => JSON.stringify(v, null, 2) ?? '';
    const d = diffText(pretty(before.body), pretty(after.body));
    details.text = { similarity: d.similarity, ops: d.ops };
  }
  if (structure.length) {
    classes.add('structure');
    details.structure = structure;
  }
  // Stream shape: the order of event types, or their count when the content is the same.
  if (before.streamed && after.streamed) {
    const oa = order(before.events);
    const ob = order(after.events);
    // A new text, other tool calls or another ending change the events too; only the same
    // content streamed differently is a change of the stream itself.
    const sameContent = !classes.has('text') && !classes.has('tool-calls') && !classes.has('finish');
    if (sameContent && (oa.join(',') !== ob.join(',') || before.events.length !== after.events.length)) {
      classes.add('stream');
      details.stream = { oldEvents: before.events.length, newEvents: after.events.length, oldOrder: oa, newOrder: ob };
    }
  }
  return done();
}
