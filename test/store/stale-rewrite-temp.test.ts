// A rewrite (tapedeck prune, record-mode pruning at the end of a run) killed midway leaves its
// temp file beside the tape. The next rewrite or write of that tape removes it once its writer
// is dead; a live writer's temp file is never touched.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, temps } from './tape-temps.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-stale-temp-'));
const CLI = join(import.meta.dirname, '../../dist/cli.js');
const HANG = join(import.meta.dirname, 'hang-at-temp.mjs');
let n = 0;

/** A tape with two records and a torn tail, which a prune rewrites (a sound tape it leaves alone). */
async function tornTape(): Promise<string> {
  const dir = join(root, `d${n++}`);
  const file = join(dir, 'chat.tape');
  mkdirSync(dir);
  await createTape(file, { created: '2026-01-01T00:00:00.000Z' });
  await appendRecords(file, [{ seq: 0 }, { seq: 1 }]);
  appendFileSync(file, Buffer.from([0x54, 0x44, 0x52, 0x01, 0xff, 0xff]));
  return file;
}



/** Runs `tapedeck prune <file>` and kills it with SIGKILL once its temp file exists. */
async function killedPrune(file: string): Promise<void> {
  const p = cli(['prune', file], HANG);
  await p.said('TEMP');
  p.child.kill('SIGKILL');
  await p.done;
  expect(temps(file)).toHaveLength(1);
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` (npm test does it first)`);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a rewrite killed midway', () => {
  it('the next tapedeck prune removes its temp file and rewrites the tape', async () => {
    const file = await tornTape();
    await killedPrune(file);
    const again = await cli(['prune', file]).done;
    expect(again.code).toBe(0);
    expect(temps(file)).toEqual([]);
    expect((await readTape(file)).records.map((r) => r.value)).toEqual([{ seq: 0 }, { seq: 1 }]);
  }, 30_000);

  it('the next writer of the tape removes it too', async () => {
    const file = await tornTape();
    await killedPrune(file);
    const backend = new TapeBackend(file);
    const w = await backend.openWriter('run-2', 'record');
    try {
      expect(temps(file)).toEqual([]);
    } finally {
      await w.release();
    }
  }, 30_000);

  it('a prune that finds the tape sound removes a dead writer\'s temp file all the same', async () => {
    const file = await tornTape();
    expect((await cli(['prune', file]).done).code).toBe(0);
    // A process that has exited: its pid names no one now.
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((r) => gone.on('exit', r));
    writeFileSync(join(file, '..', `.${basename(file)}.${gone.pid}.0badc0de.tmp`), 'half a tape');
    // Another file that only looks alike (an import's) is not a rewrite's and stays.
    const other = `.${basename(file)}.${gone.pid}.0badc0de.import.tmp`;
    writeFileSync(join(file, '..', other), 'x');
    expect((await cli(['prune', file]).done).code).toBe(0);
    expect(temps(file)).toEqual([other]);
  }, 30_000);

  it("a live writer's temp file is never removed", async () => {
    const file = await tornTape();
    // A temp file named for a process that is alive (a rewrite still writing it).
    const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      const name = `.${basename(file)}.${live.pid}.0badc0de.tmp`;
      writeFileSync(join(file, '..', name), 'half a tape');
      expect((await cli(['prune', file]).done).code).toBe(0);
      const backend = new TapeBackend(file);
      await (await backend.openWriter('run-3', 'record')).release();
      expect(temps(file)).toEqual([name]);
    } finally {
      live.kill('SIGKILL');
    }
  }, 30_000);
});
