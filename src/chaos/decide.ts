/**
 * The one place that decides whether a call is faulted: from the seed, the request key, the
 * call's ordinal (how many calls of that key were answered before it) and its attempt (how many
 * faulted answers this same call got already). Never from timing, so a failing test fails the
 * same way again.
 *
 * A retry is recognised as the same call: same key, arriving after a faulted answer of that
 * key. A faulted attempt does not advance the ordinal, so the retry of the k-th call is still
 * the k-th call and gets the k-th recording.
 */
import { TapedeckError } from '../errors.ts';
import { sha256 } from '../core/index.ts';
import { BODY_FAULTS, checkChaos, faultNames, type ChaosOptions, type FaultFamily, type FaultName } from './options.ts';

/** What one call gets: a fault (or none) and a delay. */
export interface Verdict {
  fault: FaultName | undefined;
  latencyMs: number;
  /** Answers of this key served before this call. */
  ordinal: number;
  /** Faulted answers this call got before this attempt. */
  attempt: number;
}

/** Per key: the call's ordinal and attempt, and what a damaged-answer fault held for its retry. */
interface CallState<T> {
  ordinal: number;
  attempt: number;
  held?: T;
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
  private readonly calls = new Map<string, CallState<T>>();
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
   * (null: none). Returns undefined when the call is answered as recorded, with no delay.
   */
  decide(key: string, force?: FaultName | null, where?: string): Verdict | undefined {
    let s = this.calls.get(key);
    if (!s) this.calls.set(key, (s = { ordinal: 0, attempt: 0 }));
    const { ordinal, attempt } = s;
    let fault: FaultName | undefined;
    if (force !== undefined) fault = force ?? undefined;
    else if (this.total > 0) {
      const limit = this.options.attempts;
      // With `attempts`, the call is faulted or not as a whole, and only its first N attempts fail;
      // without, each attempt is drawn on its own.
      if (limit === undefined || attempt < limit) fault = this.pick(draw(this.seed, 'fault', key, ordinal, limit === undefined ? attempt : undefined));
    }
    const latency = this.options.latencyMs ?? 0;
    const latencyMs = latency > 0 && draw(this.seed, 'latency', key, ordinal, attempt) < (this.options.latencyRate ?? 1) ? latency : 0;
    if (fault === undefined) {
      s.ordinal++;
      s.attempt = 0;
    } else s.attempt++;
    if (fault !== undefined) this.count(fault, where);
    if (latencyMs > 0) this.count('latency', where);
    if (fault === undefined && latencyMs === 0) return undefined;
    return { fault, latencyMs, ordinal, attempt };
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

  private count(fault: string, where: string | undefined): void {
    this.counters[fault] = (this.counters[fault] ?? 0) + 1;
    if (this.announced) return;
    this.announced = true;
    this.announce(`tapedeck: chaos: first fault injected (${fault}${where ? ` on ${where}` : ''}) with seed ${this.seed}; --chaos-seed ${this.seed} (chaos.seed: ${this.seed}) injects the same faults again.`);
  }

  /**
   * Keeps a recorded answer a damaged-answer fault (cut, stall, malformed) was cut from, so the
   * retry of the call gets that same recording rather than the next one.
   */
  hold(key: string, value: T): void {
    const s = this.calls.get(key);
    if (s) s.held = value;
  }

  /** The answer held for this call's retry, if any (taken: a later call gets its own). */
  held(key: string, keep: boolean): T | undefined {
    const s = this.calls.get(key);
    const h = s?.held;
    if (s && !keep) s.held = undefined;
    return h;
  }

  /**
   * Takes back a fault the caller could not inject (a damaged answer in front of the live API):
   * the call counts as answered, and the fault as never injected.
   */
  undo(key: string, fault: FaultName): void {
    const s = this.calls.get(key);
    if (!s || s.attempt === 0) return;
    s.attempt = 0;
    s.ordinal++;
    this.counters[fault] = (this.counters[fault] ?? 1) - 1;
    if (this.counters[fault] === 0) delete this.counters[fault];
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
