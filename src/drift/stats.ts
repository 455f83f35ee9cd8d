// What the recordings on tapes stand for: calls and tokens per provider and model, what making
// them live would cost, and the time the recorded calls took (which replay saves).

import { answerOf, askedOf, recordedStreamError } from './answer.ts';
import { isTelemetry, readAnswer, routeEndpoint, routeOf } from '../providers/index.ts';
import { compatibleApiAt } from '../providers/openai-compatible.ts';
import { priceOf, type Price } from './prices.ts';
import type { TapeSide } from './pair.ts';
import { summarizeRealtime } from '../store/realtime-summary.ts';
import { isHttpRecord, isMcpRecord, type McpRecord } from '../store/records.ts';
import { mcpAnswerOf } from './mcp-diff.ts';
import { uncomparedKind } from './uncompared.ts';

/** Counts of one provider and model. */
export interface StatsRow {
  provider: string;
  model: string;
  calls: number;
  /** Calls whose answer was an error: an HTTP error, or a stream that carried the API's error event. */
  errors: number;
  tokensIn: number;
  tokensOut: number;
  /** Calls that reported no token usage. */
  withoutUsage: number;
  /** Estimated USD of making the calls live; null when the model has no price. */
  cost: number | null;
  /** Sum of the recorded call durations, in milliseconds. */
  recordedMs: number;
}

export interface Stats {
  tapes: number;
  rows: StatsRow[];
  total: Omit<StatsRow, 'provider' | 'model'>;
  /** Models without a price: their cost is left out of the total. */
  unpriced: string[];
  /** Realtime sessions per provider (absent when the tapes hold none). */
  realtime?: RealtimeStatsRow[];
  /** MCP exchanges per call (absent when the tapes hold none): not LLM calls, counted apart. */
  mcp?: McpStatsRow[];
  /** Records of other kinds, counted in no table (absent when there are none). */
  notCounted?: { kind: string; records: number }[];
}

/** MCP exchanges of one call (`tools/call read_file`, `tools/list`): how many, how many errors, their recorded time. */
export interface McpStatsRow {
  call: string;
  exchanges: number;
  /** Exchanges answered with a JSON-RPC error or a tool's error result (`isError`). */
  errors: number;
  recordedMs: number;
}

/** Realtime sessions of one provider: how many, their responses, tokens and audio. */
export interface RealtimeStatsRow {
  provider: string;
  sessions: number;
  responses: number;
  tokensIn: number;
  tokensOut: number;
  audioInSeconds: number;
  audioOutSeconds: number;
  /** Sessions whose recording was cut (the upstream went away, or the recorder died). */
  cut: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Input and output tokens an answer reports, as its provider module reads them (cached input
 * counted as input, thinking tokens as output: both are billed so).
 *
 * @example
 * usageOf({ object: 'chat.completion', created: 1, choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } }) // { input: 5, output: 2 }
 */
export function usageOf(body: unknown, request?: { method: string; url: string }, headers?: Record<string, string | string[]>): { input: number; output: number } | undefined {
  const u = readAnswer(request, body, headers)?.usage;
  return u ? { input: u.input ?? 0, output: u.output ?? 0 } : undefined;
}

/** One recording's place in the stats: provider, model, tokens, cost, duration. */
export interface CallStats {
  provider: string;
  model: string;
  status: number;
  /**
   * The answer is an error: an HTTP error status, or a 200 whose event stream carried the API's
   * error event (recorded with recordErrors), which the SDK raises as it raises a 5xx.
   */
  failed: boolean;
  usage: { input: number; output: number } | undefined;
  cost: number | null;
  durationMs: number;
}

/**
 * The stats of one recording (undefined for a value that is no recording).
 *
 * @example
 * callStats(tape.records[0].value, DEFAULT_PRICES)?.cost // 0.0000105
 */
export function callStats(record: unknown, prices: Readonly<Record<string, Price>>): CallStats | undefined {
  const asked = askedOf(record);
  const answer = answerOf(record);
  if (!asked || !answer || traceUpload(record)) return undefined;
  const read = answer.read;
  // Gemini and Bedrock name the model in the URL (`/models/<model>:embedContent`,
  // `/model/<id>/converse`), and their bodies do not: an answer that names none (an embedding, a
  // token count, an error) is counted under the URL's model.
  const route = asked.route.indexOf(' ') > 0 ? routeOf(routeEndpoint(asked.route)) : undefined;
  const askedModel = isObj(asked.body) && typeof asked.body.model === 'string' ? asked.body.model : route?.model;
  const model = read?.model ?? askedModel ?? '-';
  const usage = read?.usage ? { input: read.usage.input ?? 0, output: read.usage.output ?? 0 } : undefined;
  const price = priceOf(model, prices) ?? (askedModel !== undefined ? priceOf(askedModel, prices) : undefined);
  const cost = usage && price ? (usage.input * price.input + usage.output * price.output) / 1e6 : price && !usage ? 0 : null;
  // An answer no module reads (a 429 or 500 error body) is still its route's provider's call;
  // past that, ReplayCache values under `cache`, other HTTP calls under `other`.
  const routed = read?.provider === undefined ? route?.provider.name : undefined;
  let provider = read?.provider ?? routed ?? (asked.route === 'cache' ? 'cache' : 'other');
  // Azure's v1 paths are Groq's too (`/openai/v1/chat/completions`): a call whose answer names
  // no API, recorded for a host that is not Azure's, is counted by its URL.
  if (provider === 'azure' && asked.origin !== undefined) provider = compatibleApiAt(asked.origin, routeEndpoint(asked.route).url)?.name ?? provider;
  const failed = answer.status >= 400 || (answer.streamed && isHttpRecord(record) && recordedStreamError(record) !== undefined);
  return { provider, model, status: answer.status, failed, usage, cost, durationMs: answer.durationMs ?? 0 };
}

/**
 * An agent SDK's trace upload (isTelemetry): no call to a model, so no row; said apart among
 * the records not counted rather than as a call that reported no token usage.
 */
const traceUpload = (record: unknown): boolean => isHttpRecord(record) && isTelemetry(record.request);

/** The row an MCP exchange is counted in: the method, with the tool or prompt a call names. */
function mcpCall(r: McpRecord): string {
  const p = r.request.params;
  const name = isObj(p) && typeof p.name === 'string' ? p.name : undefined;
  return name !== undefined && (r.method === 'tools/call' || r.method === 'prompts/get') ? `${r.method} ${name}` : r.method;
}

/**
 * Calls, tokens, estimated live cost and recorded time, per provider and model; MCP exchanges
 * per call, apart.
 *
 * @example
 * const s = tapeStats([{ name: 'chat.tape', records }], loadPrices(undefined))
 * s.total.cost // USD
 */
export function tapeStats(tapes: readonly TapeSide[], prices: Readonly<Record<string, Price>>): Stats {
  const rows = new Map<string, StatsRow>();
  const unpriced = new Set<string>();
  for (const t of tapes) {
    for (const record of t.records) {
      const c = callStats(record, prices);
      if (!c) continue;
      const k = `${c.provider}\u0000${c.model}`;
      let row = rows.get(k);
      if (!row) {
        row = { provider: c.provider, model: c.model, calls: 0, errors: 0, tokensIn: 0, tokensOut: 0, withoutUsage: 0, cost: 0, recordedMs: 0 };
        rows.set(k, row);
      }
      row.calls++;
      if (c.failed) row.errors++;
      if (c.usage) {
        row.tokensIn += c.usage.input;
        row.tokensOut += c.usage.output;
      } else row.withoutUsage++;
      if (c.cost === null) {
        if (c.usage) unpriced.add(c.model);
        row.cost = c.usage ? null : row.cost;
      } else if (row.cost !== null) row.cost += c.cost;
      row.recordedMs += c.durationMs;
    }
  }
  const list = [...rows.values()].sort((a, b) => a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model));
  const total = { calls: 0, errors: 0, tokensIn: 0, tokensOut: 0, withoutUsage: 0, cost: 0 as number | null, recordedMs: 0 };
  for (const r of list) {
    total.calls += r.calls;
    total.errors += r.errors;
    total.tokensIn += r.tokensIn;
    total.tokensOut += r.tokensOut;
    total.withoutUsage += r.withoutUsage;
    total.recordedMs += r.recordedMs;
    if (r.cost !== null) total.cost! += r.cost;
  }
  const rt = new Map<string, RealtimeStatsRow>();
  for (const t of tapes) {
    for (const x of summarizeRealtime(t.records).sessions) {
      let row = rt.get(x.provider);
      if (!row) rt.set(x.provider, (row = { provider: x.provider, sessions: 0, responses: 0, tokensIn: 0, tokensOut: 0, audioInSeconds: 0, audioOutSeconds: 0, cut: 0 }));
      row.sessions++;
      row.responses += x.responses;
      row.tokensIn += x.tokensIn;
      row.tokensOut += x.tokensOut;
      row.audioInSeconds += x.audioIn.seconds;
      row.audioOutSeconds += x.audioOut.seconds;
      if (!x.end || x.end.cut) row.cut++;
    }
  }
  const realtime = [...rt.values()].sort((a, b) => a.provider.localeCompare(b.provider));
  const mcp = new Map<string, McpStatsRow>();
  const other = new Map<string, number>();
  for (const t of tapes) {
    for (const record of t.records) {
      if (isMcpRecord(record)) {
        const call = mcpCall(record);
        let row = mcp.get(call);
        if (!row) mcp.set(call, (row = { call, exchanges: 0, errors: 0, recordedMs: 0 }));
        row.exchanges++;
        const a = mcpAnswerOf(record);
        if (a.error || (isObj(a.result) && a.result.isError === true)) row.errors++;
        row.recordedMs += typeof record.durationMs === 'number' ? record.durationMs : 0;
        continue;
      }
      const kind = traceUpload(record) ? 'trace upload' : uncomparedKind(record);
      if (kind !== undefined) other.set(kind, (other.get(kind) ?? 0) + 1);
    }
  }
  const mcpRows = [...mcp.values()].sort((a, b) => a.call.localeCompare(b.call));
  const notCounted = [...other].map(([kind, records]) => ({ kind, records })).sort((a, b) => a.kind.localeCompare(b.kind));
  return {
    tapes: tapes.length,
    rows: list,
    total,
    unpriced: [...unpriced].sort(),
    ...(realtime.length > 0 ? { realtime } : {}),
    ...(mcpRows.length > 0 ? { mcp: mcpRows } : {}),
    ...(notCounted.length > 0 ? { notCounted } : {}),
  };
}
