// A user moving from Polly.js passes its `recordingsDir` to `tapedeck import` (the directory the
// persister wrote, `<name>_<hash>/recording.har` inside), or pytest-recording's `cassettes/`.
// Import reads one recording file at a time; the error names the files found and the command
// for the first. It once said the directory "holds no *.json recordings", which reads as an
// empty recording, and `--from har` said only "import the har file itself".
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCommand } from '../../src/cli/import.ts';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';
import { httpPost, PLAIN } from './import-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-dir-'));
let upstream: Upstream;
const recordings = join(dir, 'recordings');
beforeAll(async () => {
  upstream = await startUpstream();
  // A real Polly.js recording directory, as its fs persister writes it.
  const { Polly } = await import('@pollyjs/core');
  const NodeHttpAdapter = (await import('@pollyjs/adapter-node-http')).default;
  const FSPersister = (await import('@pollyjs/persister-fs')).default;
  Polly.register(NodeHttpAdapter);
  Polly.register(FSPersister);
  const polly = new Polly('llm-app', { adapters: ['node-http'], persister: 'fs', persisterOptions: { fs: { recordingsDir: recordings } }, mode: 'record', logLevel: 'silent' });
  try {
    await httpPost(`${upstream.url}/v1/chat/completions`, PLAIN, { authorization: 'Bearer sk-polly-secret-0123456789abcdef' });
  } finally {
    await polly.stop();
  }
}, 60_000);
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const opts = { force: false, har: false, skipBad: false, review: false, textconv: false };

async function errorOf(p: Promise<unknown>): Promise<TapedeckError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TapedeckError);
  return e as TapedeckError;
}

describe("Polly.js's recordings directory given to import", () => {
  it('names the recording.har found and the command to import it; no tape written', async () => {
    const tape = join(dir, 'app.tape');
    const e = await errorOf(importCommand(recordings, tape, opts));
    expect(e.code).toBe('E_IMPORT_FORMAT');
    expect(e.message).toMatch(/is a directory of 1 recording file \(.*llm-app_\d+\/recording\.har\), and import reads one file at a time; no tape written/);
    expect(e.hint).toMatch(new RegExp(`tapedeck import .*llm-app_\\d+/recording\\.har ${tape.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    expect(existsSync(tape)).toBe(false);
  });

  it('with --from har too', async () => {
    const e = await errorOf(importRecordings(recordings, join(dir, 'app.tape'), { from: 'har' }));
    expect(e.message).toMatch(/--from har reads a file \(it holds 1 recording file \(.*recording\.har\)\)/);
    expect(e.hint).toMatch(/tapedeck import .*recording\.har/);
  });
});

describe("pytest-recording's cassettes directory", () => {
  it('lists the first three cassettes and how many more', async () => {
    const cassettes = join(dir, 'cassettes');
    for (const m of ['test_a', 'test_b']) {
      mkdirSync(join(cassettes, m), { recursive: true });
      for (const t of ['one', 'two', 'three']) writeFileSync(join(cassettes, m, `${t}.yaml`), 'interactions: []\nversion: 1\n');
    }
    const e = await errorOf(importCommand(cassettes, join(dir, 'py.tape'), opts));
    expect(e.message).toMatch(/is a directory of 6 recording files \(.*test_a\/one\.yaml, .*test_a\/three\.yaml, .*test_a\/two\.yaml, and 3 more\)/);
  });
});
