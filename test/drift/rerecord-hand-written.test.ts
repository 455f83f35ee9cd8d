// `tapedeck rerecord` sent hand-written recordings (`tapedeck add`: a 429, a cut stream, an
// error the API gives only now and then) to the live API like any other, and filed the answer in
// their place: a written 429 came back a 200, and moving the new tape over the old one, as the
// run advises, lost the test's rate-limit fixture. A record run never replaces a hand-written
// recording (docs/modes.md, rule 3); rerecord now keeps them too, carried over byte for byte and
// said so. The real OpenAI and Anthropic SDKs record the tape; the CLI runs from dist.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startDriftUpstream, type DriftUpstream } from './drift-upstream.ts';
import { CALLS, recordVariant } from './record.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rerecord-hand-'));
const base = join(dir, 'base.tape');

function run(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: 'sk-live-openai-key', ANTHROPIC_API_KEY: 'sk-ant-live-key' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => done({ status: status ?? -1, stdout, stderr }));
  });
}

/** Each record's frame, as hex. */
const frames = async (file: string) => {
  const bytes = readFileSync(file);
  return (await readTape(file)).records.map((x) => bytes.subarray(x.offset, x.offset + x.length).toString('hex'));
};

let up: DriftUpstream | undefined;
let first: HttpRecord;
beforeAll(async () => {
  expect(existsSync(bin), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
  await recordVariant(base, 'base');
  first = (await readTape(base)).records[0]!.value as HttpRecord;
  // The test's rate-limit fixture: the first call's request answered 429, written by hand.
  writeFileSync(
    join(dir, 'limited.json'),
    JSON.stringify({
      request: { url: `${first.origin}${first.request.url}`, body: first.request.body },
      response: { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } } },
    }),
  );
  const add = await run(['add', 'base.tape', 'limited.json']);
  expect(add.status, add.stderr).toBe(0);
}, 60_000);
afterEach(async () => {
  await up?.close();
  up = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck rerecord and hand-written recordings', () => {
  it('does not send them: each is carried over byte for byte, and the run says so', async () => {
    up = await startDriftUpstream('base');
    const before = await frames(base);
    expect(before).toHaveLength(CALLS.length + 1);
    const r = await run(['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--out', 'new.tape']);
    expect(r.stderr).toContain(`tapedeck rerecord: 1 hand-written recording (tapedeck add) not sent, kept as it is: the API cannot be asked for a written answer (a 429, a cut stream) again, and its answer would take its place: #${CALLS.length} POST /v1/chat/completions.`);
    expect(up.calls).toHaveLength(CALLS.length);
    expect(r.stderr).toContain(`recorded ${CALLS.length} of ${CALLS.length} into new.tape`);
    expect(r.stderr).toContain('carried over 1 record unchanged, in its place (1 hand-written recording)');
    const after = await frames(join(dir, 'new.tape'));
    expect(after).toHaveLength(CALLS.length + 1);
    expect(after.at(-1)).toBe(before.at(-1));
    expect(((await readTape(join(dir, 'new.tape'))).records.at(-1)!.value as HttpRecord).response.status).toBe(429);
    expect(r.stdout).not.toMatch(/status\s+429 -> 200/);
  });

  it('picked alone (--only its words), nothing is sent: E_RERECORD_EMPTY, exit 2', async () => {
    up = await startDriftUpstream('base');
    const only = JSON.stringify((first.request.body as { messages: { content: string }[] }).messages[0]!.content).slice(1, 20);
    const r = await run(['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--only', only, '--out', 'only.tape']);
    // The recording it was written beside is picked too: sent, while the written 429 is kept.
    expect(up.calls.length).toBeLessThanOrEqual(1);
    expect(r.stderr).toContain('1 hand-written recording (tapedeck add) not sent');
    const lone = join(dir, 'lone.tape');
    writeFileSync(join(dir, 'lone.json'), readFileSync(join(dir, 'limited.json')));
    expect((await run(['add', 'lone.tape', 'lone.json'])).status).toBe(0);
    const e = await run(['rerecord', 'lone.tape', '--upstream', up.url, '--yes']);
    expect(e.status).toBe(2);
    expect(e.stderr).toMatch(/tapedeck: E_RERECORD_EMPTY nothing sent: every request picked in lone\.tape is a hand-written recording \(1\), which rerecord keeps as it is\.\nhint: /);
    expect(existsSync(lone)).toBe(true);
  });
});
