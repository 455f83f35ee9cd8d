// Update mode (the local default) with the API unreachable: the SDK's error said why (recording
// needs the network), but the test's failure said only "the tape has no HTTP recordings" and
// "Record it: TAPEDECK_MODE=update ...", the command just run. The failure now gives the reason
// recording failed and says what recording needs before the command. With the real openai SDK
// against a port nothing listens on.
import OpenAI from 'openai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-update-down-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('update mode with the API unreachable', () => {
  it("the test's failure says recording failed and why, not only the record command", async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const down = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    await new Promise((r) => s.close(r));
    const t = openTestTape({ tape: join(dir, 'down.tape'), env: {}, test: 'upstream down', recordCommand: "TAPEDECK_MODE=update npx vitest run t.test.ts -t '^upstream down$'" });
    expect(t.mode).toBe('update');
    const c = new OpenAI({ baseURL: `${down}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
    // The app swallows the error.
    await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined);
    const failure = (await t.close().catch((e: unknown) => e)) as Error & { code?: string };
    expect(failure.code).toBe('E_MISS');
    expect(failure.message).toMatch(/POST \/v1\/chat\/completions: .*; recording it failed: .*unreachable/);
    expect(failure.message).toContain("Recording needs the network and a real API key (the upstream could not be reached or refused the key); then record it: TAPEDECK_MODE=update npx vitest run t.test.ts -t '^upstream down$'");
  });
});
