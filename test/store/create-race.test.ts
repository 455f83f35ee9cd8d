// Several processes recording into the same new tape at once: one of them makes it, the others
// find it made. None may find it half made: a file that is there but holds no header yet reads
// as an empty tape (what a crash before its header was written leaves), and its warning would
// blame a crash that never happened. Real processes, released at the same moment, many rounds.
// The tape is made whole in a temp file beside it and linked into place: a process killed there
// leaves no tape, only that temp file, which the next writer of the tape removes.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { scanTape } from '../../src/store/tape-file.ts';

const DIST = pathToFileURL(join(import.meta.dirname, '../../dist/')).href;
const WORKER = join(import.meta.dirname, 'create-race-worker.mjs');
// Preloaded into a process: it hangs once it has created its first temp file.
const HANG = join(import.meta.dirname, 'hang-at-temp.mjs');
const WORKERS = 4;
const ROUNDS = 200;

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-create-race-'));
const workers: { child: ChildProcessWithoutNullStreams; next: () => Promise<string> }[] = [];

/** A worker, and a way to wait for each line it prints. */
function start(run: string): (typeof workers)[number] {
  const child = spawn(process.execPath, [WORKER, DIST, run]);
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let buffered = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d));
  child.stdout.on('data', (d: Buffer) => {
    buffered += d;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const w = waiting.shift();
      if (w) w(line);
      else lines.push(line);
    }
  });
  const exited = new Promise<string>((resolve) => child.on('exit', (code) => resolve(`worker exited (${code}): ${err}`)));
  const next = () => (lines.length > 0 ? Promise.resolve(lines.shift()!) : Promise.race([new Promise<string>((r) => waiting.push(r)), exited]));
  return { child, next };
}

beforeAll(async () => {
  if (!existsSync(join(import.meta.dirname, '../../dist/store/collection.js'))) throw new Error('dist is missing: run `npm run build` (npm test does it first)');
  for (let i = 0; i < WORKERS; i++) workers.push(start('run-shared'));
  for (const w of workers) expect(await w.next()).toBe('ready');
}, 30_000);

afterAll(() => {
  for (const w of workers) w.child.kill();
  rmSync(dir, { recursive: true, force: true });
});

describe('a new tape opened by several processes at once', () => {
  it('is never seen half made: no warning, and a sound tape with every record', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const tape = join(dir, `same-${round}.tape`);
      // Released together: each worker is already waiting on its stdin.
      for (const w of workers) w.child.stdin.write(`${tape}\n`);
      const said = await Promise.all(workers.map((w) => w.next()));
      for (const line of said) expect(JSON.parse(line), `round ${round}: ${line}`).toEqual({ warnings: [] });
      const scan = await scanTape(tape);
      expect(scan.warnings, `round ${round}`).toEqual([]);
      expect(scan.frames, `round ${round}`).toHaveLength(WORKERS);
    }
    // Nothing left beside the tapes: no temp file, no lock, no writer registration.
    expect(readdirSync(dir).filter((f) => !/^same-\d+\.tape$/.test(f))).toEqual([]);
  }, 120_000);
});

describe('a process killed while it makes a tape', () => {
  it('leaves no tape, and its temp file goes with the next writer of the tape', async () => {
    const sub = join(dir, 'killed');
    mkdirSync(sub);
    const tape = join(sub, 'chat.tape');
    const make = `const { createTape } = await import(${JSON.stringify(`${DIST}store/tape-file.js`)}); await createTape(${JSON.stringify(tape)});`;
    const child = spawn(process.execPath, ['--import', HANG, '--input-type=module', '-e', make], { stdio: ['ignore', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => String(d).includes('TEMP') && resolve());
      child.on('exit', () => reject(new Error('exited before making its temp file')));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    // No tape yet (a reader finds none, not an empty one); the temp file of the dead process.
    const left = readdirSync(sub);
    expect(left).toHaveLength(1);
    expect(left[0]).toMatch(/^\.chat\.tape\.\d+\.[0-9a-f]{16}\.create\.tmp$/);
    const w = await new TapeBackend(tape).openWriter('run-next', 'record');
    await w.release();
    expect(readdirSync(sub)).toEqual([]);
  }, 30_000);
});
