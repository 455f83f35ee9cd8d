// The official Mistral SDK sends `cookie: ""`. Recorders before this release stored it as a keyed
// mask, and `tapedeck rerecord` then held the request back as holding a secret (exit 2,
// E_RERECORD_EMPTY). An empty value is stored as it is now, and a tape made before holds the mask
// of the empty value, which rerecord knows and does not hold the request back for.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-empty-cookie-'));
let up: Upstream;
beforeAll(async () => {
  expect(existsSync(bin), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', MISTRAL_API_KEY: 'live-mistral-key', OPENAI_API_KEY: 'sk-x' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => done({ status: status ?? -1, stdout, stderr }));
  });
}

/** Records one chat call sent with `cookie: ""`, as the Mistral SDK sends it. */
async function record(tape: string): Promise<void> {
  const f = createFetch({ tape, mode: 'record', summary: false });
  try {
    const r = await f(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer live-mistral-key', cookie: '' }, body: JSON.stringify({ model: 'mistral-small-latest', messages: [{ role: 'user', content: 'rerecord me' }] }) });
    await r.text();
  } finally {
    await f.close();
  }
}

describe('an empty cookie header', () => {
  it('is stored empty, and the tape re-records', async () => {
    const tape = join(dir, 'new.tape');
    await record(tape);
    const rec = (await readTape(tape)).records[0]!.value as { request: { headers: Record<string, string> } };
    expect(rec.request.headers.cookie).toBe('');
    const r = await run(['rerecord', tape, '--yes', '--out', join(dir, 'new.rerecorded.tape')]);
    expect(r.stderr).not.toContain('keeps masked');
    expect(r.stderr).toContain('recorded 1 of 1');
  });

  it('masked by an older recorder, does not hold the request back', async () => {
    const fresh = join(dir, 'fresh.tape');
    await record(fresh);
    const { header, records } = await readTape(fresh);
    const salt = header.salt as string;
    // What the last release stored: the keyed mask of the empty value.
    const value = records[0]!.value as { request: { headers: Record<string, string> } };
    value.request.headers.cookie = redactor({ salt }).mask('');
    expect(value.request.headers.cookie).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
    const old = join(dir, 'old.tape');
    await createTape(old, { salt });
    await appendRecords(old, [value]);
    const r = await run(['rerecord', old, '--yes', '--out', join(dir, 'old.rerecorded.tape')]);
    expect(r.stderr).not.toContain('keeps masked');
    expect(r.status).not.toBe(2);
    expect(r.stderr).toContain('recorded 1 of 1');
  });
});
