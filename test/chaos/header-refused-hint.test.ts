// A test that sends `x-tapedeck-chaos: 529` without calling tape.chaos() runs in update mode on
// its first run, where the header is refused (E_CHAOS_MODE). The refusal said to pass
// --chaos-live or `chaos: { live: true }`, which a test using the fixture has no place for:
// it now names tape.chaos({}) too. With the real Anthropic SDK, which surfaces the 400's message.
import Anthropic from '@anthropic-ai/sdk';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { tempDir } from './record.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const tmp = tempDir('header-refused-hint');
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  tmp.remove();
});

describe('x-tapedeck-chaos refused in a test that records', () => {
  it('says to call tape.chaos({})', async () => {
    const t = openTestTape({ tape: join(tmp.dir, 'primary.tape'), env: {}, test: 'falls back', onWarning: () => {} });
    const primary = new Anthropic({ apiKey: 'sk-ant-test', baseURL: up.url, fetch: t.fetch, maxRetries: 0, defaultHeaders: { 'x-tapedeck-chaos': '529' } });
    const err = await primary.messages.create({ model: 'claude-3-5-haiku-latest', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }).then(
      () => undefined,
      (e: unknown) => e as { status?: number; message?: string; error?: unknown },
    );
    await t.close().catch(() => {});
    expect(err?.status).toBe(400);
    expect(JSON.stringify(err?.error)).toContain('E_CHAOS_MODE');
    expect(JSON.stringify(err?.error)).toContain('tape.chaos({})');
  });
});
