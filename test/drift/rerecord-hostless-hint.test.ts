// tapedeck rerecord of a tape whose recordings name no host (recorded before records kept their
// host): the command it prints to run instead. It was a fixed example, "tapedeck rerecord
// tapes/chat.tape --upstream https://api.openai.com --budget 0.50", whatever the tape: copied,
// it re-recorded another file, and for an Anthropic tape it sent the requests (and, with
// --upstream named, ANTHROPIC_API_KEY) to api.openai.com. It now names the user's tape and flags
// and the host of the API the recordings are of. The CLI runs from dist: build first.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiHostOf, hostlessCommand } from '../../src/drift/hostless-hint.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rerecord-hostless-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A recording that names no host, as a tape written before hosts were stored holds it. */
const hostless = (i: number, path: string, body: Record<string, unknown>) => ({
  v: 1,
  kind: 'http',
  match: 'llm',
  route: `POST ${path}`,
  key: String(i).padStart(64, '0'),
  request: { method: 'POST', url: path, headers: { 'content-type': 'application/json', 'x-api-key': '[REDACTED]' }, body },
  response: { status: 200, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{"ok":true}') },
  recordedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 1,
});
const claude = (i: number) => hostless(i, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: `q${i}` }] });
const gpt = (i: number) => hostless(i, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `q${i}` }] });

const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '', NO_COLOR: '1', ANTHROPIC_API_KEY: 'sk-ant-api03-test', OPENAI_API_KEY: '' } });

describe('the command rerecord prints for recordings that name no host', () => {
  it('names the tape given, its flags, and the host of the recordings\u2019 API', async () => {
    const tape = join(dir, 'claude v1.tape');
    await createTape(tape);
    await appendRecords(tape, [claude(1), claude(2)]);
    const r = cli('rerecord', 'claude v1.tape', '--yes', '--out', 'claude.new.tape');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('rerecord needs --upstream: the recordings name no host');
    const hint = r.stderr.split('\nhint: ')[1]!.trim();
    expect(hint).toBe(`tapedeck rerecord 'claude v1.tape' --upstream ${apiHostOf('POST /v1/messages')} --yes --out claude.new.tape`);
    expect(hint).not.toContain('api.openai.com');
  });

  it('keeps --budget and --only as given', async () => {
    const tape = join(dir, 'mixed.tape');
    await createTape(tape);
    await appendRecords(tape, [claude(1), gpt(2)]);
    const r = cli('rerecord', 'mixed.tape', '--only', 'claude', '--budget', '2');
    expect(r.status).toBe(2);
    expect(r.stderr.split('\nhint: ')[1]!.trim()).toBe('tapedeck rerecord mixed.tape --only claude --upstream https://api.anthropic.com --budget 2');
  });

  it('of several APIs, or an API of no one host, asks for the base URL instead of naming a wrong one', () => {
    expect(hostlessCommand('t.tape', ['POST /v1/messages', 'POST /v1/chat/completions'], '--upstream', {})).toBe('tapedeck rerecord t.tape --upstream <base URL of the API they were recorded from> --budget 0.50 (they are of 2 APIs, https://api.anthropic.com, https://api.openai.com: one at a time, with --only and its path)');
    expect(hostlessCommand('t.tape', ['POST /openai/deployments/d/chat/completions?api-version=1'], '--hostless-upstream', { budget: '1' })).toBe('tapedeck rerecord t.tape --hostless-upstream <base URL of the API they were recorded from> --budget 1');
    expect(apiHostOf('POST /v1beta/models/gemini-2.0-flash:generateContent')).toBe('https://generativelanguage.googleapis.com');
    expect(apiHostOf('POST /v1/responses')).toBe('https://api.openai.com');
  });
});
