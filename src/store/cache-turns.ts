/**
 * ReplayCache's turns: identical requests recorded at the same time are stored in the order they
 * were asked for, not in the order their answers came back (docs/modes.md, rule 1). Replay serves
 * a request's recordings in stored order, one per call: when three identical calls miss at once
 * (sampling an answer three times) and the first one's answer comes back last, the first call
 * must still get the first recording. Appended in the order the puts came, replay handed each
 * call another call's answer.
 *
 * The proxy and createFetch see a whole exchange, so a turn is taken when the request goes
 * upstream and ended whatever happens (../proxy/record-turns.ts). A ReplayCache sees two separate
 * calls, `get` (a miss) and later `put`, with nothing in the API that ties one to the other: the
 * documented middleware builds the request again for each call, and identical calls may share
 * one request object. What ties them is the async call chain that made both (an async function
 * that awaits get, then the API, then put): a get that misses in a mode that records takes a
 * turn for its key and leaves it in that chain's async context (AsyncLocalStorage), and the put
 * of the same key in that chain claims it and waits for the earlier turns of the key before it
 * appends. A put that finds no turn in its chain (none was taken, or the context did not carry
 * it) appends at once, as every put did before.
 *
 * A turn whose put never comes must not hold the others up for ever. Ended or given up:
 * - by its put, whatever the put does: appended, kept (an unchanged re-record), nothing to store
 *   (beforeRecord returned null) or failed (the turn ends as the proxy's turn of a failed
 *   exchange does);
 * - by a retry: a get of the same key in the chain that holds an open turn of it, after that
 *   turn's get returned (its API call failed and it asks again, as the AI SDK's retries do
 *   through the middleware), keeps that turn: the retry's answer takes the place of the call it
 *   repeats, and nothing waits for the attempt that failed;
 * - at close, every turn still open is given up (the puts waiting on them go on, in order);
 * - after `timeoutMs`: a put that has waited that long for an earlier turn whose put has not
 *   come gives that turn up (with a warning). Its put, if it still comes, then appends at once,
 *   after the ones that did not wait for it. Only turns nobody put are given up: a put that came
 *   and waits in its turn is still waited for, so the puts that came keep their order.
 *
 * Gets made in one synchronous run share its context (`Promise.all(calls.map(...))` starts every
 * call's get before any of them awaits): the later get of the same key is another call, not a
 * retry, so it takes a turn of its own in a context of its own. What cannot be told from a retry:
 * code holding an open turn (its own get missed, it has not put) hands that turn to the calls it
 * starts afterwards, whose gets come in later runs. The first of them to put takes it and the
 * others hold none, so those are stored in the order their answers come, as before, and never
 * wait. Taking a turn of their own instead would hold every retry's put until the timeout.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TapedeckError } from '../errors.ts';

/**
 * How long a put waits for an earlier identical call that missed and has not put: identical
 * calls made at once usually answer within seconds of each other, and a wait this long means the
 * earlier call failed and its caller moved on. Long enough for a slow sampled answer; short
 * enough that a caller that swallowed an error is not held for the SDKs' 10-minute timeout.
 */
export const DEFAULT_TURN_TIMEOUT_MS = 60_000;
// setTimeout fires at once for anything larger (a signed 32-bit count of ms).
const MAX_TIMER_MS = 2_147_483_647;

/** One call's place among the identical calls of a cache that missed and are being recorded. */
export class CacheTurn {
  /** open: its put has not come; claimed: its put came and waits or appends; ended. */
  state: 'open' | 'claimed' | 'ended' = 'open';
  /** Resolves when the turn ends. */
  readonly ended: Promise<void>;
  private end!: () => void;

  constructor(
    readonly owner: CacheTurns,
    readonly key: string,
    /** The synchronous run its get (or the retry that kept it) was made in ({@link runNumber}). */
    public run: number,
  ) {
    this.ended = new Promise<void>((r) => (this.end = r));
  }

  /**
   * Ends the turn: its record is handed to the store, or there will be none. Idempotent.
   *
   * @example
   * try { await turns.before(turn); col.append(key, rec); turn.finish() } finally { turn.finish() }
   */
  finish(): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.owner.leave(this);
    this.end();
  }
}

/** The turns the current async call chain holds, of every cache; set by a get that missed. */
const held = new AsyncLocalStorage<readonly CacheTurn[]>();
/** Caches that record and are not closed: the context is switched off when none is left. */
let users = 0;

// The number of the current synchronous run: it changes once the microtasks queued in it run,
// before any continuation of an await made in it.
let runNo = 0;
let runQueued = false;
function runNumber(): number {
  if (!runQueued) {
    runQueued = true;
    queueMicrotask(() => {
      runNo++;
      runQueued = false;
    });
  }
  return runNo;
}

/**
 * Validates `turnTimeoutMs` (whole milliseconds, 0 to 2^31-1); undefined gives the default.
 *
 * @example
 * turnTimeout(5000) // 5000
 */
export function turnTimeout(v: unknown): number {
  if (v === undefined) return DEFAULT_TURN_TIMEOUT_MS;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_TIMER_MS) {
    throw new TapedeckError('E_ARG', `Invalid turnTimeoutMs ${typeof v === 'string' ? JSON.stringify(v) : String(v)}.`, {
      hint: `Use a whole number of milliseconds from 0 to ${MAX_TIMER_MS} (how long a put waits for an earlier identical call that has not put).`,
    });
  }
  return v;
}

/**
 * The turns of one ReplayCache, per request key.
 *
 * @example
 * const turns = new CacheTurns(true, 60_000, warn);
 * turns.take(key);                    // in get, on a miss in record or update mode
 * const turn = turns.claim(() => key); // in put
 * const wait = turn && turns.before(turn); if (wait) await wait; // then append, then turn.finish()
 */
export class CacheTurns {
  /** Per key, the turns not ended, in the order their gets were made. */
  private readonly lines = new Map<string, CacheTurn[]>();
  private using = false;
  private closed = false;

  constructor(
    /** Whether the cache records (record, update): only then do misses take turns. */
    private readonly records: boolean,
    private readonly timeoutMs: number,
    /** Told of turns a put gave up on after the timeout. */
    private readonly gaveUp: (key: string, count: number, waitedMs: number) => void,
  ) {
    if (!records) return;
    this.using = true;
    // Switched on now, not at the first miss: a promise made while it is off carries no context
    // of its own (Node 20 tracks contexts per promise only while one is on), and a turn left in
    // such a shared one would be read by every call that awaited before it, as their own.
    if (users++ === 0) held.run([], () => undefined);
  }

  /**
   * A get of `key` missed in a mode that records: takes a turn at the end of the key's line and
   * leaves it in the calling chain's context, or keeps the chain's open turn of the key when
   * this get repeats that turn's call (a retry).
   *
   * @example
   * if (record === undefined) turns.take(keys.key)
   */
  take(key: string): void {
    if (!this.records || this.closed) return;
    const mine = held.getStore() ?? [];
    const run = runNumber();
    const open = mine.find((t) => t.owner === this && t.key === key && t.state === 'open');
    // Asked again after its get returned: a retry of that call, which keeps its place. Stamped
    // with this run, so another call started in this same run takes a turn of its own.
    if (open && open.run !== run) {
      open.run = run;
      return;
    }
    const turn = new CacheTurn(this, key, run);
    let line = this.lines.get(key);
    if (!line) this.lines.set(key, (line = []));
    line.push(turn);
    // A new context: the caller's continuation gets it; one made by another call of this run
    // keeps its own turn of the key (`open`, left out), and turns of other keys stay.
    held.enterWith([...mine.filter((t) => t.state === 'open' && t !== open), turn]);
  }

  /**
   * The open turn of the calling chain for a put, which the put now holds; undefined when the
   * chain holds none of this cache (then the put appends at once). `keyOf` gives the put's key
   * and is called only when the chain holds a turn of this cache.
   *
   * @example
   * const turn = turns.claim(() => cache.cacheKey(request))
   */
  claim(keyOf: () => string): CacheTurn | undefined {
    const mine = held.getStore()?.filter((t) => t.owner === this && t.state === 'open');
    if (!mine || mine.length === 0) return undefined;
    let key: string;
    try {
      key = keyOf();
    } catch {
      // Not keyable: the put fails on it itself, holding no turn.
      return undefined;
    }
    const turn = mine.find((t) => t.key === key);
    if (turn) turn.state = 'claimed';
    return turn;
  }

  /**
   * Resolves once every earlier turn of the key has ended. An earlier turn whose put has not
   * come within the timeout is given up; earlier puts that came are still waited for.
   * Undefined when no earlier turn is left: the put then goes on in the same tick, as a put
   * without a turn does, so puts issued together still queue in call order.
   *
   * @example
   * const wait = turns.before(turn); if (wait) await wait
   */
  before(turn: CacheTurn): Promise<void> | undefined {
    const line = this.lines.get(turn.key) ?? [];
    const earlier = line.slice(0, Math.max(0, line.indexOf(turn)));
    return earlier.length === 0 ? undefined : this.wait(turn, earlier);
  }

  private async wait(turn: CacheTurn, earlier: readonly CacheTurn[]): Promise<void> {
    const t0 = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = await Promise.race([
      Promise.all(earlier.map((t) => t.ended)).then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), this.timeoutMs))),
    ]);
    clearTimeout(timer);
    if (!late) return;
    const given = earlier.filter((t) => t.state === 'open');
    for (const t of given) t.finish();
    if (given.length > 0) this.gaveUp(turn.key, given.length, Date.now() - t0);
    await Promise.all(earlier.map((t) => t.ended));
  }

  /** Removes an ended turn from its line. */
  leave(turn: CacheTurn): void {
    const line = this.lines.get(turn.key);
    if (!line) return;
    const i = line.indexOf(turn);
    if (i >= 0) line.splice(i, 1);
    if (line.length === 0) this.lines.delete(turn.key);
  }

  /**
   * At close: gives up every turn whose put has not come (the puts waiting on them go on), and
   * takes no more. Claimed turns end as their puts do.
   *
   * @example
   * turns.close(); await Promise.allSettled(puts)
   */
  close(): void {
    this.closed = true;
    for (const line of [...this.lines.values()]) for (const t of [...line]) if (t.state === 'open') t.finish();
    if (this.using) {
      this.using = false;
      // Every cache that took a turn is closed: no context is read any more, and an enabled
      // AsyncLocalStorage costs every promise the process makes (Node 20 tracks it per promise).
      if (--users === 0) held.disable();
    }
  }
}
