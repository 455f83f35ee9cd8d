// `tapedeck rerecord` and secrets the tape keeps masked. It made the new tape with a salt of its
// own: a request holding a secret (a GitHub token in the prompt, `metadata.session_token`) was
// sent to the API as the text `[REDACTED:…]`, its answer filed under the original key, and after
// the documented `mv chat.rerecorded.tape chat.tape` the application's own call missed (the new
// salt masks the live secret otherwise); a secret in an answer, unchanged at the provider, masked
// differently and failed the diff as text drift. Now the new tape takes the original's salt, a
// request holding a masked secret is not sent (its recording is kept, and listed), and `tapedeck
// diff` of two tapes recorded separately says a secret is "masked on both sides" instead of
// failing. The real OpenAI SDK records through createFetch against the loopback fake provider;
// the CLI runs from dist.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unifyMasks } from '../../src/drift/masks.ts';
import { driftReport, type DriftReport } from '../../src/drift/report.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rerecord-held-'));
let up: Upstream;

beforeAll(async () => {
  expect(existsSync(bin), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI, run without blocking this process (the fake provider answers from here). */
function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: 'sk-live-openai-key' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => done({ status: status ?? -1, stdout, stderr }));
  });
}

/** The application: the OpenAI SDK over createFetch on `tape`, its base URL the fake's (`root` for paths outside /v1). */
async function app<T>(tape: string, mode: 'record' | 'replay', call: (openai: OpenAI, root: OpenAI) => Promise<T>): Promise<T> {
  const fetch = createFetch({ tape, mode, onWarning: () => {}, summary: false });
  try {
    const openai = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test-key', maxRetries: 0, fetch });
    const root = new OpenAI({ baseURL: up.url, apiKey: 'sk-test-key', maxRetries: 0, fetch });
    return await call(openai, root);
  } finally {
    await fetch.close();
  }
}

const frames = async (file: string) => {
  const bytes = readFileSync(file);
  return (await readTape(file)).records.map((x) => bytes.subarray(x.offset, x.offset + x.length).toString('hex'));
};
const saltOf = async (file: string) => (await readTape(file)).header.salt;

/** A question holding two secrets: a GitHub token in the prompt, and a secret-named member. */
const WITH_SECRET = {
  model: 'gpt-4o-mini',
  messages: [{ role: 'user' as const, content: 'What is the capital of France? Use my token ghp_zyxwvutsrqponmlkjihgfedcba9876543210' }],
  metadata: { session_token: 'sess-9f8e7d6c5b4a' },
};
const PLAIN = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'What is the capital of Spain?' }] };
/** A token endpoint: its answer holds two secrets (masked), the same on every call. */
const token = (root: OpenAI) => root.post('/oauth/token', { body: { grant_type: 'client_credentials', client_id: 'app-1' } });

describe('rerecord and masked secrets', () => {
  it('a request holding a masked secret is not sent, its recording is kept, and the app replays after the move', async () => {
    const tape = join(dir, 'chat.tape');
    await app(tape, 'record', async (openai) => {
      await openai.chat.completions.create(WITH_SECRET);
      await openai.chat.completions.create(PLAIN);
    });
    const before = await frames(tape);
    up.calls.length = 0;
    const r = await run(['rerecord', 'chat.tape', '--yes', '--fail-on', 'none']);
    expect(r.stderr).toContain('tapedeck rerecord: 1 request holds a secret the tape keeps masked, not sent');
    expect(r.stderr).toContain('Its recording is kept as it is: #0 POST /v1/chat/completions (body messages[0].content, body metadata.session_token).');
    expect(r.stderr).toContain('run the application with TAPEDECK_MODE=record');
    expect(r.stderr).toContain(`tapedeck rerecord: 1 request to ${up.url}`);
    expect(r.stderr).toContain('carried over 1 record unchanged, in its place (1 holding a masked secret)');
    expect(r.status).toBe(0);
    // The API never got the mask's text as a prompt.
    expect(up.calls.map((c) => JSON.parse(c.body).messages[0].content)).toEqual(['What is the capital of Spain?']);
    const out = join(dir, 'chat.rerecorded.tape');
    // The same salt, and the held recording byte for byte in its place.
    expect(await saltOf(out)).toBe(await saltOf(tape));
    const after = await frames(out);
    expect(after).toHaveLength(2);
    expect(after[0]).toBe(before[0]);
    expect(after[1]).not.toBe(before[1]);
    // The documented step, then the application's own call: answered from the tape.
    renameSync(out, tape);
    const answer = await app(tape, 'replay', (openai) => openai.chat.completions.create(WITH_SECRET));
    expect(answer.choices[0]!.message.content).toMatch(/^Echo \d+: What is the capital of France\? Use my token \[REDACTED:[0-9a-f]{16}\]$/);
    const again = await app(tape, 'replay', (openai) => openai.chat.completions.create(PLAIN));
    expect(again.choices[0]!.message.content).toMatch(/^Echo \d+: What is the capital of Spain\?$/);
  });

  it('every request picked holding one: nothing sent, nothing written, exit 2 with how to record them', async () => {
    const tape = join(dir, 'only-secret.tape');
    await app(tape, 'record', (openai) => openai.chat.completions.create(WITH_SECRET));
    up.calls.length = 0;
    const r = await run(['rerecord', 'only-secret.tape', '--yes']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/\ntapedeck: E_RERECORD_EMPTY nothing sent: every request picked in only-secret\.tape holds a secret the tape keeps masked \(1\)[^\n]*\nhint: Record them again by running the application with TAPEDECK_MODE=record/);
    expect(up.calls).toEqual([]);
    expect(existsSync(join(dir, 'only-secret.rerecorded.tape'))).toBe(false);
  });

  it('a secret in an answer the provider did not change: the same mask under the original salt, identical, exit 0', async () => {
    const tape = join(dir, 'token.tape');
    const first = await app(tape, 'record', (_openai, root) => token(root));
    expect(first).toMatchObject({ access_token: expect.any(String) });
    expect(readFileSync(tape).includes('[REDACTED:')).toBe(true);
    const r = await run(['rerecord', 'token.tape', '--yes', '--format', 'json']);
    const report = JSON.parse(r.stdout) as DriftReport;
    expect(report.summary).toMatchObject({ pairs: 1, added: 0, removed: 0, failing: 0 });
    expect(report.entries.map((e) => e.primary)).toEqual(['identical']);
    expect(r.status).toBe(0);
    expect(await saltOf(join(dir, 'token.rerecorded.tape'))).toBe(await saltOf(tape));
  });

  it('tapedeck diff of two tapes recorded separately (two salts): "masked on both sides", benign, exit 0', async () => {
    const a = join(dir, 'a.tape');
    const b = join(dir, 'b.tape');
    await app(a, 'record', (_openai, root) => token(root));
    await app(b, 'record', (_openai, root) => token(root));
    expect(await saltOf(a)).not.toBe(await saltOf(b));
    const r = await run(['diff', 'a.tape', 'b.tape', '--format', 'json']);
    const report = JSON.parse(r.stdout) as DriftReport;
    expect(report.summary).toMatchObject({ pairs: 1, failing: 0 });
    expect(report.entries[0]).toMatchObject({ primary: 'benign', classes: ['benign'], summary: expect.stringContaining('2 secrets masked on both sides (the values cannot be compared)') });
    expect(r.status).toBe(0);
    const terminal = await run(['diff', 'a.tape', 'b.tape']);
    expect(terminal.stdout).toContain('2 secrets masked on both sides');
    expect(terminal.status).toBe(0);
  });
});

describe('unifyMasks', () => {
  const A = '[REDACTED:aaaaaaaaaaaaaaaa]';
  const B = '[REDACTED:bbbbbbbbbbbbbbbb]';
  const C = '[REDACTED:cccccccccccccccc]';
  it('reads the old masks as the new ones where they correspond, one secret for one secret', () => {
    expect(unifyMasks(`x ${A} y ${A}`, `x ${B} y ${B}`)).toEqual({ text: `x ${B} y ${B}`, masked: 1 });
    expect(unifyMasks('/v1/x?token=%5BREDACTED%3Aaaaaaaaaaaaaaaaa%5D', '/v1/x?token=%5BREDACTED%3Abbbbbbbbbbbbbbbb%5D')?.text).toBe('/v1/x?token=%5BREDACTED%3Abbbbbbbbbbbbbbbb%5D');
    // Other words stay as they are: the comparison after still sees them.
    expect(unifyMasks(`old ${A}`, `new ${B}`)).toEqual({ text: `old ${B}`, masked: 1 });
  });
  it('leaves masks that do not correspond as they are (the change shows)', () => {
    expect(unifyMasks(`${A} ${A}`, `${B} ${C}`)).toBeUndefined();
    expect(unifyMasks(`${A}`, `${B} ${C}`)).toBeUndefined();
    expect(unifyMasks(`${A}`, `${A}`)).toBeUndefined();
    expect(unifyMasks('[REDACTED]', '[REDACTED]')).toBeUndefined();
  });
});

describe('tapedeck diff of MCP exchanges with secrets masked on both sides', () => {
  // A tool that lists the environment: its answer holds a secret, masked under each tape's salt.
  const exchange = (mask: string, extra = '') => ({
    v: 1,
    kind: 'mcp',
    key: 'k'.repeat(64),
    keyVersion: 1,
    recordedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1,
    method: 'tools/call',
    request: { method: 'tools/call', params: { name: 'env', arguments: {} } },
    events: [{ response: true, result: { content: [{ type: 'text', text: `DB_PASSWORD=${mask}${extra}` }] } }],
  });
  const report = (a: unknown, b: unknown) => driftReport([{ name: 't', records: [a] }], [{ name: 't', records: [b] }], { old: 'a', new: 'b' });
  it('benign and said; a change of the rest still shows', () => {
    const same = report(exchange('[REDACTED:aaaaaaaaaaaaaaaa]'), exchange('[REDACTED:bbbbbbbbbbbbbbbb]'));
    expect(same.entries[0]).toMatchObject({ primary: 'benign', details: { benign: ['a secret masked on both sides (the values cannot be compared)'] } });
    expect(same.summary.failing).toBe(0);
    const changed = report(exchange('[REDACTED:aaaaaaaaaaaaaaaa]'), exchange('[REDACTED:bbbbbbbbbbbbbbbb]', ' DEBUG=1'));
    expect(changed.entries[0]).toMatchObject({ primary: 'text', classes: ['text', 'benign'] });
    expect(changed.summary.failing).toBe(1);
  });
});
