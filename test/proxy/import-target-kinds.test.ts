// What an import may write over. `tapedeck import same.yaml same.yaml --force` replaced the
// cassette with tape bytes, and `--force` onto a device node or a named pipe put a regular file
// where the node was (as root, `import x.har /dev/null --force` would break /dev/null). Both
// are now E_ARG before anything is written, from the API and the command line; a symbolic link
// to a tape is still written through (the link stays a link).
// The CLI runs from dist: build first (flock /tmp/build.lock npm run build).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { linkSync, lstatSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { vcrCassette, vcrInteraction } from './vcr-cassette.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-target-kinds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

const CASSETTE = vcrCassette(vcrInteraction('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}', '{"id":"c1","choices":[]}'));
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** A cassette at `name` in the test directory. */
function cassette(name: string): string {
  const file = join(dir, name);
  writeFileSync(file, CASSETTE);
  return file;
}

/** What a call that refuses rejects with. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (x: unknown) => x,
  ) as Promise<TapedeckError>;

describe('an import whose tape is its own source', () => {
  it('`tapedeck import same.yaml same.yaml --force` is E_ARG (exit 2) and the cassette is left as it was', () => {
    const src = cassette('same.yaml');
    const before = sha(src);
    const r = cli('import', 'same.yaml', 'same.yaml', '--force');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('E_ARG same.yaml is both the recording to import and the tape to write: the tape would replace the recording it is made from; no tape written.');
    expect(r.stderr).toContain('tapedeck import same.yaml same.tape');
    expect(sha(src)).toBe(before);
    // It still imports elsewhere.
    expect(cli('import', 'same.yaml', 'same.tape').status).toBe(0);
  });

  it('a symbolic link or a hard link to the source as the tape is the same file: refused from the API too, with or without force', async () => {
    const src = cassette('linked.yaml');
    const before = sha(src);
    symlinkSync(src, join(dir, 'linked-sym.tape'));
    linkSync(src, join(dir, 'linked-hard.tape'));
    for (const out of [src, join(dir, 'linked-sym.tape'), join(dir, 'linked-hard.tape')]) {
      for (const force of [true, false]) {
        const e = await refusal(importRecordings(src, out, { force }));
        expect(e).toBeInstanceOf(TapedeckError);
        expect(e).toMatchObject({ code: 'E_ARG', details: { file: out, source: src } });
      }
    }
    expect(sha(src)).toBe(before);
    expect(lstatSync(join(dir, 'linked-sym.tape')).isSymbolicLink()).toBe(true);
  });

  it('a tapedeck JSON export imported over itself is refused the same way', () => {
    const src = join(dir, 'export.json');
    writeFileSync(src, '{"header":{"created":"2026-01-01T00:00:00.000Z","formatVersion":1,"tapedeckVersion":"0.1.0"},"records":[]}\n');
    const before = sha(src);
    const r = cli('import', 'export.json', 'export.json', '--force');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('E_ARG export.json is both the recording to import and the tape to write');
    expect(sha(src)).toBe(before);
  });
});

describe('an import onto a path that is not a regular file', () => {
  it('a named pipe is E_ARG naming it, with --force too, and stays a pipe', async () => {
    const src = cassette('pipe.yaml');
    const fifo = join(dir, 'pipe.tape');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const e = await refusal(importRecordings(src, fifo, { force: true }));
    expect(e).toMatchObject({ code: 'E_ARG', details: { file: fifo } });
    expect(e.message).toContain(`${fifo} is a named pipe (FIFO), not a tape file`);
    expect(statSync(fifo).isFIFO()).toBe(true);
    const r = cli('import', 'pipe.yaml', 'pipe.tape', '--force');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('E_ARG pipe.tape is a named pipe (FIFO), not a tape file');
    expect(statSync(fifo).isFIFO()).toBe(true);
  });

  // mknod needs root: a private copy of /dev/null (character device 1,3).
  it.runIf(process.getuid?.() === 0)('a device node (a copy of /dev/null) is E_ARG with --force and stays a device', () => {
    cassette('dev.yaml');
    const node = join(dir, 'mynull');
    expect(spawnSync('mknod', ['-m', '666', node, 'c', '1', '3']).status).toBe(0);
    const r = cli('import', 'dev.yaml', 'mynull', '--force');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('E_ARG mynull is a character device, not a tape file');
    expect(statSync(node).isCharacterDevice()).toBe(true);
    // And a tapedeck JSON export onto it, which another importer writes.
    writeFileSync(join(dir, 'dev.json'), '{"header":{"created":"2026-01-01T00:00:00.000Z","formatVersion":1,"tapedeckVersion":"0.1.0"},"records":[]}\n');
    expect(cli('import', 'dev.json', 'mynull', '--force').stderr).toContain('E_ARG mynull is a character device');
    expect(statSync(node).isCharacterDevice()).toBe(true);
  });

  it('a symbolic link to a tape is written through with --force, as before: the link stays a link', async () => {
    const src = cassette('through.yaml');
    const real = join(dir, 'real.tape');
    await importRecordings(src, real);
    const link = join(dir, 'through.tape');
    symlinkSync(real, link);
    const report = await importRecordings(src, link, { force: true });
    expect(report.records).toBe(1);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect((await readTape(real)).records).toHaveLength(1);
  });
});
