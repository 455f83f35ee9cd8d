// Update mode sends every request the tape does not answer upstream and records it; the miss
// that sends it there was diagnosed in full first (the closest recordings, what differs), which
// on a 60,000-record tape was ~90% of each new request's time (300 new requests: 29.4 s against
// 2.8 s in record mode). The matcher now answers update mode with an undiagnosed miss; the
// diagnosis is made only when the miss is shown (the upstream unreachable). Replay's misses are
// diagnosed as before.
import OpenAI from 'openai';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { createMatcher } from '../../src/match/matcher.ts';
import { createFetch } from '../../src/proxy/index.ts';
import { upstreamSuite } from './upstream-suite.ts';

// Counts the diagnoses made, by wrapping the one function that makes them.
const diagnosed = vi.hoisted(() => ({ n: 0 }));
vi.mock('../../src/match/diagnose.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/match/diagnose.ts')>();
  return { ...real, explainMiss: (...args: Parameters<typeof real.explainMiss>) => (diagnosed.n++, real.explainMiss(...args)) };
});

const suite = upstreamSuite('update-undiagnosed');
const ask = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] });

async function recorded(name: string): Promise<string> {
  const tape = join(suite.dir, name);
  const rec = createFetch({ tape, mode: 'record' });
  const client = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-real', fetch: rec });
  for (const q of ['France', 'Italy', 'Peru']) await client.chat.completions.create(ask(`What is the capital of ${q}?`));
  await rec.close();
  return tape;
}

describe('a matcher miss without diagnosis', () => {
  const recordings = [{ request: ask('What is the capital of France?'), response: { ok: 1 } }];

  it('{ diagnose: false }: a short E_MISS with the key, no diagnosis; explain() gives the diagnosed one', () => {
    const m = createMatcher({ recordings, mode: 'exact' });
    const before = diagnosed.n;
    let miss: { code?: string; message: string; details: Record<string, unknown> } | undefined;
    try {
      m.match(ask('What is the capital of Spain?'), { diagnose: false });
    } catch (e) {
      miss = e as typeof miss;
    }
    expect(miss?.code).toBe('E_MISS');
    expect(miss?.details.diagnosed).toBe(false);
    expect(miss?.details.key).toMatch(/^[0-9a-f]{64}$/);
    expect(miss?.message).not.toContain('text differs');
    expect(diagnosed.n).toBe(before);
    const shown = m.explain(ask('What is the capital of Spain?'));
    expect(shown.code).toBe('E_MISS');
    expect(shown.message).toContain('message 0 (user) text differs from the closest recording');
    expect(shown.details.key).toBe(miss?.details.key);
    // explain() marks nothing used: the recording still answers its own request.
    expect(m.match(ask('What is the capital of France?')).matchedBy).toBe('exact');
  });

  it('by default a miss is diagnosed as before', () => {
    const m = createMatcher({ recordings, mode: 'exact' });
    expect(() => m.match(ask('What is the capital of Spain?'))).toThrow(/message 0 \(user\) text differs from the closest recording/);
  });
});

describe('update mode', () => {
  it('records new requests without diagnosing their misses', async () => {
    const tape = await recorded('new.tape');
    const f = createFetch({ tape, mode: 'update' });
    const client = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-real', fetch: f });
    const before = diagnosed.n;
    for (const q of ['Spain', 'Chile', 'Japan']) await client.chat.completions.create(ask(`What is the capital of ${q}?`));
    // A recorded request is still answered from the tape.
    await client.chat.completions.create(ask('What is the capital of France?'));
    const stats = await f.stats();
    await f.close();
    expect(stats.byMatch.recorded).toBe(3);
    expect(stats.byMatch.exact).toBe(1);
    expect(diagnosed.n).toBe(before);
  });

  it('a miss that cannot be recorded (upstream unreachable) is still shown diagnosed', async () => {
    const tape = await recorded('offline.tape');
    const f = createFetch({ tape, mode: 'update' });
    const err = (await new OpenAI({ baseURL: 'http://127.0.0.1:9/v1', apiKey: 'sk-real', fetch: f, maxRetries: 0 }).chat.completions.create(ask('What is the capital of Spain?')).catch((e: unknown) => e)) as Error;
    await f.close();
    expect(err.message).toContain('text differs from the closest recording');
    expect(err.message).toMatch(/recording it needs the network and a real API key/i);
  });

  it('replay mode: a miss is diagnosed as before', async () => {
    const tape = await recorded('replay.tape');
    const f = createFetch({ tape, mode: 'replay' });
    const err = (await new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-real', fetch: f, maxRetries: 0 }).chat.completions.create(ask('What is the capital of Spain?')).catch((e: unknown) => e)) as Error;
    await f.close();
    expect(err.message).toContain('message 0 (user) text differs from the closest recording');
  });
});
