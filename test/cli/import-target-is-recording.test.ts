// `tapedeck import a.yaml b.yaml` (two recordings given, thinking import takes several, or a
// glob that matched two cassettes) took the second cassette for the tape to write: E_TAPE_EXISTS
// said to add --force, and with --force the cassette was replaced by tape bytes and lost. An
// import now never writes over a recording in a format import reads, with --force or without:
// E_ARG saying the second argument is the tape to write and how to import several. A tape is
// still replaced with --force, and so are an empty file and a file that is no recording.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { importCommand } from '../../src/cli/import.ts';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { TAPE_MAGIC } from '../../src/store/tape-codec.ts';
import { vcrCassette, vcrInteraction } from '../proxy/vcr-cassette.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-target-is-recording-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CASSETTE = vcrCassette(vcrInteraction('{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}', '{"id":"c1","choices":[]}'));
const NOCK = JSON.stringify([{ scope: 'https://api.openai.com:443', method: 'GET', path: '/v1/models', status: 200, response: { data: [] }, rawHeaders: { 'content-type': 'application/json' }, reqheaders: {} }]);
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const opts = { force: true, har: false, skipBad: false, review: false, textconv: false };

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (x: unknown) => x,
  ) as Promise<TapedeckError>;

const isTape = (p: string) => TAPE_MAGIC.every((b, i) => readFileSync(p)[i] === b);

describe('an import whose tape path holds another recording', () => {
  it('`tapedeck import a.yaml b.yaml --force`: E_ARG, the second cassette left as it was, the hint says the second argument is the tape and how to import both', async () => {
    const a = file('first.yaml', CASSETTE);
    const b = file('second.yaml', CASSETTE.replace('c1', 'c2'));
    const before = sha(b);
    const e = await refusal(importCommand(a, b, opts));
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain(`${b} is no tape`);
    expect(e.message).toContain('a VCR.py cassette');
    expect(e.message).toContain('second argument is the tape to write');
    expect(e.message).toMatch(/never writes over a recording, with --force or without/);
    expect(e.hint).toContain(`tapedeck import ${a} ${join(dir, 'first.tape')}`);
    expect(e.hint).toContain(`tapedeck import ${b} ${join(dir, 'second.tape')}`);
    expect(e.hint).toMatch(/directory/);
    expect(sha(b)).toBe(before);
  });

  it('importRecordings onto a nock recording with force: E_ARG, the recording kept', async () => {
    const a = file('api.yaml', CASSETTE);
    const b = file('chat.json', NOCK);
    const before = sha(b);
    const e = await refusal(importRecordings(a, b, { force: true }));
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain(`${b} is no tape`);
    expect(sha(b)).toBe(before);
  });

  it('a tapedeck JSON export given as the input, and a HAR as the tape: E_ARG through the export path too', async () => {
    const a = file('for-export.yaml', CASSETTE);
    const tape = join(dir, 'for-export.tape');
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await importCommand(a, tape, opts)).toBe(0);
    } finally {
      out.mockRestore();
    }
    const json = file('export.json', await exportTapeJSON(tape));
    const harFile = file('session.har', JSON.stringify({ log: { version: '1.2', creator: { name: 'x', version: '1' }, entries: [] } }));
    const before = sha(harFile);
    const e = await refusal(importCommand(json, harFile, opts));
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('it holds a HAR');
    expect(sha(harFile)).toBe(before);
  });

  it('a file that is no recording (nor a tape) is replaced with --force, as before', async () => {
    const a = file('plain-src.yaml', CASSETTE);
    const target = file('scratch.tape', 'old scratch bytes');
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await importCommand(a, target, opts)).toBe(0);
    } finally {
      out.mockRestore();
    }
    expect(isTape(target)).toBe(true);
  });

  it('a tape is still replaced with --force, and an empty file is written', async () => {
    const a = file('src.yaml', CASSETTE);
    const tape = join(dir, 'out.tape');
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await importCommand(a, tape, opts)).toBe(0);
      expect(await importCommand(a, tape, opts)).toBe(0);
      expect(isTape(tape)).toBe(true);
      const empty = file('empty.tape', '');
      expect(await importCommand(a, empty, opts)).toBe(0);
      expect(isTape(empty)).toBe(true);
    } finally {
      out.mockRestore();
    }
  });
});
