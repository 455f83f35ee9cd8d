// Through createFetch, as users met them: a prompt with today's date as JavaScript prints it, and
// a hosted MCP tool whose token (masked on the tape by its keyed mask) is another developer's, or
// none in CI. Both misses advised only to re-record, which records tomorrow's date or needs the
// real token. The miss in the error body now names the option that makes the recording answer,
// and following it replays.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { VOLATILE_PATTERNS } from '../../src/providers/volatile-text.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-volatile-advice-'));
let upstream: Upstream;

beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

type Fetch = ReturnType<typeof createFetch>;
const post = (f: Fetch, path: string, body: unknown) =>
  f(`${upstream.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test-key' }, body: JSON.stringify(body) });

async function record(tape: string, path: string, body: unknown): Promise<void> {
  const rec = createFetch({ tape, mode: 'record', summary: false });
  try {
    expect((await post(rec, path, body)).status).toBe(200);
  } finally {
    await rec.close();
  }
}

/** The tapedeck details of a replay miss (the error body's `tapedeck`), and whether it was one. */
async function replay(tape: string, path: string, body: unknown, opts: Parameters<typeof createFetch>[0] = {}): Promise<{ status: number; message: string; tapedeck?: Record<string, unknown> }> {
  const play = createFetch({ ...opts, tape, mode: 'replay', summary: false });
  try {
    const r = await post(play, path, body);
    const json = (await r.json()) as { error?: { message?: string; tapedeck?: Record<string, unknown> } };
    return { status: r.status, message: json.error?.message ?? '', tapedeck: json.error?.tapedeck };
  } finally {
    await play.close();
  }
}

describe("a prompt with today's date as toDateString and toLocaleDateString print it", () => {
  const chat = (today: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: `You are a scheduler. Today is ${today}.` }, { role: 'user', content: 'What is on?' }] });

  it('the miss names volatileText with the two patterns, and following it replays the recording', async () => {
    const tape = join(dir, 'date.tape');
    await record(tape, '/v1/chat/completions', chat('Mon Dec 07 2026 (12/7/2026)'));
    const miss = await replay(tape, '/v1/chat/completions', chat('Tue Dec 08 2026 (8.12.2026)'));
    expect(miss.status).toBe(400);
    const option = 'createFetch({ volatileText: [VOLATILE_PATTERNS.dateString, VOLATILE_PATTERNS.localeDate] })';
    expect(miss.message).toContain(option);
    expect(miss.tapedeck?.fix).toContain(option);
    expect((miss.tapedeck?.fixes as string[])[0]).toContain(option);
    const hit = await replay(tape, '/v1/chat/completions', chat('Tue Dec 08 2026 (8.12.2026)'), { volatileText: [VOLATILE_PATTERNS.dateString, VOLATILE_PATTERNS.localeDate] });
    expect(hit.status).toBe(200);
  });
});

describe("a hosted MCP tool's authorization, recorded with one developer's token", () => {
  const call = (authorization: string) => ({
    model: 'gpt-4.1-mini',
    input: 'list my repos',
    tools: [{ type: 'mcp', server_label: 'github', server_url: 'https://api.githubcopilot.com/mcp/', require_approval: 'never', authorization }],
  });
  const tape = join(dir, 'hosted-mcp.tape');
  beforeAll(() => record(tape, '/v1/responses', call('ghp_AAAAbbbbCCCCddddEEEEffffGGGGhhhhIIII1234')));

  it('is masked on the tape by its keyed mask', async () => {
    const text = JSON.stringify((await readTape(tape)).records);
    expect(text).not.toContain('ghp_AAAA');
    expect(text).toMatch(/"authorization":"\[REDACTED:[0-9a-f]{16}\]"/);
  });

  it("another developer's token, or none (CI): the miss says only masked credentials differ and names volatileKeys; following it replays", async () => {
    for (const token of ['ghp_ZZZZyyyyXXXXwwwwVVVVuuuuTTTTssss9876', '']) {
      const miss = await replay(tape, '/v1/responses', call(token));
      expect(miss.status, token).toBe(400);
      expect(miss.message.toLowerCase(), token).toContain('only masked credentials differ (another token, or none): ignore it with volatilekeys: ["authorization"]');
      expect(miss.tapedeck?.volatile, token).toEqual({ option: 'volatileKeys', names: ['authorization'] });
      const hit = await replay(tape, '/v1/responses', call(token), { volatileKeys: ['authorization'] });
      expect(hit.status, token).toBe(200);
    }
  });
});
