/**
 * Faults on demand ("chaos"): which faults exist, the options object that asks for them, and
 * the `--chaos SPEC` text form. What a fault looks like on the wire is the provider modules'
 * business (src/providers/faults.ts); which call gets one is ./decide.ts's.
 */
import { TapedeckError } from '../errors.ts';
import { closestName } from '../edit-distance.ts';

export { CHAOS_HEADER, withoutChaosHeader } from './header.ts';

/** Faults of an HTTP answer: an error status, no answer, or a recorded stream damaged on the way. */
export const HTTP_FAULTS = ['429', '500', '503', '529', 'timeout', 'reset', 'cut', 'stall', 'malformed'] as const;
/**
 * Faults of an MCP tool call: a JSON-RPC error, a `tools/call` result with `isError: true`, the
 * server's exit mid-call, no answer.
 */
export const MCP_FAULTS = ['error', 'tool-error', 'exit', 'timeout'] as const;

/**
 * Faults of a realtime (WebSocket) session: the server closes it (1011) in the middle of a
 * response. Decided once per session, from its connect's key and its ordinal among the
 * sessions of that key (src/realtime/endpoint.ts); the recording a faulted session was cut
 * from is held for the reconnect, as the HTTP damaged answers are (src/proxy/chaos.ts).
 */
export const REALTIME_FAULTS = ['close'] as const;

export type HttpFault = (typeof HTTP_FAULTS)[number];
/**
 * A fault chaos can inject into an MCP exchange (ChaosOptions.faults of tapeTransport and
 * tape.mcp()).
 */
export type McpFault = (typeof MCP_FAULTS)[number];
export type RealtimeFault = (typeof REALTIME_FAULTS)[number];
/** Every fault chaos can inject: HTTP answers, MCP exchanges and realtime sessions. */
export type FaultName = HttpFault | McpFault | RealtimeFault;
/**
 * Which family of faults a transport can inject; `proxy` is what the proxy takes (its HTTP
 * answers and its realtime sessions), split by {@link familyOptions} for each.
 */
export type FaultFamily = 'http' | 'mcp' | 'realtime' | 'proxy';

const PROXY_FAULTS: readonly string[] = [...HTTP_FAULTS, ...REALTIME_FAULTS];
const FAMILY_LABEL: Record<FaultFamily, string> = { http: 'HTTP', mcp: 'MCP', realtime: 'realtime', proxy: 'proxy' };

/**
 * The fault names of a family.
 *
 * @example
 * faultNames('mcp') // ['error', 'tool-error', 'exit', 'timeout']
 */
export function faultNames(family: FaultFamily): readonly string[] {
  return family === 'http' ? HTTP_FAULTS : family === 'mcp' ? MCP_FAULTS : family === 'realtime' ? REALTIME_FAULTS : PROXY_FAULTS;
}

/** Whether a family answers HTTP requests (and so takes `stall=MS` and `cut=N`). */
const speaksHttp = (family: FaultFamily): boolean => family === 'http' || family === 'proxy';

/**
 * The options one family injects from: its own faults only (a realtime session never draws an
 * HTTP fault, nor an HTTP request `close`), so adding a fault of one family never changes which
 * calls of the other fail. A delay (`latency`) is for HTTP answers only.
 *
 * @example
 * familyOptions({ faults: { 429: 0.2, close: 0.5 }, seed: 7 }, 'realtime') // { faults: { close: 0.5 }, seed: 7 }
 */
export function familyOptions(opts: ChaosOptions, family: 'http' | 'realtime'): ChaosOptions {
  const names = faultNames(family);
  const faults = Object.fromEntries(Object.entries(opts.faults ?? {}).filter(([n]) => names.includes(n)));
  const { latencyMs: _l, latencyRate: _r, ...rest } = opts;
  return { ...(family === 'http' ? opts : rest), faults };
}

export { BODY_FAULTS } from './answer-faults.ts';

/**
 * Faults whose answer is still the whole recorded answer, only slow (`stall`): the call is
 * answered, not failed, so the next call of the request gets the next recording. Every other
 * fault is a failed attempt its client retries.
 */
export const WHOLE_ANSWER_FAULTS: ReadonlySet<string> = new Set(['stall']);

/**
 * What chaos to inject. The same object for createFetch, createHandler, tapeTransport and the
 * test fixture; `tapedeck serve --chaos SPEC` and `tapedeck mcp --chaos SPEC` build it.
 *
 * @example
 * createFetch({ tape: 'app.tape', chaos: { faults: { 429: 0.2, cut: 0.1 }, latencyMs: 150, seed: 7, attempts: 1 } })
 */
export interface ChaosOptions {
  /** Fault name to the share of calls that get it (0..1; default 1 when written without a rate in a SPEC). */
  faults?: Partial<Record<FaultName, number>>;
  /** Delay before every answer (faulted or not), in ms. */
  latencyMs?: number;
  /** Share of calls delayed by `latencyMs` (default 1). */
  latencyRate?: number;
  /** Seed of the fault sequence (default: a random one, printed with the first injected fault). */
  seed?: number;
  /**
   * Only the first N attempts of a faulted call fail: its retry N+1 gets the recorded answer.
   * Without it, every attempt is drawn anew from the seed.
   */
  attempts?: number;
  /** `stall`: pause between stream events, in ms (default 2000). */
  stallMs?: number;
  /** `cut`: stream events sent before the connection drops (default 2). */
  cutAfter?: number;
  /** Retry-after of 429, 503 and 529 answers, in ms (default 1000; sent as `retry-after` seconds and `retry-after-ms`). */
  retryAfterMs?: number;
  /**
   * Faults in record, update and passthrough mode too, in front of the live API (default false:
   * chaos is refused there, so no fault is ever mistaken for the API's answer). A `cut`, `stall`
   * or `malformed` on a call being recorded damages its answer once it is stored whole, as its
   * replay will (docs/chaos.md).
   */
  live?: boolean;
}

/** Defaults of the options above. */
export const CHAOS_DEFAULTS = { stallMs: 2000, cutAfter: 2, retryAfterMs: 1000 } as const;

function specError(spec: string, item: string, why: string, family: FaultFamily): TapedeckError {
  const names = faultNames(family);
  return new TapedeckError('E_CHAOS_SPEC', `Invalid chaos item ${JSON.stringify(item)} in ${JSON.stringify(spec)}: ${why}.`, {
    spec,
    item,
    hint: `Write a comma list of fault or fault:rate (rate 0..1), e.g. --chaos 429:0.2,cut:0.1,latency=150. Faults: ${names.join(', ')}; also latency=MS${speaksHttp(family) ? ', stall=MS, cut=EVENTS' : ''}.`,
  });
}

function rateOf(text: string | undefined, spec: string, item: string, family: FaultFamily): number {
  if (text === undefined) return 1;
  const r = Number(text);
  if (text.trim() === '' || !Number.isFinite(r) || r < 0 || r > 1) throw specError(spec, item, `rate ${JSON.stringify(text)} is not a number from 0 to 1`, family);
  return r;
}

function countOf(text: string, spec: string, item: string, family: FaultFamily, what: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < 0 || n > 2_147_483_647) throw specError(spec, item, `${what} ${JSON.stringify(text)} is not a whole number from 0 to 2147483647`, family);
  return n;
}

/**
 * Parses a `--chaos` SPEC: a comma list of `fault` or `fault:rate` (rate 0..1, default 1), and
 * `latency=MS[:rate]`; for HTTP also `stall=MS` (the pause of `stall`, which it turns on) and
 * `cut=N` (events before the cut, turning `cut` on), each with an optional `:rate`.
 *
 * @example
 * parseChaosSpec('429:0.2,cut:0.1,latency=150')
 * // { faults: { 429: 0.2, cut: 0.1 }, latencyMs: 150 }
 */
export function parseChaosSpec(spec: string, family: FaultFamily = 'http'): ChaosOptions {
  const names = faultNames(family);
  const out: ChaosOptions = {};
  const faults: Partial<Record<FaultName, number>> = {};
  const items = spec.split(',').map((s) => s.trim());
  if (items.every((s) => s === '')) throw specError(spec, spec, 'it names no fault', family);
  for (const item of items) {
    if (item === '') continue;
    const [head, rateText, extra] = item.split(':');
    if (extra !== undefined) throw specError(spec, item, 'more than one rate', family);
    const eq = head!.indexOf('=');
    const name = (eq < 0 ? head! : head!.slice(0, eq)).trim();
    const value = eq < 0 ? undefined : head!.slice(eq + 1);
    const rate = rateOf(rateText, spec, item, family);
    if (name === 'latency') {
      if (value === undefined) throw specError(spec, item, 'latency needs a delay, latency=MS', family);
      out.latencyMs = countOf(value, spec, item, family, 'delay');
      if (rate !== 1) out.latencyRate = rate;
      continue;
    }
    if (!names.includes(name)) throw specError(spec, item, `unknown fault ${JSON.stringify(name)}`, family);
    if (value !== undefined) {
      if (speaksHttp(family) && name === 'stall') out.stallMs = countOf(value, spec, item, family, 'pause');
      else if (speaksHttp(family) && name === 'cut') out.cutAfter = countOf(value, spec, item, family, 'event count');
      else throw specError(spec, item, `${name} takes no value`, family);
    }
    faults[name as FaultName] = rate;
  }
  if (Object.keys(faults).length > 0) out.faults = faults;
  return out;
}

/** Every option of {@link ChaosOptions}, in the order docs/chaos.md lists them. */
const OPTION_KEYS = ['faults', 'latencyMs', 'latencyRate', 'seed', 'attempts', 'stallMs', 'cutAfter', 'retryAfterMs', 'live'] as const;

/** The largest whole number an option takes: Node's longest timer, about 24.8 days in ms. */
const MAX_WHOLE = 2_147_483_647;

/** A value as it was written: NaN and Infinity as such (JSON would say null), strings quoted. */
const shown = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : String(v));

/** The option a misspelt one most likely meant (at most 2 edits away), if any. */
const closestOption = (key: string): string | undefined => closestName(key, OPTION_KEYS);

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Checks a chaos options object (known options only, rates 0..1, known fault names, whole
 * numbers, a boolean `live`), throwing E_ARG with what is wrong; returns the fault names in a
 * fixed order with their rates. A misspelt option is refused rather than ignored: ignored, it
 * would leave a chaos test passing with no faults injected.
 *
 * @example
 * checkChaos({ faults: { 429: 2 } }, 'http') // throws E_ARG: rate 2 of fault 429 is not from 0 to 1
 */
export function checkChaos(opts: ChaosOptions, family: FaultFamily): [FaultName, number][] {
  if (!isPlainObject(opts)) throw new TapedeckError('E_ARG', 'chaos must be an object such as { faults: { 429: 0.2 } }.', { hint: 'docs/chaos.md lists the options.' });
  for (const key of Object.keys(opts)) {
    if ((OPTION_KEYS as readonly string[]).includes(key)) continue;
    const near = closestOption(key);
    throw new TapedeckError('E_ARG', `Unknown chaos option ${JSON.stringify(key)}.`, { option: key, hint: `${near ? `Did you mean ${near}? ` : ''}The options are ${OPTION_KEYS.join(', ')} (docs/chaos.md).` });
  }
  const names = faultNames(family);
  if (opts.faults !== undefined && !isPlainObject(opts.faults)) {
    const given = Array.isArray(opts.faults) ? 'an array' : shown(opts.faults);
    throw new TapedeckError('E_ARG', `chaos.faults must be an object of fault name to rate, such as { 429: 0.2 }, not ${given}.`, {
      option: 'faults',
      hint: "Write { faults: { 429: 0.2, cut: 0.1 } }; the text form 429:0.2 is the command line's (tapedeck serve --chaos 429:0.2).",
    });
  }
  const faults: Partial<Record<FaultName, number>> = opts.faults ?? {};
  for (const [name, rate] of Object.entries(faults)) {
    if (!names.includes(name)) throw new TapedeckError('E_ARG', `Unknown ${FAMILY_LABEL[family]} fault ${JSON.stringify(name)} in chaos.faults.`, { hint: `Use ${names.join(', ')}.` });
    if (typeof rate !== 'number' || !(rate >= 0 && rate <= 1)) throw new TapedeckError('E_ARG', `Rate ${shown(rate)} of fault ${name} is not a number from 0 to 1.`, { hint: 'Give the share of calls that get it, e.g. { 429: 0.2 }.' });
  }
  const whole = (k: keyof ChaosOptions, min: number) => {
    const v = opts[k];
    if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > MAX_WHOLE)) {
      throw new TapedeckError('E_ARG', `chaos.${k} ${shown(v)} is not a whole number from ${min} to ${MAX_WHOLE}.`, { option: k, hint: 'docs/chaos.md lists the options.' });
    }
  };
  whole('latencyMs', 0);
  whole('seed', 0);
  whole('attempts', 1);
  whole('stallMs', 0);
  whole('cutAfter', 0);
  whole('retryAfterMs', 0);
  const rate = opts.latencyRate as unknown;
  if (rate !== undefined && (typeof rate !== 'number' || !(rate >= 0 && rate <= 1))) {
    throw new TapedeckError('E_ARG', `chaos.latencyRate ${shown(rate)} is not a number from 0 to 1.`, { option: 'latencyRate', hint: 'Give the share of calls delayed, e.g. 0.5.' });
  }
  if (opts.live !== undefined && typeof opts.live !== 'boolean') {
    throw new TapedeckError('E_ARG', `chaos.live ${shown(opts.live)} is not true or false.`, { option: 'live', hint: 'Write live: true to allow faults in front of the live API (record, update and passthrough mode).' });
  }
  // A fixed order, so { 429, cut } and { cut, 429 } draw the same faults from one seed.
  return names.filter((n) => faults[n as FaultName] !== undefined).map((n) => [n as FaultName, faults[n as FaultName]!]);
}
