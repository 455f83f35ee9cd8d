/**
 * Faults on demand over HTTP, for the proxy handler and createFetch: which fault a request gets
 * (asked of src/chaos/decide.ts with the request's key), and the answer that carries it
 * (src/providers/faults.ts says what it looks like). Nothing here touches the tape: a status
 * fault never asks for a recording, and a recording a cut or malformed answer was made from is
 * held for the call's retry, so the retry of the k-th call still gets the k-th recording. A
 * damaged answer is a recording served (stall whole, cut and malformed in part): the callers
 * count it replayed and its recording used, like any replayed answer. In front of the live API
 * (record mode, update mode on a miss) a damaging fault waits for the live answer to be recorded
 * whole, then damages that recording as its replay will ({@link liveDamage}).
 */
import { Chaos, damagesAnswer, type ChaosCall, type Verdict } from '../chaos/decide.ts';
import { clientRetries } from '../chaos/retry-count.ts';
import { refuseChaos } from '../chaos/refused.ts';
import { CHAOS_DEFAULTS, CHAOS_HEADER, WHOLE_ANSWER_FAULTS, familyOptions, type ChaosOptions, type HttpFault } from '../chaos/options.ts';
import { hex } from '../core/engine.ts';
import { sha256 } from '../core/index.ts';
import { answerEvents, malformedEvents, statusFault, type StatusFaultAnswer } from '../providers/faults.ts';
import type { StatusFault } from '../providers/provider.ts';
import { httpRecordKey, responseChunks, type HttpRecord } from '../store/records.ts';
import { filedKey } from '../store/origins.ts';
import type { TapeMode } from '../store/mode.ts';
import type { LoadedSession } from '../realtime/tape.ts';
// HOP_BY_HOP is read when a call is made, not when this module loads: deck.ts imports this one.
import { HOP_BY_HOP, type Deck, type DeckRequest, type Decision, type Prepared } from './deck.ts';
import type { TapedeckError } from '../errors.ts';

export type { ChaosOptions } from '../chaos/options.ts';

export { CHAOS_HEADER, withoutChaosHeader } from '../chaos/options.ts';
// The calls faults stood in for, as a summary says them (createFetch's, through this module: a page has no faults).
export { faultsInPlaceOfRecordings } from '../chaos/answer-faults.ts';

/** HTTP chaos: the decider, holding the replay decisions damaged answers were made from. */
export type HttpChaos = Chaos<Decision>;

/**
 * The chaos of a proxy or fetch once its mode is known: refused outside replay unless `live`.
 * A deck without chaos options still gets one in replay mode, so `x-tapedeck-chaos` works
 * there; it never fires unasked.
 *
 * @example
 * const chaos = openChaos({ faults: { 429: 0.2 } }, 'replay', warn)
 */
export function openChaos(opts: ChaosOptions | undefined, mode: TapeMode, warn: (m: string) => void): HttpChaos | undefined {
  if (opts === undefined) return mode === 'replay' ? new Chaos<Decision>({}, 'http', warn) : undefined;
  refuseChaos(mode, opts.live, 'chaos option, --chaos');
  return new Chaos<Decision>(familyOptions(opts, 'http'), 'http', warn);
}

/** Realtime chaos: the decider, holding the recorded sessions faulted sessions were cut from. */
export type SessionChaos = Chaos<LoadedSession>;

/**
 * The realtime sessions' chaos beside a proxy's HTTP chaos, from the same options (its `close`
 * faults, the same seed; refused in the same modes). Only an HTTP chaos that exists gets one.
 *
 * @example
 * const rt = openSessionChaos({ faults: { close: 0.5 }, seed: 7 }, 'replay', warn)
 */
export function openSessionChaos(opts: ChaosOptions | undefined, mode: TapeMode, warn: (m: string) => void, http: HttpChaos | undefined): SessionChaos | undefined {
  if (!http) return undefined;
  // One seed for both, so a printed seed injects the same faults in both again.
  return new Chaos<LoadedSession>({ ...familyOptions(opts ?? {}, 'realtime'), seed: http.seed }, 'realtime', warn);
}

/**
 * A plan for one request: answered as usual (maybe late), or with a fault. A faulted plan names
 * its call: the caller tells the chaos when its answer is out ({@link faultSent}).
 */
export type ChaosPlan =
  | { kind: 'usual'; latencyMs: number; decision?: Decision; call?: ChaosCall<Decision> }
  | { kind: 'status'; latencyMs: number; fault: HttpFault; answer: StatusFaultAnswer; call: ChaosCall<Decision> }
  | { kind: 'timeout' | 'reset'; latencyMs: number; fault: HttpFault; call: ChaosCall<Decision> }
  | DamagePlan
  | LiveDamagePlan;

/** The faults that damage a recorded answer on its way out. */
export type DamagingFault = 'cut' | 'stall' | 'malformed';

/**
 * A recorded answer to damage. `recorded`: it was recorded from the live API for this very
 * attempt ({@link liveDamage}), so it says `recorded` and counts as recorded, not replayed.
 */
export type DamagePlan = { kind: 'damage'; latencyMs: number; fault: DamagingFault; record: HttpRecord; decision: Extract<Decision, { kind: 'replay' }>; call: ChaosCall<Decision>; recorded?: true };

/**
 * A damaging fault drawn for a request that goes to the live API to be recorded: the caller
 * sends it upstream as usual, reads the answer whole and, once it is stored, answers with
 * {@link liveDamage} (or takes the fault back when nothing was stored).
 */
export type LiveDamagePlan = { kind: 'damage-live'; latencyMs: number; fault: DamagingFault; decision: { kind: 'upstream'; prepared: Prepared; miss?: TapedeckError }; where: string; call: ChaosCall<Decision> };


/** The call a request is: its route and request key, as the tape would file it. */
function callKey(d: Deck, req: DeckRequest): string {
  try {
    const p = d.prepareRequest(req);
    return `${p.route}\0${p.key}`;
  } catch {
    // A body the tape would refuse still has a stable identity: its bytes.
    return `${req.method} ${req.url}\0${hex(sha256(req.body))}`;
  }
}

/**
 * The answer to a `timeout` fault: none, until the caller's own timeout (its AbortSignal) ends
 * the call with its reason, or the fetch's close ends it (each end is in `hung` meanwhile).
 * What ended it is noted in `faults` (an injected network fault, not the caller's bug).
 *
 * @example
 * case 'timeout': return heldUntilAborted(signal, hung, networkFaults)
 */
export function heldUntilAborted(signal: AbortSignal, hung: Set<(e: unknown) => void>, faults: WeakSet<object>): Promise<Response> {
  return new Promise<Response>((_resolve, reject) => {
    // A real answer that never comes holds its socket open, and the process with it: a held one
    // holds a timer instead, or Node would end before the client's own timeout (the timer of
    // AbortSignal.timeout does not hold the process) could fire.
    const alive = setInterval(() => undefined, 2 ** 30);
    const end = (e: unknown) => {
      clearInterval(alive);
      hung.delete(end);
      if (e !== null && typeof e === 'object') faults.add(e);
      reject(e);
    };
    hung.add(end);
    if (signal.aborted) end(signal.reason);
    else signal.addEventListener('abort', () => end(signal.reason), { once: true });
  });
}

/**
 * What a retry of a faulted call gets, for the fault's message: the recording only when
 * `attempts` bounds the faulted attempts; a forced fault (the header) faults every request that
 * sends it, and without `attempts` each attempt is drawn anew.
 */
function retryNote(chaos: HttpChaos, forced: string | undefined): string {
  if (forced !== undefined) return `every request sending ${CHAOS_HEADER}: ${forced} gets this fault; a request of the call without it gets the recording`;
  const n = chaos.options.attempts;
  if (n === undefined) return 'each retry is drawn anew, so it may be faulted too; set chaos attempts (--chaos-attempts N) for a retry that gets the recording';
  return n === 1 ? 'the retry gets the recording' : `the retry after ${n} faulted attempts gets the recording`;
}

/**
 * Decides what one request gets. `forced` is the x-tapedeck-chaos value (checked here: a bad
 * one is E_CHAOS_SPEC). Rejects with what deck.decide throws when the answer needs the recording.
 * A damaging fault is counted (and the first fault announced) only once there is a recorded
 * answer to damage: here for a replayed one, in {@link liveDamage} for one recorded now.
 *
 * @example
 * const plan = await planChaos(deck, deck.chaos!, req, req.headers['x-tapedeck-chaos'])
 */
export async function planChaos(d: Deck, chaos: HttpChaos, req: DeckRequest, forced: string | undefined): Promise<ChaosPlan> {
  if (forced !== undefined) refuseChaos(d.mode, chaos.options.live, `header ${CHAOS_HEADER}`);
  const force = forced === undefined ? undefined : chaos.forced(forced);
  const key = callKey(d, req);
  const where = `${req.method} ${req.url.split('?')[0]}`;
  // The callers say when a faulted answer is out (faultSent): a request of the same key that
  // comes before is a call of its own, never that answer's retry.
  const v: Verdict<Decision> | undefined = chaos.decide(key, force, where, { retries: clientRetries(req.headers), tellsSent: true });
  const latencyMs = v?.latencyMs ?? 0;
  const fault = v?.fault as HttpFault | undefined;
  if (fault === undefined) {
    // The retry of a call whose answer was damaged gets that same recording (a request the
    // stats count here: no decide() counts it).
    const held = chaos.held(key, false);
    if (held) d.countRequest();
    if (latencyMs === 0) return { kind: 'usual', latencyMs, ...(held ? { decision: held } : {}) };
    // A delayed answer: in replay its recording is taken before the wait, so a miss is told at
    // once and no delay is counted for it (it got none). The delay is announced, if it is the
    // first fault, once the answer is out (faultSent).
    let decision = held;
    if (!decision && d.mode === 'replay') {
      try {
        decision = await d.decideShared(req);
      } catch (e) {
        chaos.undoLatency(v!.call);
        throw e;
      }
    }
    return { kind: 'usual', latencyMs, ...(decision ? { decision } : {}), call: v!.call };
  }
  const call = v!.call;
  // Each request is one of the stats' `requests`: deck.decide() counts those it decides; those
  // answered by a fault with no decision (in front of the live API), or from the decision held
  // for their call (a retry), are counted here.
  const recall = (keep: boolean): Decision | undefined => {
    const held = chaos.held(call, keep);
    if (held) d.countRequest();
    return held;
  };
  if (fault === 'timeout' || fault === 'reset' || !damagesAnswer(fault)) {
    // In replay, a fault stands in for the recording the call would have got: taken now and
    // held for the call's retry. So a request with none is a miss, never a fault that lets a
    // test pass on a tape that has nothing for it; and a call its app does not retry (a
    // fallback) leaves the next call the next recording, as without the fault.
    if (d.mode === 'replay') {
      try {
        chaos.hold(call, recall(true) ?? (await d.decideShared(req)));
      } catch (e) {
        chaos.undo(call, fault); // a miss is answered as a miss, not counted as a fault
        throw e;
      }
    } else d.countRequest();
    if (fault === 'timeout' || fault === 'reset') return { kind: fault, latencyMs, fault, call };
    return { kind: 'status', latencyMs, fault, answer: statusFault(req.url, req.headers, fault as StatusFault, chaos.options.retryAfterMs ?? CHAOS_DEFAULTS.retryAfterMs, chaos.seed, retryNote(chaos, forced)), call };
  }
  // A stall is the call's whole answer: it takes the recording (a held one, if it retries a cut
  // call). A cut or malformed answer is an attempt its client retries: the recording is held
  // for that retry.
  const whole = WHOLE_ANSWER_FAULTS.has(fault);
  let decision: Decision;
  try {
    decision = recall(!whole) ?? (await d.decideShared(req));
  } catch (e) {
    chaos.undo(call, fault); // a miss is answered as a miss, not counted as a fault
    throw e;
  }
  if (decision.kind !== 'replay') {
    // Passthrough records nothing: there is no recording to damage, now or in a replay, so the
    // call goes to the upstream as usual, its fault never injected.
    if (decision.prepared === undefined) {
      chaos.undo(call, fault);
      return { kind: 'usual', latencyMs, decision };
    }
    // Recorded now (record mode, update mode on a miss): the answer is recorded whole first and
    // then damaged as its replay will damage it, so the run that records a test gets the same
    // damaged answer as the runs that replay it (a test's result must not depend on whether its
    // tape existed). Counted once there is a stored answer to damage (liveDamage).
    return { kind: 'damage-live', latencyMs, fault: fault as DamagingFault, decision: { kind: 'upstream', prepared: decision.prepared, ...(decision.miss ? { miss: decision.miss } : {}) }, where, call };
  }
  if (!whole) chaos.hold(call, decision);
  chaos.injected(fault, where);
  return { kind: 'damage', latencyMs, fault: fault as DamagingFault, record: decision.record, decision, call };
}

/**
 * A live-damage plan once its answer was recorded (`rec`: the record as stored) or not
 * (undefined: an error answer not recorded, a stream the upstream cut, a record that failed or
 * that a hook declined): the recording to damage, as a replay would damage it, held for the
 * call's retry (a cut or malformed answer is a failed attempt: the retry gets it whole); or
 * undefined, the fault taken back, when there is nothing stored to damage.
 *
 * @example
 * const damage = liveDamage(chaos, plan, rec) // then damagedAnswer(damage, chaos, chaos.seed)
 */
export function liveDamage(chaos: HttpChaos, plan: LiveDamagePlan, rec: HttpRecord | undefined): DamagePlan | undefined {
  if (rec === undefined) {
    chaos.undo(plan.call, plan.fault);
    return undefined;
  }
  const decision = { kind: 'replay', record: rec, matchedBy: 'exact', warnings: [] } as const;
  if (!WHOLE_ANSWER_FAULTS.has(plan.fault)) chaos.hold(plan.call, decision);
  chaos.injected(plan.fault, plan.where);
  return { kind: 'damage', latencyMs: plan.latencyMs, fault: plan.fault, record: rec, decision, call: plan.call, recorded: true };
}

/**
 * createFetch's answer to a live-damage plan: `live` sends the request upstream and records its
 * answer as usual, telling `onStored` the record once it is stored; the answer is read to its
 * end here (a stream's end waits for its record, ./fetch-record.ts), so nothing of it reaches
 * the caller before it is stored. Then `damaged` answers with the stored answer damaged, or,
 * when nothing was stored, the caller gets the answer as it came.
 *
 * @example
 * return liveDamageAnswer(chaos, plan, (onStored) => live(dreq, plan.decision, onStored), (p) => damagedResponse(p))
 */
export async function liveDamageAnswer(chaos: HttpChaos, plan: LiveDamagePlan, live: (onStored: (rec: HttpRecord) => void) => Promise<Response>, damaged: (p: DamagePlan) => Response): Promise<Response> {
  let stored: HttpRecord | undefined;
  let res: Response;
  try {
    res = await live((rec) => (stored = rec));
    // A copy is read, so an answer not stored goes out as the Response it is (what the test
    // runner knows of it, an error event in its stream, stays with it).
    await res.clone().arrayBuffer();
  } catch (e) {
    liveDamage(chaos, plan, undefined);
    throw e;
  }
  const p = liveDamage(chaos, plan, stored);
  if (!p) return res;
  void res.body?.cancel().catch(() => {});
  return damaged(p);
}

/**
 * Tells the chaos a plan's faulted answer is out (its status line or Response handed over, its
 * connection dropped, or, for `timeout`, the wait begun): only now can a request be its retry.
 *
 * @example
 * faultSent(chaos, plan)
 */
export function faultSent(chaos: HttpChaos, plan: ChaosPlan): void {
  if (plan.kind !== 'usual') chaos.sent(plan.call);
  // A delayed answer: its delay is announced now, if it is the first fault (it is no failed attempt).
  else if (plan.call) chaos.sent(plan.call);
}

/**
 * The `x-tapedeck-fault` value of a plan: the fault, and `latency` for a delayed answer.
 *
 * @example
 * faultHeader({ kind: 'timeout', fault: 'timeout', latencyMs: 100 }) // 'timeout, latency'
 */
export function faultHeader(plan: ChaosPlan): string | undefined {
  const f = plan.kind === 'usual' ? undefined : plan.fault;
  if (plan.latencyMs > 0) return f ? `${f}, latency` : 'latency';
  return f;
}

/** What a damaged answer sends: its events, how long to pause between them, and whether it ends cut. */
export interface DamagedAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  events: Uint8Array[];
  pauseMs: number;
  cut: boolean;
}

/**
 * A recorded answer damaged by a fault: `cut` sends its first N events (default 2; fewer when
 * the answer has no more) and then drops the connection, `stall` pauses between events,
 * `malformed` breaks the JSON of one event.
 *
 * @example
 * const a = damagedAnswer(plan, chaos, chaos.seed) // a.events: what is sent; a.cut: then the connection drops
 */
export function damagedAnswer(plan: DamagePlan, chaos: HttpChaos, seed: number): DamagedAnswer {
  const rec = plan.record;
  const ct = rec.response.headers['content-type'];
  const type = Array.isArray(ct) ? ct[0] : ct;
  const chunks = rec.response.chunks ? responseChunks(rec.response).map(([, b]) => b) : undefined;
  let events = answerEvents(rec.response.body, type, chunks);
  const { 'content-length': _l, ...recorded } = rec.response.headers;
  // Matched and traced as any replayed (or, recorded now, recorded) answer (the recording was
  // served, whole or in part: a run summary counts it used); the fault header says what was
  // done to it.
  const headers: Record<string, string | string[]> = {
    ...recorded,
    'x-tapedeck-match': plan.recorded ? 'recorded' : plan.decision.matchedBy,
    'x-tapedeck-key': rec.key,
    'x-tapedeck-trace': rec.trace,
    'x-tapedeck-fault': faultHeader(plan)!,
    'x-tapedeck-chaos-seed': String(seed),
  };
  let cut = false;
  let pauseMs = 0;
  if (plan.fault === 'cut') {
    const n = chaos.options.cutAfter ?? CHAOS_DEFAULTS.cutAfter;
    events = events.slice(0, Math.min(n, events.length - 1));
    cut = true;
  } else if (plan.fault === 'stall') pauseMs = chaos.options.stallMs ?? CHAOS_DEFAULTS.stallMs;
  else events = malformedEvents(events, type);
  return { status: rec.response.status, headers, events, pauseMs, cut };
}

/**
 * Headers of a status fault answer, with the fault named.
 *
 * @example
 * statusFaultHeaders(plan, 7)['x-tapedeck-fault'] // '429'
 */
export function statusFaultHeaders(plan: Extract<ChaosPlan, { kind: 'status' }>, seed: number): Record<string, string> {
  return { ...plan.answer.headers, 'x-tapedeck-match': 'chaos', 'x-tapedeck-fault': faultHeader(plan)!, 'x-tapedeck-chaos-seed': String(seed) };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * What tells the chaos that a plan's answer was given up on before its end (its client aborted
 * during the `latency` delay, or in the middle of a `stall`): it reached no one, so the call's
 * retry gets the recording this attempt took, not the next call's. Undefined for other plans (a
 * status fault or a cut already leaves its call open).
 *
 * @example
 * res.once('close', () => abandonedBy(chaos, plan)?.())
 */
export function abandonedBy(chaos: HttpChaos, plan: ChaosPlan): (() => void) | undefined {
  if (plan.kind === 'usual' && plan.call) return () => chaos.abandoned(plan.call!, plan.decision);
  if (plan.kind === 'damage' && plan.fault === 'stall') return () => chaos.abandoned(plan.call, plan.decision);
  return undefined;
}

/**
 * A plan's `latency` delay, ended by the caller's abort (its own timeout) as a slow API's answer
 * would be: rejects with its reason, the answer counted as given up on ({@link abandonedBy}).
 *
 * @example
 * if (plan.latencyMs > 0) await lateBy(chaos, plan, signal)
 */
export async function lateBy(chaos: HttpChaos, plan: ChaosPlan, signal: AbortSignal): Promise<void> {
  try {
    await Promise.race([sleep(plan.latencyMs), new Promise<never>((_r, reject) => (signal.aborted ? reject(signal.reason) : signal.addEventListener('abort', () => reject(signal.reason), { once: true })))]);
  } catch (e) {
    abandonedBy(chaos, plan)?.();
    throw e;
  }
}

/** Marks the request a fault's call is recorded with (see recordBehind); never sent upstream. */
const BEHIND_HEADER = 'x-tapedeck-recorded-behind-fault';

/**
 * Whether `req` is one recordBehind sent: it takes no part in chaos (it is no call's retry). Its
 * marks are taken off, so neither reaches the upstream or the tape.
 *
 * @example
 * if (!recordedBehind(dreq)) plan = await planChaos(...)
 */
export function recordedBehind(req: DeckRequest): boolean {
  if (req.headers[BEHIND_HEADER] === undefined) return false;
  delete req.headers[BEHIND_HEADER];
  delete req.headers[CHAOS_HEADER];
  // Its recording is the faulted call's: the deck leaves it for that call's retry.
  req.behindFault = true;
  return true;
}

/**
 * Whether a plan's fault stands in for a call whose replay would find no recording for the fault
 * to stand in for, and miss, so the call's real answer is to be recorded behind the fault: in
 * update mode, a call the tape has no recording of; in record mode, every call (the run replaces
 * what the tape had, and the recording waits for the call's retry: ./held-for-retry.ts). A
 * fault a request forced with its header too: a fallback test's primary client sends it on
 * every run, and its replay misses without the recording.
 *
 * @example
 * if (needsRecordBehind(plan, deck, req)) await recordBehind(f, url, req)
 */
export function needsRecordBehind(plan: ChaosPlan, d: Deck, req: DeckRequest): boolean {
  if (!(plan.kind === 'status' || plan.kind === 'reset' || plan.kind === 'timeout')) return false;
  // Record mode: not when a recording made behind an earlier fault of the call is still held
  // for its retry (this is that retry, faulted again: `attempts` > 1).
  return (d.mode === 'record' && !d.holdsForRetry(req)) || (d.mode === 'update' && !holds(d, req));
}

/**
 * Whether the tape holds a recording of `req` (any turn of it) for its host or for no host in
 * particular, without taking one; true for a request it cannot key (nothing is done for it).
 */
function holds(d: Deck, req: DeckRequest): boolean {
  try {
    const p = d.prepareRequest(req);
    const has = (key: string) => (d.collection?.count(key).recorded ?? 0) > 0;
    return has(filedKey({ ...p, origin: req.origin, upstreamPath: req.upstreamPath })) || (req.origin !== undefined && has(httpRecordKey(p.route, p.match, p.key)));
  } catch {
    return true;
  }
}

/**
 * Sends `req` again through `f` (createFetch's own fetch), marked to take no part in chaos, and
 * reads its answer to the end, so it is recorded; resolves once it is, whatever happened.
 *
 * @example
 * await recordBehind(f, 'https://api.openai.com/v1/chat/completions', dreq)
 */
export async function recordBehind(f: (url: string, init: RequestInit) => Promise<Response>, url: string, req: DeckRequest): Promise<void> {
  // Without the hop's own headers (fetch sets them), marked.
  const headers: [string, string][] = [[BEHIND_HEADER, '1']];
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers.push([k, Array.isArray(v) ? v.join(', ') : v]);
  try {
    await (await f(url, { method: req.method, headers, ...(req.body.length > 0 ? { body: Buffer.from(req.body) } : {}) })).arrayBuffer();
  } catch {
    // Not recorded: its replay misses, and says so.
  }
}
