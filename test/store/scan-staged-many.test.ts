// `tapedeck scan --staged` (the pre-commit hook) read each staged tape with its own git process,
// which made a commit of a thousand tapes take half a minute; it reads them all with one
// `git cat-file --batch`. What it scans must stay the staged content of every staged tape (not
// the working tree's), named from the top of the work tree, whatever folder it runs in.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-scan-staged-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = 'sk-proj-Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9Pz0X';

const record = (content: string) => ({
  v: 1,
  kind: 'http',
  match: 'llm',
  route: 'POST /v1/chat/completions',
  key: '0'.repeat(64),
  trace: '1'.repeat(64),
  request: { method: 'POST', url: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: { model: 'gpt-4o', messages: [{ role: 'user', content }] } },
  response: { status: 200, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode('{"choices":[]}') },
  recordedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 1,
});

describe('scan --staged over many tapes', () => {
  it('scans the staged content of every staged tape, from any folder of the work tree', async () => {
    const repo = join(dir, 'repo');
    const tapes = join(repo, 'test/__tapes__');
    mkdirSync(join(tapes, 'a b'), { recursive: true });
    execFileSync('git', ['init', '-q', repo]);
    const names = Array.from({ length: 12 }, (_, i) => `test/__tapes__/${i % 2 ? 'a b/' : ''}t${i}.tape`);
    for (const [i, n] of names.entries()) {
      await createTape(join(repo, n));
      // Tapes 3 and 7 hold a key as staged; tape 5's key is only in the working tree.
      await appendRecords(join(repo, n), [record(i === 3 || i === 7 ? `my key is ${KEY}` : 'hi')]);
    }
    execFileSync('git', ['add', '--', ...names], { cwd: repo });
    await appendRecords(join(repo, names[5]!), [record(`my key is ${KEY}`)]);
    const r = spawnSync(process.execPath, [CLI, 'scan', '--staged'], { cwd: tapes, encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(1);
    const flagged = [...new Set(r.stdout.trim().split('\n').map((l) => l.split(': record ')[0]))];
    expect(flagged).toEqual([names[3], names[7]]);
    // Staged clean: the same tapes pass, counted by their staged records.
    execFileSync('git', ['rm', '-q', '-f', '--cached', '--', names[3]!, names[7]!, names[5]!], { cwd: repo });
    const ok = spawnSync(process.execPath, [CLI, 'scan', '--staged'], { cwd: repo, encoding: 'utf8' });
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toBe('No credentials found in 9 tapes (9 records).\n');
  });
});
