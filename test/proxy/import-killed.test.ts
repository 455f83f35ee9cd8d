// An import builds its tape in a temp file beside the target (`.<tape>.<pid>.<hex>.import.tmp`)
// and renames it into place when whole. Killed midway (SIGKILL, a crash), it leaves the existing
// tape as it was, and its temp file: the next import, prune or writer of that tape removes it
// once its process is dead, as a killed rewrite's. A live import's temp file is never touched;
// nor is one named for another host (a folder several machines share), whose pid says nothing
// here. Before, a killed import's temp file stayed for good.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, temps } from '../store/tape-temps.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { corpusHar } from './import-corpus.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-import-killed-'));
const CLI = join(import.meta.dirname, '../../dist/cli.js');
// Preloaded into a tapedeck process: it hangs once it has created its temp file.
const HANG = join(import.meta.dirname, '../store/hang-at-temp.mjs');
const BIG = join(root, 'big.har');
const SMALL = join(root, 'small.har');
let n = 0;

/** A tape with two records, as a recording run left it. */
async function existingTape(): Promise<string> {
  const dir = join(root, `d${n++}`);
  const file = join(dir, 'chat.tape');
  mkdirSync(dir);
  await createTape(file, { created: '2026-01-01T00:00:00.000Z' });
  await appendRecords(file, [{ seq: 0 }, { seq: 1 }]);
  return file;
}

/** The temp files beside a tape (a rewrite's or an import's). */


/** The size of the one temp file beside a tape, or 0 while there is none. */
function tempSize(file: string): number {
  const [name] = temps(file);
  return name === undefined ? 0 : (statSync(join(file, '..', name), { throwIfNoEntry: false })?.size ?? 0);
}

/**
 * Runs `tapedeck import <big HAR> <file> --force` and kills it with SIGKILL midway: once its
 * temp file holds the first batches of records, while it is still importing. Resolves once it
 * is dead; fails if the import ended on its own first.
 */
async function killedImport(file: string): Promise<void> {
  const p = cli(['import', BIG, file, '--force']);
  let exited = false;
  void p.done.then(() => (exited = true));
  while (tempSize(file) < 1 << 20) {
    if (exited) throw new Error(`the import ended before it was killed: ${(await p.done).out}`);
    await new Promise((r) => setTimeout(r, 2));
  }
  p.child.kill('SIGKILL');
  const end = await p.done;
  expect(end.signal, end.out).toBe('SIGKILL');
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` (npm test does it first)`);
  // ~37 MB, some 3 s of import: still importing when the test sees its first batches.
  writeFileSync(BIG, corpusHar(20_000));
  writeFileSync(SMALL, corpusHar(3));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('an import killed midway', () => {
  it('leaves the existing tape as it was; the next import removes its temp file and writes the tape', async () => {
    const file = await existingTape();
    const before = readFileSync(file);
    await killedImport(file);
    expect(temps(file)).toEqual([expect.stringMatching(/\.import\.tmp$/)]);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect((await readTape(file)).records.map((r) => r.value)).toEqual([{ seq: 0 }, { seq: 1 }]);

    const again = await cli(['import', SMALL, file, '--force']).done;
    expect(again.code, again.out).toBe(0);
    expect(temps(file)).toEqual([]);
    expect((await readTape(file)).records).toHaveLength(3);
  }, 60_000);

  it('the next prune of the tape removes it, and so does the next writer', async () => {
    const file = await existingTape();
    await killedImport(file);
    expect(temps(file)).toHaveLength(1);
    expect((await cli(['prune', file]).done).code).toBe(0);
    expect(temps(file)).toEqual([]);

    await killedImport(file);
    expect(temps(file)).toHaveLength(1);
    const w = await new TapeBackend(file).openWriter('run-2', 'record');
    try {
      expect(temps(file)).toEqual([]);
    } finally {
      await w.release();
    }
    expect((await readTape(file)).records.map((r) => r.value)).toEqual([{ seq: 0 }, { seq: 1 }]);
  }, 60_000);

  it("a live import's temp file is never removed; once its process is dead, it goes", async () => {
    const file = await existingTape();
    // An import that has made its temp file and is still at work (held there by the preload).
    const live = cli(['import', SMALL, file, '--force'], HANG);
    try {
      await live.said('TEMP');
      const [mine] = temps(file);
      expect(mine).toMatch(/\.import\.tmp$/);
      // Another import of the tape, a prune and a writer all leave it.
      const other = await cli(['import', SMALL, file, '--force']).done;
      expect(other.code, other.out).toBe(0);
      expect((await cli(['prune', file]).done).code).toBe(0);
      await (await new TapeBackend(file).openWriter('run-3', 'record')).release();
      expect(temps(file)).toEqual([mine]);
    } finally {
      live.child.kill('SIGKILL');
      await live.done;
    }
    const w = await new TapeBackend(file).openWriter('run-4', 'record');
    await w.release();
    expect(temps(file)).toEqual([]);
  }, 60_000);

  it("an import temp file named for another host, or by an older version, is never judged here", async () => {
    const file = await existingTape();
    // A process that has exited: its pid names no one on this host.
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((r) => gone.on('exit', r));
    // This host's tag is the first 8 hex digits of its name's hash: another host has another.
    const here = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
    const otherHost = `.${basename(file)}.${gone.pid}.${here === '00000000' ? '11111111' : '00000000'}c0ffee00.import.tmp`;
    const older = `.${basename(file)}.${gone.pid}.c0ffee00.import.tmp`;
    writeFileSync(join(file, '..', otherHost), 'half a tape');
    writeFileSync(join(file, '..', older), 'half a tape');
    const again = await cli(['import', SMALL, file, '--force']).done;
    expect(again.code, again.out).toBe(0);
    expect(temps(file).sort()).toEqual([otherHost, older].sort());
  }, 60_000);
});
