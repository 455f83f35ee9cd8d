// A test renamed on a laptop with no API key: the default mode there is update, so its miss went
// to the provider to be recorded, failed (no network, no key), and said "the tape has no HTTP
// recordings; recording it failed: ... unreachable", sending the developer off to find a key,
// while the tape of the test's old name, beside it, holds this exact request. The tape of the
// new name was made by the update run itself, so it "existed" when the miss was told. Now the
// miss names the old tape and the command that moves it, as it does in CI; run as printed, the
// test replays. Through openTestTape and the real openai SDK.
import OpenAI from 'openai';
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('renamed-offline');

/** A loopback URL nothing listens on: the provider, unreachable. */
async function deadUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}`;
}

async function run(root: string, test: string, tape: string, baseURL: string, env: Record<string, string>): Promise<{ answer?: string; error?: string; failure?: string }> {
  const t = openTestTape({ tape: join(root, tape), test, file: 'test/chat.test.mjs', root, env, failOnMiss: false });
  const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
  try {
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
    return { answer: r.choices[0]!.message.content! };
  } catch (e) {
    return { error: (e as Error).message, failure: t.missFailure()?.message };
  } finally {
    await t.close();
  }
}

describe('a renamed test missed in update mode with the provider unreachable', () => {
  it('names the tape of its old name and the command that moves it, not a key to record with', async () => {
    const root = join(suite.dir, 'laptop');
    mkdirSync(join(root, 'test'), { recursive: true });
    writeFileSync(join(root, 'test/chat.test.mjs'), '');
    const recorded = await run(root, 'says hello', 'test/__tapes__/chat.test/says-hello.tape', suite.upstream.url, { TAPEDECK_MODE: 'record' });
    expect(recorded.answer).toBeDefined();
    const offline = await deadUrl();
    const renamed = await run(root, 'greets the user', 'test/__tapes__/chat.test/greets-the-user.tape', offline, {});
    expect(renamed.answer).toBeUndefined();
    expect(renamed.failure).toContain('test/__tapes__/chat.test/says-hello.tape holds this exact request');
    expect(renamed.failure).not.toContain('the tape has no HTTP recordings');
    // The update run made no tape of the new name.
    expect(existsSync(join(root, 'test/__tapes__/chat.test/greets-the-user.tape'))).toBe(false);
    const command = /(mkdir -p \S+ && mv \S+ \S+)/.exec(renamed.failure!)?.[1];
    expect(command, renamed.failure).toBeDefined();
    execSync(command!, { cwd: root });
    expect(await run(root, 'greets the user', 'test/__tapes__/chat.test/greets-the-user.tape', offline, { CI: 'true' })).toEqual({ answer: recorded.answer });
  });
});
