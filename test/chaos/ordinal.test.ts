// The k-th call of a request gets the k-th recording, whatever fault it got. A `stall` is a whole
// answer (slow): the call is answered, and the next call of the request gets the next recording.
// A `cut` or `malformed` answer is a failed attempt the client retries: its retry gets the same
// recording, whole. Through createFetch and the proxy, with the real openai SDK.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type OpenAI from 'openai';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import type { ChaosOptions } from '../../src/chaos/options.ts';
import { openai, recordTape, REPLAY_BASE, streamText, tempDir } from './record.ts';

const tmp = tempDir('ordinal');
const tape = join(tmp.dir, 'again.tape');
const PROMPT = 'Again';
/** The three recordings of the same request, in order. */
const recorded: string[] = [];

beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    for (let i = 0; i < 3; i++) recorded.push(await streamText(c, PROMPT));
  });
  await up.close();
  expect(new Set(recorded).size).toBe(3);
});
afterAll(() => tmp.remove());

/** Which recording a text came from (0, 1, 2), -1 for none. */
const which = (text: string) => recorded.indexOf(text);

/**
 * Makes the same streamed call three times; a call whose stream fails is retried (as an app
 * would) until it comes whole. Returns the recording each call got, and checks each failed
 * attempt's text was the start of the recording its retry then got whole.
 */
async function threeCalls(c: OpenAI): Promise<number[]> {
  const got: number[] = [];
  for (let i = 0; i < 3; i++) {
    const partials: string[] = [];
    for (let attempt = 0; ; attempt++) {
      expect(attempt, 'a call kept failing').toBeLessThan(20);
      let text = '';
      try {
        for await (const chunk of await c.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: PROMPT }] })) text += chunk.choices[0]?.delta.content ?? '';
      } catch {
        partials.push(text);
        continue;
      }
      got.push(which(text));
      for (const p of partials) expect(text.startsWith(p), `a failed attempt's text ${JSON.stringify(p)} is not the start of its retry's ${JSON.stringify(text)}`).toBe(true);
      break;
    }
  }
  return got;
}

async function viaFetch(chaos: ChaosOptions | undefined): Promise<number[]> {
  const f = createFetch({ tape, mode: 'replay', ...(chaos ? { chaos } : {}) });
  try {
    return await threeCalls(openai(REPLAY_BASE, { fetch: f }));
  } finally {
    await f.close();
  }
}

async function viaProxy(chaos: ChaosOptions): Promise<number[]> {
  const p = await startProxy({ tape, mode: 'replay', port: 0, chaos });
  try {
    return await threeCalls(openai(p.url));
  } finally {
    await p.close();
  }
}

describe('the k-th call gets the k-th recording', () => {
  it('without faults: 1, 2, 3', async () => {
    expect(await viaFetch(undefined)).toEqual([0, 1, 2]);
  });

  it('stall on every call: each is a whole answer, and the next call gets the next recording', async () => {
    expect(await viaFetch({ faults: { stall: 1 }, stallMs: 2 })).toEqual([0, 1, 2]);
    expect(await viaProxy({ faults: { stall: 1 }, stallMs: 2 })).toEqual([0, 1, 2]);
  });

  it('stall on some calls (rate 0.5, several seeds): 1, 2, 3', async () => {
    for (const seed of [1, 2, 3, 4, 5]) expect(await viaFetch({ faults: { stall: 0.5 }, stallMs: 2, seed }), `seed ${seed}`).toEqual([0, 1, 2]);
  });

  it('cut and malformed are failed attempts: each retry gets its call’s recording whole', async () => {
    for (const fault of ['cut', 'malformed'] as const) {
      expect(await viaFetch({ faults: { [fault]: 1 }, attempts: 1, seed: 1 }), fault).toEqual([0, 1, 2]);
      expect(await viaProxy({ faults: { [fault]: 1 }, attempts: 1, seed: 1 }), fault).toEqual([0, 1, 2]);
    }
  });

  it('stall, cut and malformed mixed, every attempt drawn anew (several seeds): 1, 2, 3', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const chaos = { faults: { stall: 0.3, cut: 0.3, malformed: 0.2 }, stallMs: 1, seed };
      expect(await viaFetch(chaos), `seed ${seed}`).toEqual([0, 1, 2]);
      expect(await viaProxy(chaos), `proxy, seed ${seed}`).toEqual([0, 1, 2]);
    }
  });
});
