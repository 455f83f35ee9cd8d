/**
 * The timer functions as they were when this module loaded, for the waits of a test tape (the
 * turn of the event loop close() waits before it shuts the tape, see `settle` in ./session.ts).
 * A test may install fake timers (`vi.useFakeTimers()`, `jest.useFakeTimers()`) and leave them
 * installed: the global setImmediate then never fires unless the test advances the clock, and a
 * tape that waited on it hung the runner in the test's teardown (vitest waits for a fixture's
 * teardown without a timeout). The test runner loads this module (through `llm-tapedeck/vitest`,
 * the jest setup file, mocha's `--require`) before a test runs, so what it captures is real.
 *
 * Fakes are told by what the fake-timer libraries leave on them: @sinonjs/fake-timers (vitest's
 * and jest's modern fake timers) a `clock`, with the replaced function at `clock._<name>`; jest's
 * legacy fake timers are mock functions (`_isMockFunction`). Captured already faked (fake timers
 * installed before this module loaded), a function is taken from its clock; failing that, the
 * wait fails at once with E_ARG, saying so, rather than hanging.
 */
import { TapedeckError } from '../errors.ts';

type TimerName = 'setTimeout' | 'clearTimeout' | 'setImmediate' | 'clearImmediate';
type Timers = Pick<typeof globalThis, TimerName>;

const captured: Timers = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setImmediate: globalThis.setImmediate,
  clearImmediate: globalThis.clearImmediate,
};

/** Whether `f` is a fake timer function (see the module's comment). */
export function isFakeTimer(f: unknown): boolean {
  if (typeof f !== 'function') return false;
  const marks = f as { clock?: unknown; _isMockFunction?: unknown };
  return (marks.clock !== undefined && marks.clock !== null) || marks._isMockFunction === true;
}

/** Whether fake timers are installed right now (the global setTimeout or setImmediate is a fake). */
export function fakeTimersInstalled(): boolean {
  return isFakeTimer(globalThis.setTimeout) || isFakeTimer(globalThis.setImmediate);
}

/** What a test is told when a tape must wait and only fake timers are there to wait with. */
export function fakeTimersError(what: string): TapedeckError {
  return new TapedeckError('E_ARG', `${what}: fake timers are installed (vi.useFakeTimers() or jest.useFakeTimers()), and the tape needs real timers to wait for the test's calls and close.`, {
    hint: 'Restore real timers before the test ends (vi.useRealTimers() / jest.useRealTimers(), in the test or an afterEach hook), or install the fake timers after llm-tapedeck is imported.',
  });
}

/** Whether the global queueMicrotask is a fake (`vi.useFakeTimers({ toFake: [..., 'queueMicrotask'] })`). */
export const microtasksFaked = (): boolean => isFakeTimer(globalThis.queueMicrotask);

/**
 * What a test is told when it calls through its tape with queueMicrotask faked: Node's fetch
 * closes the body of every Response made from bytes through it, so reading an answer never ends
 * (the stream is pulled again and again, and the worker spins: the test timeout never reports).
 */
export function fakeMicrotasksError(): TapedeckError {
  return new TapedeckError('E_ARG', "A call through the test's tape with queueMicrotask faked (vi.useFakeTimers({ toFake: [..., 'queueMicrotask'] })): Node's fetch finishes reading every answer through queueMicrotask, so no call could end.", {
    hint: "Leave 'queueMicrotask' out of toFake (the default fake timers leave it real), or restore real timers (vi.useRealTimers()) before the call.",
  });
}

/**
 * The real timer function `name`: the one captured when this module loaded or, when that was a
 * fake already, the original its fake clock kept. Throws E_ARG (see fakeTimersError) when no
 * real one is known.
 */
export function realTimer<K extends TimerName>(name: K): Timers[K] {
  const f = captured[name];
  if (!isFakeTimer(f)) return f;
  const original = (f as unknown as { clock?: Record<string, unknown> }).clock?.[`_${name}`];
  if (typeof original === 'function' && !isFakeTimer(original)) return original as Timers[K];
  throw fakeTimersError(`llm-tapedeck loaded with ${name} faked already`);
}

/** Resolves after a turn of the event loop, on the real setImmediate whatever timers a test faked. */
export function nextTurn(): Promise<void> {
  const immediate = realTimer('setImmediate');
  return new Promise((r) => void immediate(r));
}

/**
 * Milliseconds on a monotonic clock as it was when this module loaded (fake timers may fake
 * Date and performance too), for a close's deadline (see `settle` in ./session.ts).
 */
export const realNow: () => number = performance.now.bind(performance);

/** How often a watched wait looks again for fake timers, once past its bound. */
const RECHECK_MS = 1000;

/**
 * `work`, or E_ARG (see fakeTimersError) when it has not settled `ms` after this call while fake
 * timers are installed: the bounds further down (createFetch's shutdown timeout, a tape lock's
 * wait) run on the global timers, so under fake timers a hung upstream or a held lock would keep
 * the test's teardown waiting for ever instead of failing it. Without fake timers it waits as
 * long as `work` does (those bounds end it). Counted on the real timers (Date may be faked too);
 * with none known, `work` as it is.
 */
export function failIfStuckOnFakeTimers<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let set: typeof setTimeout;
  let clear: typeof clearTimeout;
  try {
    set = realTimer('setTimeout');
    clear = realTimer('clearTimeout');
  } catch {
    return work;
  }
  return new Promise<T>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let waited = ms;
    const look = (): void => {
      if (fakeTimersInstalled()) return reject(fakeTimersError(`${what} has waited ${(waited / 1000).toFixed(1).replace(/\.0$/, '')} s`));
      waited += RECHECK_MS;
      arm(RECHECK_MS);
    };
    // Unreferenced: the watch alone never keeps the process alive.
    const arm = (after: number): void => void (timer = set(look, after)).unref?.();
    arm(ms);
    work.then(
      (v) => {
        clear(timer);
        resolve(v);
      },
      (e: unknown) => {
        clear(timer);
        reject(e);
      },
    );
  });
}
