// docs/chaos.md "Test my fallback model": the primary client sends `x-tapedeck-chaos: 529`, the
// fallback none. On the run that records (record mode with chaos live, or a test's update run),
// the primary's real answer is recorded behind the forced fault, as behind a drawn one, so the
// replay has what the fault stands in for. Before, the forced fault's request never went to the
// API: the replay missed the primary (400 E_MISS, not 529) and the fallback path was never taken.
// With the real Anthropic and openai SDKs against the fake provider.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { MODEL, tempDir } from './record.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const tmp = tempDir('forced-record-behind');
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  tmp.remove();
});

/** The app: ask the primary (its header forces a 529), on a 529 ask the fallback. */
async function ask(f: typeof fetch): Promise<string> {
  const primary = new Anthropic({ apiKey: 'sk-ant-test', baseURL: up.url, fetch: f, maxRetries: 0, defaultHeaders: { 'x-tapedeck-chaos': '529' } });
  const fallback = new OpenAI({ apiKey: 'sk-test', baseURL: `${up.url}/v1`, fetch: f, maxRetries: 0 });
  try {
    await primary.messages.create({ model: 'claude-3-5-haiku-latest', max_tokens: 20, messages: [{ role: 'user', content: 'which model?' }] });
    return 'primary';
  } catch (e) {
    if ((e as { status?: number }).status !== 529) return `primary failed with ${(e as { status?: number }).status}`;
  }
  const r = await fallback.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'which model?' }] });
  return r.choices[0]?.message.content ? 'fallback' : 'empty fallback';
}

describe('a fault forced by the x-tapedeck-chaos header on the run that records', () => {
  it('createFetch in record mode with chaos live: the replay gets the 529 and falls back', async () => {
    const tape = join(tmp.dir, 'record.tape');
    const rec = createFetch({ tape, mode: 'record', chaos: { live: true } });
    try {
      expect(await ask(rec)).toBe('fallback');
    } finally {
      await rec.close();
    }
    const replay = createFetch({ tape, mode: 'replay' });
    try {
      expect(await ask(replay)).toBe('fallback');
    } finally {
      await replay.close();
    }
  });

  it('a test in update mode, then in CI: falls back on both runs', async () => {
    const tape = join(tmp.dir, 'update.tape');
    for (const env of [{}, { CI: 'true' }]) {
      const t = openTestTape({ tape, env, test: 'falls back to another model' });
      t.chaos({});
      try {
        expect(await ask(t.fetch)).toBe('fallback');
      } finally {
        await t.close();
      }
    }
  });
});
