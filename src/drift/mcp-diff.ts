/**
 * `tapedeck diff` for MCP exchanges (docs/mcp.md): the exchanges of a tape pair as replay finds
 * them, by the client's method and the key of its params, the k-th old recording of a call with
 * the k-th new one; a call whose key changed (other arguments, or a record stored under its
 * context key) pairs with the first unpaired old exchange of the same method and tool, prompt or
 * resource, and the report says what changed in its params (the old exchange of a call whose
 * copy a later record run of the session kept without making the call again included: kept.ts).
 * What is left is added or removed.
 *
 * An answer is classed by what an agent reads in it:
 *   status     an error answer now, or no longer: a JSON-RPC error, or a tool's `isError` result;
 *              or a JSON-RPC error with another code
 *   structure  members of the result added, removed or of another type (a tool gone from
 *              `tools/list`, `structuredContent` gained a field); server requests (sampling,
 *              elicitation) made during the call added, gone or reordered
 *   text       the text changed (every `text` member: tool content, resource contents, prompt
 *              messages; an error's message), as a word diff; another value of the result
 *   benign     `_meta`, ids and timestamps, the server's notifications (progress, logging: they
 *              come on timers), whitespace in the text
 *   identical  the same answer: the JSON-RPC id and member order are not compared
 *
 * drift/ may not import mcp/ (test/imports.test.ts), so a server message is parsed here from the
 * record as docs/mcp.md, "On the tape", describes it.
 */
import { canonicalize } from '../core/index.ts';
import { isMcpRecord, type McpRecord } from '../store/records.ts';
import { describe, NOISE, type Classification, type DriftClass, type DriftDetails } from './classify.ts';
import { jsonDiff, leafName } from './json-diff.ts';
import type { TapeSide } from './pair.ts';
import { keptCopies, mayReplaceKept, mcpConversation, runsOf } from './kept.ts';
import { diffText } from './text-diff.ts';
import { unifyMasks, withMaskedNote } from './masks.ts';
import { isBytes } from '../bytes.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** One MCP exchange on one side. */
export interface McpRecorded {
  /** Position of the record in its tape. */
  index: number;
  record: McpRecord;
  answer: McpAnswerRead;
}

/** What the server sent during an exchange, as compared. */
export interface McpAnswerRead {
  /** The answer's result, when it answered with one. */
  result?: unknown;
  /** The answer's JSON-RPC error, when it answered with one. */
  error?: { code: unknown; message: unknown; data?: unknown };
  /** Whether there was an answer at all (a client notification has none). */
  answered: boolean;
  /** The methods of the server's own requests during the exchange (sampling, elicitation, roots), in order. */
  requests: string[];
  /** The methods of the server's notifications during the exchange, in order. */
  notifications: string[];
}

/** An old and a new recording of (nearly) the same call, or one side alone. */
export interface McpPairing {
  tape: string;
  /** `mcp <method> <tool, prompt or resource>`. */
  route: string;
  old?: McpRecorded;
  new?: McpRecorded;
  /** For a pair whose params changed: what changed (empty when the key is the same). */
  requestChange: string[];
  classification?: Classification;
  /** The new exchange was kept from an earlier run by a later record run of its session that did not make the call again (kept.ts). */
  kept?: true;
}

const utf8 = new TextDecoder('utf-8');

/**
 * The server's answer and messages of an exchange: version 2 records keep each message as its
 * JSON text (`message`), version 1 the parsed `result` / `error` beside `response: true`.
 *
 * @example
 * mcpAnswerOf(record).result // { content: [{ type: 'text', text: 'hello notes\n' }] }
 */
export function mcpAnswerOf(rec: McpRecord): McpAnswerRead {
  const out: McpAnswerRead = { answered: false, requests: [], notifications: [] };
  for (const ev of rec.events as unknown[]) {
    if (!isObj(ev)) continue;
    if (ev.response === true) {
      let m: unknown = ev;
      if (isBytes(ev.message)) {
        const text = utf8.decode(ev.message);
        try {
          m = JSON.parse(text);
        } catch {
          // Not JSON (a damaged record): compared as the text it holds.
          m = { result: text };
        }
      }
      out.answered = true;
      if (isObj(m) && isObj(m.error)) out.error = m.error as McpAnswerRead['error'];
      else out.result = isObj(m) ? m.result : m;
    } else if (isObj(ev.request) && typeof ev.request.method === 'string') out.requests.push(ev.request.method);
    else if (isObj(ev.notification) && typeof ev.notification.method === 'string') out.notifications.push(ev.notification.method);
  }
  return out;
}

/**
 * A call as the report names it: the method, and the tool, prompt or resource it is about.
 *
 * @example
 * mcpRoute({ method: 'tools/call', params: { name: 'read_text_file', arguments: {} } }) // 'mcp tools/call read_text_file'
 */
export function mcpRoute(request: { method: string; params?: unknown }): string {
  const p = request.params;
  const what = isObj(p) ? (typeof p.name === 'string' ? p.name : typeof p.uri === 'string' ? p.uri : undefined) : undefined;
  return what === undefined ? `mcp ${request.method}` : `mcp ${request.method} ${what}`;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** Every string member named `text` (tool content, resource contents, prompt messages), in document order. */
function textsOf(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) textsOf(x, out);
  else if (isObj(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (k === 'text' && typeof x === 'string') out.push(x);
      else textsOf(x, out);
    }
  }
  return out;
}

/** The value with its `text` strings emptied: compared apart, they are not compared again. */
function withoutTexts(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutTexts);
  if (!isObj(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'text' && typeof x === 'string' ? '' : withoutTexts(x)]));
}

/** 'rpc' for a JSON-RPC error answer, 'tool' for a tool's error result, undefined for none. */
function errorKind(a: McpAnswerRead): 'rpc' | 'tool' | undefined {
  if (a.error) return 'rpc';
  return isObj(a.result) && a.result.isError === true ? 'tool' : undefined;
}

/** An error answer in one line. */
function errorText(a: McpAnswerRead): string | undefined {
  const kind = errorKind(a);
  if (kind === 'rpc') return clip(`error ${String(a.error!.code)}: ${String(a.error!.message ?? '')}`, 160);
  if (kind === 'tool') return clip(`tool error: ${textsOf((a.result as Obj).content).join(' ')}`.trim(), 160);
  return undefined;
}

const decoder = new TextDecoder();
function same(a: unknown, b: unknown): boolean {
  try {
    return decoder.decode(canonicalize(a ?? null)) === decoder.decode(canonicalize(b ?? null));
  } catch {
    return false;
  }
}

const ORDER: readonly DriftClass[] = ['status', 'structure', 'text', 'benign'];

/**
 * The classes of two recordings of one MCP call (see the module comment).
 *
 * @example
 * classifyExchanges(mcpAnswerOf(oldRecord), mcpAnswerOf(newRecord)).classes // ['text']
 */
export function classifyExchanges(a: McpAnswerRead, b: McpAnswerRead): Classification {
  const classes = new Set<DriftClass>();
  const details: DriftDetails = {};
  const benign: string[] = [];
  const structure: string[] = [];
  const done = (): Classification => {
    if (structure.length) {
      classes.add('structure');
      details.structure = structure;
    }
    if (benign.length) {
      classes.add('benign');
      details.benign = benign;
    }
    const list = ORDER.filter((c) => classes.has(c));
    return list.length === 0 ? { classes: ['identical'], primary: 'identical', details } : { classes: list, primary: list[0]!, details };
  };
  const ka = errorKind(a);
  const kb = errorKind(b);
  if (ka !== kb || (ka === 'rpc' && !same(a.error!.code, b.error!.code))) {
    classes.add('status');
    const old = errorText(a);
    const now = errorText(b);
    details.error = { ...(old !== undefined ? { old } : {}), ...(now !== undefined ? { new: now } : {}) };
    // A JSON-RPC error on one side only: the other side is a result, nothing more to compare.
    if ((ka === 'rpc') !== (kb === 'rpc')) return done();
  }
  if (a.answered !== b.answered) structure.push(`answer: ${a.answered ? 'given' : 'none'} -> ${b.answered ? 'given' : 'none'}`);
  const da = a.error ? { message: a.error.message, data: a.error.data } : a.result;
  const db = b.error ? { message: b.error.message, data: b.error.data } : b.result;
  // The text: what an agent hands its model.
  const ta = a.error ? [String(a.error.message ?? '')] : textsOf(a.result);
  const tb = b.error ? [String(b.error.message ?? '')] : textsOf(b.result);
  const joinedA = ta.join('\n\n');
  const joinedB = tb.join('\n\n');
  if (joinedA !== joinedB) {
    const d = diffText(joinedA, joinedB);
    if (d.whitespaceOnly) benign.push('whitespace in the text');
    else {
      classes.add('text');
      details.text = { similarity: d.similarity, ops: d.ops };
    }
  }
  // The rest of the answer, its texts set aside.
  const restA = a.error ? { data: a.error.data } : withoutTexts(a.result);
  const restB = b.error ? { data: b.error.data } : withoutTexts(b.result);
  let valueChanged = false;
  for (const c of jsonDiff(restA, restB)) {
    if (/(^|\.)_meta(\.|\[|$)/.test(c.path)) benign.push(`${c.path || '(whole)'} changed`);
    else if (c.kind === 'value' || (c.kind === 'type' && (c.old === null || c.new === null || c.old === undefined || c.new === undefined))) {
      if (NOISE.test(leafName(c.path))) benign.push(`${c.path} changed`);
      else valueChanged = true;
    } else structure.push(`result${c.path.startsWith('[') || c.path === '' ? '' : '.'}${describe(c)}`);
  }
  if (valueChanged) {
    // Another value of the result (a tool's description, a resource's size): its content changed.
    classes.add('text');
    if (!details.text) {
      const pretty = (v: unknown) => JSON.stringify(v, null, 2) ?? '';
      const d = diffText(pretty(da), pretty(db));
      details.text = { similarity: d.similarity, ops: d.ops };
    }
  }
  if (a.requests.join(',') !== b.requests.join(',')) structure.push(`server requests: ${a.requests.join(', ') || 'none'} -> ${b.requests.join(', ') || 'none'}`);
  if (a.notifications.join(',') !== b.notifications.join(',')) benign.push(`server notifications: ${a.notifications.length} -> ${b.notifications.length}`);
  return done();
}

/** A value in a request change: short, and for long strings the end (where paths and names differ). */
const shown = (v: unknown): string => {
  if (v === undefined) return '(absent)';
  const s = JSON.stringify(v) ?? String(v);
  if (s.length <= 40) return s;
  return typeof v === 'string' ? `"…${s.slice(-30)}` : `${s.slice(0, 39)}…`;
};

/** What changed in the params of a call, in the words of a miss (`params.arguments.path differs: ... vs ... before`). */
function paramsChange(o: McpRecord, n: McpRecord): string[] {
  const strip = (p: unknown) => (isObj(p) ? Object.fromEntries(Object.entries(p).filter(([k]) => k !== '_meta')) : (p ?? {}));
  const diffs = jsonDiff(strip(o.request.params), strip(n.request.params), 'params');
  const words = diffs.slice(0, 3).map((d) => (d.kind === 'added' ? `${d.path} added` : d.kind === 'removed' ? `${d.path} removed` : `${d.path} differs: ${shown(d.new)} vs ${shown(d.old)} before`));
  if (diffs.length > 3) words.push(`and ${diffs.length - 3} more params changes`);
  return words;
}

/**
 * {@link classifyExchanges}, with secrets masked on both sides (two tapes recorded separately,
 * under two salts) compared as equal and said as noise (masks.ts).
 */
function classifyMasked(a: McpAnswerRead, b: McpAnswerRead): Classification {
  // The answers are JSON values: their text holds each mask whole, so it is read as text.
  const u = unifyMasks(JSON.stringify(a), JSON.stringify(b));
  return u ? withMaskedNote(classifyExchanges(JSON.parse(u.text) as McpAnswerRead, b), u.masked, true) : classifyExchanges(a, b);
}

function recordedOf(side: TapeSide): McpRecorded[] {
  const out: McpRecorded[] = [];
  side.records.forEach((record, index) => {
    if (isMcpRecord(record)) out.push({ index, record, answer: mcpAnswerOf(record) });
  });
  return out;
}

function queue<T>(m: Map<string, T[]>, k: string, v: T): void {
  const q = m.get(k);
  if (q) q.push(v);
  else m.set(k, [v]);
}

/**
 * Pairs the MCP exchanges of the old and the new tapes (tapes matched by name) and classes each
 * pair.
 *
 * @example
 * pairExchanges([{ name: 'fs.tape', records: before }], [{ name: 'fs.tape', records: after }])
 */
export function pairExchanges(oldTapes: readonly TapeSide[], newTapes: readonly TapeSide[]): McpPairing[] {
  const out: McpPairing[] = [];
  const names = [...new Set([...oldTapes.map((t) => t.name), ...newTapes.map((t) => t.name)])].sort();
  for (const name of names) {
    const olds = oldTapes.filter((t) => t.name === name).flatMap(recordedOf);
    const news = newTapes.filter((t) => t.name === name).flatMap(recordedOf);
    if (olds.length === 0 && news.length === 0) continue;
    // By method and key, repeats in recorded order.
    const byKey = new Map<string, McpRecorded[]>();
    for (const o of olds) queue(byKey, `${o.record.method}\u0000${o.record.key}`, o);
    const paired = new Set<McpRecorded>();
    const pairOf = new Map<McpRecorded, McpRecorded>();
    const left: McpRecorded[] = [];
    for (const n of news) {
      const o = byKey.get(`${n.record.method}\u0000${n.record.key}`)?.shift();
      if (o) {
        paired.add(o);
        pairOf.set(n, o);
      } else left.push(n);
    }
    // An exchange a later record run of its session kept without making the call again: its old
    // one may stand for a call of that run whose params changed (kept.ts).
    const kept = keptCopies<McpRecorded>(olds, news, pairOf, mcpConversation);
    const keptOlds = new Map<McpRecorded, McpRecorded>();
    for (const n of kept) {
      const o = pairOf.get(n)!;
      keptOlds.set(o, n);
      paired.delete(o);
      pairOf.delete(n);
    }
    const oldRuns = runsOf(olds);
    // Then by method and what the call is about, in order: the same call with other params.
    const byRoute = new Map<string, McpRecorded[]>();
    for (const o of olds) if (!paired.has(o)) queue(byRoute, mcpRoute(o.record.request), o);
    const changed = new Set<McpRecorded>();
    for (const n of left) {
      const q = byRoute.get(mcpRoute(n.record.request));
      const at = q ? q.findIndex((o) => !keptOlds.has(o) || mayReplaceKept(n, o, oldRuns)) : -1;
      if (at < 0) continue;
      const o = q!.splice(at, 1)[0]!;
      paired.add(o);
      pairOf.set(n, o);
      changed.add(n);
    }
    // Kept copies pair with their old exchange, the same bytes, whether or not a changed call was
    // compared with it too (listed as added, stale copies read as new calls).
    for (const [o, n] of keptOlds) {
      paired.add(o);
      pairOf.set(n, o);
    }
    const pairs: McpPairing[] = [];
    for (const n of news) {
      const o = pairOf.get(n);
      const route = mcpRoute(n.record.request);
      const k = kept.has(n) ? { kept: true as const } : {};
      if (!o) pairs.push({ tape: name, route, new: n, requestChange: [], ...k });
      else pairs.push({ tape: name, route, old: o, new: n, requestChange: changed.has(n) ? paramsChange(o.record, n.record) : [], classification: classifyMasked(o.answer, n.answer), ...k });
    }
    for (const o of olds) if (!paired.has(o)) pairs.push({ tape: name, route: mcpRoute(o.record.request), old: o, requestChange: [] });
    // Report order: the new tape's order, removed exchanges where they stood in the old one.
    pairs.sort((a, b) => (a.new?.index ?? a.old!.index) - (b.new?.index ?? b.old!.index) || (a.new ? 0 : 1) - (b.new ? 0 : 1));
    out.push(...pairs);
  }
  return out;
}
