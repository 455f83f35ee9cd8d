/**
 * The one place that decides whether a call is faulted: from the seed, the request key, the
 * call's ordinal (how many calls of that key came before it) and its attempt (how many faulted
 * answers this same call got already). Never from the clock, so a failing test fails the same
 * way again.
 *
 * A retry is the same call again: same key, after a faulted answer of that key. A call with a
 * faulted answer stays open until its retry is answered, so the retry of the k-th call is still
 * the k-th call and gets the k-th recording. A `stall` answer is whole (only slow): its call is
 * answered. What tells a retry from a new call of the same request made beside it:
 * - a request its client numbers as a retry (its SDK's retry counter, ./retry-count.ts) is one,
 *   and with `attempts: N` one numbered N or more is never faulted: its client made N attempts;
 *   one it numbers 0 is a new call once that client has numbered a retry of the open call (its
 *   retries ran out: the app went on to its next call, which gets the next recording), unless
 *   that call's last answer was a damaged body (cut, malformed), which only the app retries;
 * - an answer its client gave up on before it came whole (a delay, a stall) leaves its call open
 *   for its retry, as a faulted one does ({@link Chaos.abandoned});
 * - any other request is the retry of the oldest open call whose faulted answer is out, if there
 *   is one. A retry cannot come before the answer it retries: a request that arrives while the
 *   faulted answers of its key are still on their way is a new call (callers that say when an
 *   answer is out, see {@link CallHints.tellsSent}).
 */
import { TapedeckError } from '../errors.ts';
import { sha256 } from '../core/index.ts';
import { BODY_FAULTS, WHOLE_ANSWER_FAULTS, checkChaos, faultNames, type ChaosOptions, type FaultFamily, type FaultName } from './options.ts';

/** What one call gets: a fault (or none) and a delay. */
export interface Verdict<T = unknown> {
  fault: FaultName | undefined;
  latencyMs: number;
  /** Calls of this key that came before this call. */
  ordinal: number;
  /** Faulted answers this call got before this attempt. */
  attempt: number;
  /** The call this attempt belongs to (for sent, hold, held, injected and undo). */
  call: ChaosCall<T>;
}

/** One call of a key, from its first attempt until one is answered. */
export interface ChaosCall<T = unknown> {
  readonly key: string;
  readonly ordinal: number;
  /** Faulted answers it got so far. */
  attempt: number;
  /** Whether its last faulted answer is out: only then can a request be its retry. */
  out: boolean;
  /** The recorded answer a damaged answer of this call was made from, kept for its retry. */
  held?: T;
  /**
   * Its client numbered a retry of it (1 or more): that client retries for itself, so a request
   * it numbers 0 is a new call, never this one's retry (after its last retry failed, the app
   * went on without it).
   */
  numbered?: boolean;
  /**
   * Its last faulted answer was a damaged body (cut, malformed): a 200 no SDK retries, so its
   * retry comes from the app, which its SDK numbers 0 even after it numbered a retry of the call.
   */
  damaged?: boolean;
  /**
   * What its last attempt counted (a fault that replaces the answer, a delay) and has not told
   * yet: announced once that answer is out ({@link Chaos.sent}), uncounted if it is taken back
   * ({@link Chaos.undo}: a miss got neither the fault nor the delay).
   */
  tally?: { fault?: string; latency: boolean; where: string | undefined };
}

/** What the caller knows of a request beyond its key. */
export interface CallHints<T = unknown> {
  /** The client's own count of its earlier attempts of this request, when it sends one (./retry-count.ts). */
  retries?: number | undefined;
  /**
   * The caller calls {@link Chaos.sent} once a faulted answer is out (its status line written,
   * its Response returned); until then no request is taken for that call's retry. Without it, a
   * faulted answer counts as out at once. The first fault is then announced only once its
   * answer is out (a fault a client never got, a miss, is never announced).
   */
  tellsSent?: boolean;
  /**
   * The call this attempt is, when the caller knows it better than arrival order can: an open
   * call for its retry, or null for a new call. A realtime reconnect is told by the recorded
   * session its frames chose (src/realtime/endpoint.ts), not by when it connected.
   */
  call?: ChaosCall<T> | null;
}

/** Per key: how many calls came, the calls waiting for their retry, and the call decided last. */
interface KeyCalls<T> {
  next: number;
  /** Calls with a faulted answer whose retry has not been answered, oldest first. */
  open: ChaosCall<T>[];
  /** The call decided last: what the key-based {@link Chaos.hold}, held and undo act on. */
  last?: ChaosCall<T>;
}

const TWO_32 = 2 ** 32;

/**
 * A uniform number in [0, 1) from the seed, a tag and the call: the first 32 bits of a SHA-256.
 *
 * @example
 * draw(7, 'fault', 'key', 0) === draw(7, 'fault', 'key', 0) // true
 */
export function draw(seed: number, tag: string, key: string, ordinal: number, attempt?: number): number {
  const d = sha256(`tapedeck-chaos\0${seed}\0${tag}\0${key}\0${ordinal}${attempt === undefined ? '' : `\0${attempt}`}`);
  return (((d[0]! << 24) | (d[1]! << 16) | (d[2]! << 8) | d[3]!) >>> 0) / TWO_32;
}

function randomSeed(): number {
  const a = new Uint32Array(1);
  globalThis.crypto.getRandomValues(a);
  return a[0]! >>> 1;
}

/**
 * Decides, call by call, which fault (if any) each call gets, and counts them by fault.
 *
 * @example
 * const chaos = new Chaos({ faults: { 429: 1 }, attempts: 1, seed: 7 }, 'http', console.warn)
 * chaos.decide('POST /v1/chat/completions\0<key>')?.fault // '429' (first attempt)
 * chaos.decide('POST /v1/chat/completions\0<key>')        // undefined (the retry is answered)
 */
export class Chaos<T = unknown> {
  readonly seed: number;
  /** Whether any call can get a fault or a delay without a per-request header asking for one. */
  readonly canFire: boolean;
  readonly options: Readonly<ChaosOptions>;
  private readonly faults: [FaultName, number][];
  private readonly total: number;
  private readonly calls = new Map<string, KeyCalls<T>>();
  private readonly counters: Record<string, number> = {};
  private announced = false;
  private readonly names: readonly string[];

  constructor(
    opts: ChaosOptions,
    readonly family: FaultFamily,
    private readonly announce: (message: string) => void,
  ) {
    this.faults = checkChaos(opts, family);
    this.options = opts;
    this.names = faultNames(family);
    this.seed = opts.seed ?? randomSeed();
    this.total = this.faults.reduce((n, [, r]) => n + r, 0);
    this.canFire = this.total > 0 || ((opts.latencyMs ?? 0) > 0 && (opts.latencyRate ?? 1) > 0);
  }

  /**
   * The fault a forcing value names (`x-tapedeck-chaos: 429`), null for `none`, or E_CHAOS_SPEC.
   *
   * @example
   * chaos.forced('none') // null
   */
  forced(value: string): FaultName | null {
    const v = value.trim().toLowerCase();
    if (v === 'none') return null;
    if (this.names.includes(v)) return v as FaultName;
    throw new TapedeckError('E_CHAOS_SPEC', `x-tapedeck-chaos: ${JSON.stringify(value)} names no fault.`, { hint: `Send one of ${this.names.join(', ')}, or none.` });
  }

  /**
   * Decides one attempt of a call of `key`; `force` is a fault asked for by the request itself
   * (null: none). Returns undefined when the call is answered as recorded, with no delay. A
   * fault that damages the recorded answer (cut, stall, malformed, close) is counted and
   * announced only when the caller injects it ({@link injected}): it may find no recording to
   * damage, or a live answer it leaves alone. Another fault, and a delay, is counted now, and
   * announced once its answer is out ({@link sent}) when the caller says when that is
   * ({@link CallHints.tellsSent}); {@link undo} takes both back (a miss gets neither).
   */
  decide(key: string, force?: FaultName | null, where?: string, hints: CallHints<T> = {}): Verdict<T> | undefined {
    let k = this.calls.get(key);
    if (!k) this.calls.set(key, (k = { next: 0, open: [] }));
    const call = hints.call === undefined ? this.callOf(k, key, hints.retries) : (hints.call ?? { key, ordinal: k.next++, attempt: 0, out: true });
    k.last = call;
    const { ordinal, attempt } = call;
    let fault: FaultName | undefined;
    if (force !== undefined) fault = force ?? undefined;
    else if (this.total > 0) {
      const limit = this.options.attempts;
      // With `attempts`, the call is faulted or not as a whole, and only its first N attempts
      // fail (a client that numbers its retries says when it made N); without, each attempt is
      // drawn on its own.
      if (limit === undefined) fault = this.pick(draw(this.seed, 'fault', key, ordinal, attempt));
      else if (attempt < limit && (hints.retries ?? 0) < limit) fault = this.pick(draw(this.seed, 'fault', key, ordinal));
    }
    const latency = this.options.latencyMs ?? 0;
    // `none` (force null) forbids every fault, the delay too.
    const latencyMs = force !== null && latency > 0 && draw(this.seed, 'latency', key, ordinal, attempt) < (this.options.latencyRate ?? 1) ? latency : 0;
    const at = k.open.indexOf(call);
    if (fault === undefined || WHOLE_ANSWER_FAULTS.has(fault)) {
      if (at >= 0) k.open.splice(at, 1);
    } else {
      call.attempt++;
      call.out = hints.tellsSent !== true;
      call.damaged = BODY_FAULTS.has(fault);
      if (at < 0) k.open.push(call);
    }
    // Counted now, so stats() sees the call while it waits; announced once its answer is out
    // (sent()) when the caller says when that is, else now.
    const counted = fault !== undefined && !BODY_FAULTS.has(fault) ? fault : undefined;
    call.tally = counted !== undefined || latencyMs > 0 ? { ...(counted !== undefined ? { fault: counted } : {}), latency: latencyMs > 0, where } : undefined;
    if (counted !== undefined) this.tallyUp(counted);
    if (latencyMs > 0) this.tallyUp('latency');
    if (hints.tellsSent !== true && call.tally) this.announceFirst(call.tally.fault ?? 'latency', where);
    if (fault === undefined && latencyMs === 0) return undefined;
    return { fault, latencyMs, ordinal, attempt, call };
  }

  /**
   * The call a request of the key is: the retry of an open call, or a new one. Numbered as a
   * retry by its client: of the oldest open call with as many faulted answers whose answer is
   * out, else of the oldest one out. Not numbered: of the oldest open call whose answer is out.
   * Numbered 0 (an app's own retry loop around an SDK that retries nothing says 0 too): of the
   * oldest such call whose retries its client never numbered, or whose last answer was a damaged
   * body (see {@link ChaosCall.damaged}).
   */
  private callOf(k: KeyCalls<T>, key: string, retries: number | undefined): ChaosCall<T> {
    const out = k.open.filter((c) => c.out);
    let retried: ChaosCall<T> | undefined;
    if (retries !== undefined && retries > 0) {
      retried = out.find((c) => c.attempt === retries) ?? out[0];
      if (retried) retried.numbered = true;
    } else {
      // Numbered 0 by a client that numbered this call's retries: a new call (see numbered),
      // unless the call's last answer was a damaged body, which only the app retries.
      retried = retries === 0 ? out.find((c) => !c.numbered || c.damaged === true) : out[0];
    }
    return retried ?? { key, ordinal: k.next++, attempt: 0, out: true };
  }

  /**
   * A faulted (or delayed) answer of the call is out (see {@link CallHints.tellsSent}): a request
   * may now be its retry, and its fault, the first one, is announced.
   */
  sent(call: ChaosCall<T>): void {
    call.out = true;
    this.told(call);
  }

  /**
   * Its client gave up on the call's answer before it had it all (aborted during a `latency`
   * delay, or in the middle of a `stall`): no answer reached it, so the call stays open as after
   * a faulted attempt, and its retry (its SDK's, numbered, or the app's own) gets `value`, the
   * recording this attempt took, rather than the next call's.
   *
   * @example
   * signal.addEventListener('abort', () => chaos.abandoned(v.call, decision))
   */
  abandoned(call: ChaosCall<T>, value: T | undefined): void {
    const k = this.calls.get(call.key);
    if (!k) return;
    if (value !== undefined) call.held = value;
    if (!k.open.includes(call)) {
      call.attempt++;
      call.damaged = false;
      k.open.push(call);
    }
    call.out = true;
  }

  /**
   * The open call of `key` whose held value `is` accepts (the oldest), for a caller that tells a
   * retry by what it replays rather than by when it came (see {@link CallHints.call}).
   *
   * @example
   * const retried = chaos.openCall(key, (held) => held === session) // then decide(key, f, where, { call: retried ?? null })
   */
  openCall(key: string, is: (held: T) => boolean): ChaosCall<T> | undefined {
    return this.calls.get(key)?.open.find((c) => c.held !== undefined && is(c.held));
  }

  /** Whether `call` still waits for its retry (it was faulted, and no attempt of it was answered since). */
  isOpen(call: ChaosCall<T>): boolean {
    return this.calls.get(call.key)?.open.includes(call) ?? false;
  }

  /** Counts a damaging fault (cut, stall, malformed, close) the caller injected, announcing the first fault. */
  injected(fault: FaultName, where?: string): void {
    this.tallyUp(fault);
    this.announceFirst(fault, where);
  }

  /** The fault a uniform draw lands on: each fault owns a slice as wide as its rate (scaled down when the rates add up past 1). */
  private pick(u: number): FaultName | undefined {
    let edge = 0;
    const scale = this.total > 1 ? this.total : 1;
    for (const [name, rate] of this.faults) {
      edge += rate / scale;
      if (u < edge) return name;
    }
    return undefined;
  }

  private tallyUp(fault: string): void {
    this.counters[fault] = (this.counters[fault] ?? 0) + 1;
  }

  /** Announces what the call's last attempt counted, if nothing was announced yet; the tally is then settled. */
  private told(call: ChaosCall<T>): void {
    const t = call.tally;
    if (!t) return;
    call.tally = undefined;
    this.announceFirst(t.fault ?? 'latency', t.where);
  }

  private announceFirst(fault: string, where: string | undefined): void {
    if (this.announced) return;
    this.announced = true;
    this.announce(`tapedeck: chaos: first fault injected (${fault}${where ? ` on ${where}` : ''}) with seed ${this.seed}; --chaos-seed ${this.seed} (chaos.seed: ${this.seed}) injects the same faults again.`);
  }

  /**
   * Keeps a recorded answer a damaged-answer fault (cut, malformed) was cut from, so the retry
   * of the call gets that same recording rather than the next one. `at`: the call, or a key for
   * the call of that key decided last.
   */
  hold(at: string | ChaosCall<T>, value: T): void {
    const c = this.callAt(at);
    if (c) c.held = value;
  }

  /** The answer held for this call's retry, if any (taken unless `keep`: a later call gets its own). */
  held(at: string | ChaosCall<T>, keep: boolean): T | undefined {
    const c = this.callAt(at);
    const h = c?.held;
    if (c && !keep) c.held = undefined;
    return h;
  }

  /**
   * Takes back a fault the caller could not inject (no recording to damage, or a live answer; a
   * miss, which gets no fault): the call counts as answered, and neither the fault nor the
   * attempt's delay as injected (a fault counted only once injected was never counted).
   */
  undo(at: string | ChaosCall<T>, _fault: FaultName): void {
    const c = this.callAt(at);
    if (!c) return;
    const k = this.calls.get(c.key)!;
    const i = k.open.indexOf(c);
    if (i >= 0) k.open.splice(i, 1);
    this.untally(c);
  }

  /**
   * Takes back the delay of a call answered without its fault-free answer: a miss is told at
   * once, never late, and no `latency` is counted for it.
   *
   * @example
   * chaos.undoLatency(v.call) // the request missed: it was never delayed
   */
  undoLatency(call: ChaosCall<T>): void {
    this.untally(call);
  }

  /** Uncounts what the call's last attempt counted and has not told (taken back already: nothing). */
  private untally(c: ChaosCall<T>): void {
    const t = c.tally;
    if (!t) return;
    c.tally = undefined;
    for (const f of [t.fault, t.latency ? 'latency' : undefined]) {
      if (f === undefined) continue;
      this.counters[f] = (this.counters[f] ?? 1) - 1;
      if (this.counters[f] === 0) delete this.counters[f];
    }
  }

  private callAt(at: string | ChaosCall<T>): ChaosCall<T> | undefined {
    return typeof at === 'string' ? this.calls.get(at)?.last : at;
  }

  /** Faults injected so far, by name (and `latency` for delayed answers). */
  counts(): Record<string, number> {
    return { ...this.counters };
  }
}

/**
 * Whether a fault damages a recorded answer (it needs the recording) rather than replacing it.
 *
 * @example
 * damagesAnswer('cut') // true; damagesAnswer('429') // false
 */
export function damagesAnswer(fault: FaultName | undefined): boolean {
  return fault !== undefined && BODY_FAULTS.has(fault);
}
