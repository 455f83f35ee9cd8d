// A recording given to `tapedeck import` as a pipe (`<(gzip -dc raw.yaml.gz)`, a FIFO) was
// refused as "is not JSON import reads ... Fix the JSON text" (a user trial): its format was
// told only for a regular file. Now a pipe named for its format (cassette.yaml) is imported,
// and one that is not is read once and refused naming what it holds and --from, as stdin is.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { importCommand } from '../../src/cli/import.ts';
import { TapedeckError } from '../../src/errors.ts';
import { vcrCassette, vcrInteraction } from '../proxy/vcr-cassette.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-pipe-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ask = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
const answer = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }] });
const cassette = join(dir, 'source.yaml');
writeFileSync(cassette, vcrCassette(vcrInteraction(ask, answer)));
const opts = { force: false, har: false, skipBad: false, review: false, textconv: false };

/** A FIFO at `name` that a child process fills with the cassette (the import reads it in this process). */
function fifo(name: string): string {
  const path = join(dir, name);
  execFileSync('mkfifo', [path]);
  spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', cassette, path], { stdio: 'ignore' });
  return path;
}

describe('a recording given as a pipe', () => {
  it('imports a FIFO named for its format (cassette.yaml)', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const tape = join(dir, 'named.tape');
      expect(await importCommand(fifo('cassette.yaml'), tape, opts)).toBe(0);
      expect(existsSync(tape)).toBe(true);
      expect(String(out.mock.calls[0]?.[0])).toMatch(/1 record from a VCR\.py cassette/);
    } finally {
      out.mockRestore();
    }
  });

  it('refuses a pipe with no format in its name, naming what it holds and --from', async () => {
    const src = fifo('recording');
    const tape = join(dir, 'unnamed.tape');
    const e = await importCommand(src, tape, opts).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(TapedeckError);
    expect((e as TapedeckError).code).toBe('E_IMPORT_FORMAT');
    expect((e as TapedeckError).message).toContain(`${src} (a pipe) holds a VCR.py cassette, and a recording read from a pipe needs its format named; no tape written.`);
    expect((e as TapedeckError).hint).toContain(`tapedeck import ${src} ${tape} --from vcr`);
    expect(existsSync(tape)).toBe(false);
  });

  it('imports that pipe with --from', async () => {
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const tape = join(dir, 'from.tape');
      expect(await importCommand(fifo('recording2'), tape, { ...opts, from: 'vcr' })).toBe(0);
      expect(existsSync(tape)).toBe(true);
    } finally {
      out.mockRestore();
    }
  });
});
