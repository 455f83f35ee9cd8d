// `tapedeck rerecord` writes its answers to a draft beside the tape (<tape>.rerecorded.tape) and
// left the user there: nothing said how to look at the draft against the tape again, adopt it,
// or drop it (the folder diff and the test summary skip a draft, so until it is moved nothing
// uses it). It now ends with a hint naming the commands with this run's paths, quoted as a shell
// reads them back. The commands are run here as printed: the diff shows the re-recorded answers
// against the old ones, and the move makes the draft the tape.
// The real OpenAI and Anthropic SDKs record through createFetch; the CLI runs from dist.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDriftUpstream, type DriftUpstream } from './drift-upstream.ts';
import { recordVariant } from './record.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rerecord-adopt-'));
const base = join(dir, 'base.tape');

/** The CLI, run without blocking this process (the fake provider answers from here). */
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

/** A command the hint prints, run by a POSIX shell in the test's folder with `tapedeck` as the built CLI. */
const sh = (command: string) => execFileSync('sh', ['-c', `tapedeck() { "${process.execPath}" "${bin}" "$@"; }; ${command}`], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

let up: DriftUpstream | undefined;
beforeAll(async () => {
  expect(existsSync(bin), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
  await recordVariant(base, 'base');
}, 60_000);
afterEach(async () => {
  await up?.close();
  up = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck rerecord says how to adopt the new tape', () => {
  it('names the diff to see again, the move that adopts it and the removal that drops it, with its paths; each works as printed', async () => {
    up = await startDriftUpstream('text');
    const r = await run(['rerecord', 'base.tape', '--upstream', up.url, '--yes']);
    expect(r.status).toBe(1); // the answers changed, as diff says
    const hint = r.stderr.split('\n').find((l) => l.startsWith('hint: '));
    expect(hint).toBe(
      'hint: base.tape is unchanged; tapedeck diff base.tape base.rerecorded.tape shows the diff above again (the records carried over pair as identical). ' +
        'To keep the new answers, mv base.rerecorded.tape base.tape and commit base.tape; to drop them, rm base.rerecorded.tape.',
    );
    // The diff it names: the same 7 changed answers as the run's own report.
    expect(r.stdout).toMatch(/13 pairs \(7 text, 6 identical\), 0 added, 0 removed/);
    let again = '';
    try {
      sh('tapedeck diff base.tape base.rerecorded.tape');
    } catch (e) {
      again = String((e as { stdout?: string }).stdout); // exit 1: answers changed
    }
    expect(again).toMatch(/13 pairs \(7 text, 6 identical\), 0 added, 0 removed/);
    // The move it names makes the draft the tape.
    const draft = readFileSync(join(dir, 'base.rerecorded.tape'));
    const keep = join(dir, 'base.orig.tape');
    copyFileSync(base, keep);
    sh('mv base.rerecorded.tape base.tape');
    expect(readFileSync(base).equals(draft)).toBe(true);
    expect(existsSync(join(dir, 'base.rerecorded.tape'))).toBe(false);
    copyFileSync(keep, base);
  });

  it('quotes paths a shell would split, and the hint follows an incomplete run too', async () => {
    const sub = join(dir, 'my tapes');
    mkdirSync(sub, { recursive: true });
    copyFileSync(base, join(sub, 'chat.tape'));
    up = await startDriftUpstream('base');
    // A budget that stops it before the last calls: exit 3, the draft holds their old recordings.
    const r = await run(['rerecord', 'my tapes/chat.tape', '--upstream', up.url, '--budget', '0.000001', '--concurrency', '1', '--out', 'my tapes/new chat.tape']);
    expect(r.status).toBe(3);
    const hint = r.stderr.split('\n').find((l) => l.startsWith('hint: '));
    expect(hint).toContain("tapedeck diff 'my tapes/chat.tape' 'my tapes/new chat.tape' shows the diff above again");
    expect(hint).toContain("mv 'my tapes/new chat.tape' 'my tapes/chat.tape'");
    // Printed after the incomplete line: the last thing the run says.
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(hint);
    sh(hint!.slice(hint!.indexOf('rm ')).replace(/\.$/, ''));
    expect(existsSync(join(sub, 'new chat.tape'))).toBe(false);
    expect(existsSync(join(sub, 'chat.tape'))).toBe(true);
  });
});
