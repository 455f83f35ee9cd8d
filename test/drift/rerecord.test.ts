// `tapedeck rerecord` against the drift upstream: it asks before spending, stops at the budget,
// waits out 429s as retry-after says, never records a cut stream or an error, fills redacted
// credentials from the environment, and never writes the tape it reads.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PRICES } from '../../src/drift/prices.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startDriftUpstream, type DriftUpstream } from './drift-upstream.ts';
import { CALLS, recordVariant } from './record.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rerecord-'));
const base = join(dir, 'base.tape');
const LIVE_ENV = { OPENAI_API_KEY: 'sk-live-openai-key', ANTHROPIC_API_KEY: 'sk-ant-live-key' };

/** The CLI, run without blocking this process (the fake provider answers from here). */
function run(args: string[], env: Record<string, string> = LIVE_ENV): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => done({ status: status ?? -1, stdout, stderr }));
  });
}

const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
/** A tape's record frames, each as hex: what carrying a record over byte for byte keeps. */
const frames = async (file: string) => {
  const bytes = readFileSync(file);
  return (await readTape(file)).records.map((x) => bytes.subarray(x.offset, x.offset + x.length).toString('hex'));
};
let up: DriftUpstream;
let original = '';

beforeAll(async () => {
  await recordVariant(base, 'base');
  original = sha(base);
}, 60_000);
afterEach(async () => {
  await up?.close();
  // The original is only ever read.
  expect(sha(base)).toBe(original);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Estimated cost of a call from the fake's usage (20 in, 12 out) at the default prices. */
const openaiCall = (20 * DEFAULT_PRICES['gpt-4o-mini']!.input + 12 * DEFAULT_PRICES['gpt-4o-mini']!.output) / 1e6;
const anthropicCall = (20 * DEFAULT_PRICES['claude-sonnet-4']!.input + 12 * DEFAULT_PRICES['claude-sonnet-4']!.output) / 1e6;

describe('tapedeck rerecord', () => {
  it('says how many calls and what they cost, and sends nothing without --yes or --budget', async () => {
    up = await startDriftUpstream('text');
    const r = await run(['rerecord', 'base.tape', '--upstream', up.url]);
    expect(r.status).toBe(2);
    const total = 8 * openaiCall + 4 * anthropicCall;
    expect(r.stderr).toContain(`tapedeck rerecord: ${CALLS.length} requests to ${up.url}; estimated cost $${total.toFixed(4)} from the recorded usage`);
    expect(r.stderr).toMatch(/\ntapedeck: E_CONFIRM nothing sent: [^\n]+\nhint: Add --yes to make them, or --budget 0\.01 /);
    expect(up.calls).toEqual([]);
    expect(existsSync(join(dir, 'base.rerecorded.tape'))).toBe(false);
    // Without keys in the environment, it says which masked credentials nothing fills.
    const bare = await run(['rerecord', 'base.tape', '--upstream', up.url], {});
    expect(bare.stderr).toContain('tapedeck rerecord: warning: no credential for authorization (POST /v1/chat/completions)');
    expect(r.stderr).not.toContain('warning: no credential');
  });

  it('--yes: every request again into a new tape, with the live credentials, then the diff', async () => {
    up = await startDriftUpstream('text');
    const r = await run(['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--out', 'yes.tape']);
    expect(r.stderr).toContain(`recorded ${CALLS.length} of ${CALLS.length} into yes.tape`);
    expect(r.stdout).toMatch(/13 pairs \(7 text, 6 identical\), 0 added, 0 removed/);
    expect(r.status).toBe(1);
    expect((await readTape(join(dir, 'yes.tape'))).records).toHaveLength(CALLS.length);
    // The tape holds them redacted; the live API got the keys from the environment.
    expect(up.calls.filter((c) => c.path !== '/v1/messages' && c.path !== '/v1/search').every((c) => c.headers.authorization === 'Bearer sk-live-openai-key')).toBe(true);
    // Anthropic's SDK sends its key as a bearer token too: the route decides whose key it is.
    expect(up.calls.filter((c) => c.path === '/v1/messages').map((c) => c.headers.authorization)).toEqual(['Bearer sk-ant-live-key', 'Bearer sk-ant-live-key', 'Bearer sk-ant-live-key', 'Bearer sk-ant-live-key']);
    expect(readFileSync(join(dir, 'yes.tape')).includes('sk-live-openai-key')).toBe(false);
    // Again without --force: the new tape is not replaced.
    const again = await run(['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--out', 'yes.tape']);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/^tapedeck: E_TAPE_EXISTS yes\.tape exists\.\nhint: Add --force to replace it, or give another --out\.$/m);
  });

  it('--budget: stops before the call that would pass it, and makes no call after', async () => {
    up = await startDriftUpstream('base');
    // Chat and Responses calls (8) then Anthropic ones: the budget holds the 8 and one more.
    const budget = 8 * openaiCall + anthropicCall + anthropicCall / 2;
    const r = await run(['rerecord', 'base.tape', '--upstream', up.url, '--budget', String(budget), '--concurrency', '1', '--out', 'budget.tape']);
    expect(r.status).toBe(3);
    expect(up.calls).toHaveLength(9);
    expect(r.stderr).toContain('recorded 9 of 13 into budget.tape');
    expect(r.stderr).toContain('stopped it before 4 call(s) (records #9, #10, #11, #12); their old recordings are kept.');
    expect(r.stderr).toContain('carried over 4 records unchanged, in their places (4 stopped by the budget)');
    // The calls not made keep their old recordings, byte for byte, in their places.
    const [before, after] = [await frames(base), await frames(join(dir, 'budget.tape'))];
    expect(after).toHaveLength(13);
    expect(after.slice(9)).toEqual(before.slice(9));
    expect(after.slice(0, 9).some((f, i) => f === before[i])).toBe(false);
    expect(r.stdout).toMatch(/9 pairs \(9 identical\), 0 added, 0 removed/);
  });

  it('429s are waited out (retry-after honoured) and never recorded; past the retries a call fails', async () => {
    up = await startDriftUpstream('base');
    up.throttle(1, 1);
    const t0 = Date.now();
    const r = await run(['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--concurrency', '1', '--out', 'retry.tape']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(r.status).toBe(0);
    expect(up.calls).toHaveLength(CALLS.length + 1);
    expect((await readTape(join(dir, 'retry.tape'))).records.map((x) => (x.value as { response: { status: number } }).response.status)).toEqual(CALLS.map(() => 200));
    await up.close();

    up = await startDriftUpstream('base');
    up.throttle(1000, 0);
    const fail = await run(['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--retries', '2', '--out', 'throttled.tape']);
    expect(fail.status).toBe(3);
    expect(up.calls).toHaveLength(3 * CALLS.length);
    expect(fail.stderr).toMatch(/ 13 records \(#0, #1, [^)]*\) not recorded: HTTP 429/);
    expect(fail.stderr).toContain('recorded 0 of 13');
  });

  it('a stream cut mid-answer is not recorded: its old recording is kept, and the diff compares the rest', async () => {
    up = await startDriftUpstream('base');
    up.cutNextStream();
    const r = await run(['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--concurrency', '1', '--out', 'cut.tape', '--format', 'json']);
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/record #1 not recorded: [^\n]+; its old recording is kept\.\n/);
    const rep = JSON.parse(r.stdout);
    expect(rep.summary).toMatchObject({ pairs: 12, added: 0, removed: 0 });
    expect(rep.entries.some((e: { old?: { index: number } }) => e.old?.index === 1)).toBe(false);
    const recs = (await readTape(join(dir, 'cut.tape'))).records;
    expect(recs).toHaveLength(13);
    expect(recs.every((x) => (x.value as { response: { body: Uint8Array } }).response.body.length > 0)).toBe(true);
    expect((await frames(join(dir, 'cut.tape')))[1]).toBe((await frames(base))[1]);
  });

  it('every call failing: the reason (ECONNREFUSED), the new tape holding the old recordings, and nothing compared', async () => {
    up = await startDriftUpstream('base');
    // A port that was just free: nothing listens there.
    const dead = await new Promise<number>((done) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => done(port));
      });
    });
    const r = await run(['rerecord', 'base.tape', '--upstream', `http://127.0.0.1:${dead}`, '--yes', '--out', 'down.tape', '--format', 'json']);
    expect(r.status).toBe(3);
    expect(r.stderr).toContain(`recorded 0 of ${CALLS.length} into down.tape`);
    // One line for the calls that failed alike, not one each; no ".;" where the reason ends.
    expect(r.stderr).toMatch(new RegExp(`\\ntapedeck rerecord: ${CALLS.length} records \\(#0, #1, #2, #3, #4, #5, #6, #7, #8, #9, \\.\\.\\.\\) not recorded: HTTP 502 from tapedeck, not the API: E_UPSTREAM [^\\n]*ECONNREFUSED[^\\n]*reachable from here, or send the calls to another: tapedeck rerecord --upstream URL[^\\n.]*[^.]; their old recordings are kept\\.\\n`));
    expect(r.stderr.match(/not recorded: HTTP 502/g)).toHaveLength(1);
    expect(r.stderr).toContain(`carried over ${CALLS.length} records unchanged, in their places (${CALLS.length} whose calls failed)`);
    expect(r.stderr).toContain(`incomplete: ${CALLS.length} of ${CALLS.length} call(s) not recorded (exit 3); their old recordings are kept in down.tape`);
    // Moved over the original, it loses nothing: every recording as it was.
    expect(await frames(join(dir, 'down.tape'))).toEqual(await frames(base));
    const report = JSON.parse(r.stdout) as { summary: unknown; entries: unknown[] };
    expect(report.summary).toMatchObject({ pairs: 0, added: 0, removed: 0 });
    expect(report.entries).toEqual([]);
  });

  it('--only picks requests; bad input exits 2 with the flag to fix', async () => {
    up = await startDriftUpstream('tool-calls');
    const r = await run(['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--only', '/v1/messages', '--out', 'only.tape', '--format', 'json']);
    expect(r.status).toBe(1);
    const rep = JSON.parse(r.stdout);
    expect(rep.summary).toMatchObject({ pairs: 4, added: 0, removed: 0 });
    expect(rep.summary.classes['tool-calls']).toBe(2);
    expect(up.calls.every((c) => c.path === '/v1/messages')).toBe(true);
    writeFileSync(join(dir, 'exists.tape'), '');
    for (const [args, code] of [
      [['rerecord', 'base.tape', '--upstream', 'api.openai.com', '--yes'], 'E_ARG'],
      [['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--out', 'base.tape'], 'E_ARG'],
      [['rerecord', 'base.tape', '--upstream', up.url, '--budget', 'lots'], 'E_ARG'],
      [['rerecord', 'base.tape', '--upstream', up.url, '--yes', '--only', 'no-such-thing'], 'E_RERECORD_EMPTY'],
      [['rerecord', 'missing.tape', '--upstream', up.url, '--yes'], 'E_TAPE_NOT_FOUND'],
      [['rerecord', '--upstream', up.url], 'E_USAGE'],
    ] as const) {
      const x = await run([...args]);
      expect(x.status, args.join(' ')).toBe(2);
      expect(x.stderr, args.join(' ')).toMatch(new RegExp(`(^|\\n)tapedeck: ${code} [^\\n]+\\nhint: [^\\n]+\\n$`));
    }
  });
});
