// A call whose SDK retried a failed attempt (numbered 1) and then got a damaged body (`malformed`,
// `cut`: a 200 no SDK retries) is retried by the app itself, which the SDK numbers 0: that
// request is still the same call, and gets the same recording. Through createFetch with the real
// openai SDK; which attempt gets which fault is forced per request, so nothing depends on a seed.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Chaos } from '../../src/chaos/decide.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { chatText, openai, recordTape, REPLAY_BASE, tempDir } from './record.ts';

const tmp = tempDir('app-retry-after-damage');
const tape = join(tmp.dir, 'hello.tape');
const PROMPT = 'Hello again';
const recorded: string[] = [];

beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    for (let i = 0; i < 3; i++) recorded.push(await chatText(c, PROMPT));
  });
  await up.close();
  expect(new Set(recorded).size).toBe(3);
});
afterAll(() => tmp.remove());

describe('the app’s retry after a damaged answer that followed an SDK retry', () => {
  it('the decider: numbered 0 after a numbered retry that got a damaged body is that call again', () => {
    const c = new Chaos<string>({ seed: 1 }, 'http', () => {});
    const first = c.decide('k', '503', undefined, { retries: 0, tellsSent: true })!;
    c.sent(first.call);
    const retry = c.decide('k', 'malformed', undefined, { retries: 1, tellsSent: true })!;
    expect(retry.ordinal).toBe(0);
    c.sent(retry.call);
    const app = c.decide('k', undefined, undefined, { retries: 0, tellsSent: true });
    expect(app).toBeUndefined();
    // The next request numbered 0 is the next call.
    expect(c.decide('k', '429', undefined, { retries: 0, tellsSent: true })?.ordinal).toBe(1);
  });

  it.each(['malformed', 'cut'] as const)('createFetch and the openai SDK, reset then %s: the calls get recordings 1, 2, 3', async (damage) => {
    // Chaos on, at a rate no call of this seed draws: every request is asked of it, and the
    // faults come from the requests' headers alone.
    const f = createFetch({ tape, mode: 'replay', summary: false, chaos: { faults: { 500: 1e-9 }, seed: 1 } });
    // The faults each request of the second call gets, in order: the SDK's first attempt a reset,
    // its retry a damaged body; the app's own retry none.
    const plan: (string | undefined)[] = [];
    const faulting = ((input: RequestInfo | URL, init?: RequestInit) => {
      const fault = plan.shift();
      const headers = new Headers(init?.headers);
      if (fault) headers.set('x-tapedeck-chaos', fault);
      return f(input, { ...init, headers });
    }) as typeof fetch;
    try {
      const c = openai(REPLAY_BASE, { fetch: faulting, maxRetries: 2 });
      const got: string[] = [];
      got.push(await chatText(c, PROMPT));
      plan.push('reset', damage);
      let failed = false;
      try {
        got.push(await chatText(c, PROMPT));
      } catch {
        failed = true;
        got.push(await chatText(c, PROMPT));
      }
      expect(failed).toBe(true);
      expect(plan).toEqual([]);
      got.push(await chatText(c, PROMPT));
      expect(got).toEqual(recorded);
    } finally {
      await f.close();
    }
  });
});
