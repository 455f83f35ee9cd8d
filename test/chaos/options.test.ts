// The chaos options object is checked where it is given (createFetch, fetch.chaos(), the proxy,
// handler.chaos(), tape.chaos()): a misspelt option or a value of the wrong type is E_ARG naming
// the option and what it takes, never silently a test with no faults; values are shown as
// written (NaN, not null) and limits as they are.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { checkChaos, type ChaosOptions } from '../../src/chaos/options.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { createHandler } from '../../src/proxy/handler.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { tempDir } from './record.ts';

const tmp = tempDir('options');
afterAll(() => tmp.remove());
const tape = join(tmp.dir, 'none.tape');

function errorOf(f: () => unknown): TapedeckError {
  try {
    f();
  } catch (e) {
    if (e instanceof TapedeckError) return e;
    throw e;
  }
  throw new Error('accepted');
}

/** The error of each way to give chaos options; all must agree. */
async function everywhere(chaos: unknown): Promise<TapedeckError> {
  const fromFetch = errorOf(() => createFetch({ tape, mode: 'replay', chaos: chaos as ChaosOptions }));
  const f = createFetch({ tape, mode: 'replay' });
  const fromFetchChaos = errorOf(() => f.chaos(chaos as ChaosOptions));
  await f.close();
  const fromProxy = await startProxy({ tape, mode: 'replay', port: 0, chaos: chaos as ChaosOptions }).then(
    async (p) => {
      await p.close();
      throw new Error('accepted by startProxy');
    },
    (e: unknown) => e as TapedeckError,
  );
  const h = createHandler({ tape, mode: 'replay' });
  const fromHandler = errorOf(() => void h.chaos(chaos as ChaosOptions));
  await h.close();
  const t = openTestTape({ tape, env: { CI: '1' } });
  const fromTestTape = errorOf(() => t.chaos(chaos as ChaosOptions));
  await t.close();
  for (const e of [fromFetchChaos, fromProxy, fromHandler, fromTestTape]) expect(e.message).toBe(fromFetch.message);
  expect(fromFetch.code).toBe('E_ARG');
  return fromFetch;
}

describe('chaos options that are refused', () => {
  it('an unknown option: named, with the closest one and every option', async () => {
    const e = await everywhere({ fautls: { 429: 1 } });
    expect(e.message).toContain('Unknown chaos option "fautls"');
    expect(e.message).toContain('Did you mean faults?');
    expect(e.message).toContain('faults, latencyMs, latencyRate, seed, attempts, stallMs, cutAfter, retryAfterMs, live');
    expect((await everywhere({ faults: { 429: 1 }, retries: 1 })).message).toContain('Unknown chaos option "retries"');
  });

  it('live that is not a boolean', async () => {
    const e = await everywhere({ faults: { 429: 1 }, live: 'yes' });
    expect(e.message).toContain('chaos.live "yes" is not true or false');
  });

  it('faults as a string or an array: an object is needed; the text form is the CLI’s', async () => {
    for (const faults of ['429:0.2', [429]]) {
      const e = await everywhere({ faults });
      expect(e.message).toContain('chaos.faults must be an object of fault name to rate, such as { 429: 0.2 }');
      expect(e.message).toContain('--chaos 429:0.2');
      expect(e.message).not.toContain('Unknown');
    }
  });

  it('values are shown as given: NaN and Infinity, not null; strings quoted', async () => {
    expect((await everywhere({ faults: { 429: NaN } })).message).toContain('Rate NaN of fault 429 is not a number from 0 to 1');
    expect((await everywhere({ faults: { 429: Infinity } })).message).toContain('Rate Infinity of fault 429');
    expect((await everywhere({ faults: { 429: 'x' } })).message).toContain('Rate "x" of fault 429');
    expect((await everywhere({ faults: { stall: 1 }, stallMs: NaN })).message).toContain('chaos.stallMs NaN is not a whole number');
    expect((await everywhere({ faults: { 429: 1 }, seed: 'abc' })).message).toContain('chaos.seed "abc" is not a whole number');
    expect((await everywhere({ latencyMs: 5, latencyRate: NaN })).message).toContain('chaos.latencyRate NaN is not a number from 0 to 1');
    expect((await everywhere({ latencyMs: 5, latencyRate: '0.5' })).message).toContain('chaos.latencyRate "0.5" is not a number from 0 to 1');
  });

  it('a number past the limit says the limit', async () => {
    const e = await everywhere({ faults: { 429: 1 }, retryAfterMs: 1e12 });
    expect(e.message).toContain('chaos.retryAfterMs 1000000000000 is not a whole number from 0 to 2147483647');
    expect((await everywhere({ faults: { 429: 1 }, attempts: 0 })).message).toContain('chaos.attempts 0 is not a whole number from 1 to 2147483647');
  });

  it('chaos that is not an options object', async () => {
    for (const c of [null, 'chaos', 42, []]) expect((await everywhere(c)).message).toContain('chaos must be an object such as { faults: { 429: 0.2 } }');
  });
});

describe('chaos options that are taken', () => {
  it('every option, and options left undefined', () => {
    const all: ChaosOptions = { faults: { 429: 0.2, cut: 0.1, stall: 0.1, close: 0.5 }, latencyMs: 10, latencyRate: 0.5, seed: 7, attempts: 1, stallMs: 20, cutAfter: 3, retryAfterMs: 50, live: false };
    expect(checkChaos(all, 'proxy').map(([n]) => n)).toEqual(['429', 'cut', 'stall', 'close']);
    expect(checkChaos({ faults: { 429: 1 }, seed: undefined, live: undefined }, 'http')).toEqual([['429', 1]]);
    expect(checkChaos({}, 'http')).toEqual([]);
  });
});
