// A tape exported as HAR and imported again replays what it replayed before: the keyed masks of
// its secrets (a form's password, a `?token=`, a JSON `client_secret`) were made under the tape's
// redaction salt, so the HAR carries that salt (`log._redactionSalt`) and the import writes the
// new tape under it, whichever way the HAR is read (chunk by chunk from a file, split from a
// pipe's bytes, or parsed whole). A HAR from elsewhere (no salt) gets a fresh one, as before.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { exportTapeHar } from '../../src/store/export-har.ts';
import { readHar } from '../../src/store/import/har.ts';
import { splitHar } from '../../src/store/import/har-split.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-har-salt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const form = (password: string) => `user=ada&password=${password}`;
const json = (secret: string) => JSON.stringify({ model: 'm', client_secret: secret });

/** Records three requests whose secrets become keyed masks; returns the tape and the answers. */
async function recordSecrets(name: string): Promise<{ tape: string; answers: string[]; origin: string }> {
  const up = await startUpstream();
  const tape = join(dir, `${name}.tape`);
  const rec = createFetch({ tape, mode: 'record' });
  const answers: string[] = [];
  try {
    answers.push(await (await rec(`${up.url}/v1/files`, { method: 'POST', body: form('hunter2') })).text());
    answers.push(await (await rec(`${up.url}/v1/models?token=tok-123456`)).text());
    answers.push(await (await rec(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: json('s3cr3t-value') })).text());
  } finally {
    await rec.close();
    await up.close();
  }
  return { tape, answers, origin: up.url };
}

/** Replays the three requests from `tape`: the answers, and whether another secret misses. */
async function replay(tape: string, origin: string): Promise<{ answers: string[]; otherMatch: string | null }> {
  const play = createFetch({ tape, mode: 'replay', summary: false });
  try {
    const answers: string[] = [];
    for (const res of [
      await play(`${origin}/v1/files`, { method: 'POST', body: form('hunter2') }),
      await play(`${origin}/v1/models?token=tok-123456`),
      await play(`${origin}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: json('s3cr3t-value') }),
    ]) {
      expect(res.headers.get('x-tapedeck-match')).toBe('exact');
      answers.push(await res.text());
    }
    const other = await play(`${origin}/v1/files`, { method: 'POST', body: form('hunter3') });
    await other.text();
    return { answers, otherMatch: other.headers.get('x-tapedeck-match') };
  } finally {
    await play.close();
  }
}

describe('HAR export and import', () => {
  it('carries the tape\'s redaction salt, so masked secrets replay after the round trip, however the HAR is read', async () => {
    const { tape, answers, origin } = await recordSecrets('round-trip');
    const salt = (await readTape(tape)).header.salt;
    expect(salt).toMatch(/^[0-9a-f]{32}$/);
    const { text } = await exportTapeHar(tape, { origin });
    expect(text).not.toMatch(/hunter2|tok-123456|s3cr3t-value/);
    expect((JSON.parse(text) as { log: { _redactionSalt?: string } }).log._redactionSalt).toBe(salt);
    const har = join(dir, 'export.har');
    writeFileSync(har, text);
    // Chunk by chunk (the file as written), and split or whole from the bytes of a file laid
    // out otherwise (one line: no chunk split; then the split or the whole parse reads it).
    const oneLine = join(dir, 'one-line.har');
    writeFileSync(oneLine, JSON.stringify(JSON.parse(text)));
    for (const [n, src] of [[1, har], [2, oneLine]] as const) {
      const out = join(dir, `imported-${n}.tape`);
      await importRecordings(src, out);
      expect((await readTape(out)).header.salt).toBe(salt);
      const got = await replay(out, origin);
      expect(got.answers).toEqual(answers);
      expect(got.otherMatch).toBe('miss');
      expect(readFileSync(out).toString('latin1')).not.toMatch(/hunter2|tok-123456|s3cr3t-value/);
    }
  });

  it('takes the salt the whole parse would take when the file names it twice, and ignores one that is no salt', async () => {
    const { tape, origin } = await recordSecrets('twice');
    const { text } = await exportTapeHar(tape, { origin });
    const doc = JSON.parse(text) as { log: Record<string, unknown> };
    const salt = doc.log._redactionSalt as string;
    // A second member after the entries: JSON.parse keeps the last, and so must the import.
    const other = 'f'.repeat(32);
    const twice = `${text.trimEnd().slice(0, -4)},\n    "_redactionSalt": "${other}"\n  }\n}\n`;
    expect((JSON.parse(twice) as { log: { _redactionSalt: string } }).log._redactionSalt).toBe(other);
    // Each reader alone: the whole parse, the split of the bytes, and the import (the chunk
    // reader first, which must doubt its split when the end names another salt).
    expect(readHar(twice, 'twice.har').salt).toBe(other);
    expect(splitHar(Buffer.from(twice))?.salt).toBe(other);
    expect(readHar(text, 'once.har').salt).toBe(salt);
    const twiceFile = join(dir, 'twice.har');
    writeFileSync(twiceFile, twice);
    await importRecordings(twiceFile, join(dir, 'twice-imported.tape'));
    expect((await readTape(join(dir, 'twice-imported.tape'))).header.salt).toBe(other);
    // Not 32 lowercase hex digits: not a salt; the tape gets a fresh one.
    const bad = join(dir, 'bad-salt.har');
    writeFileSync(bad, text.replace(salt, 'NOT-A-SALT'));
    await importRecordings(bad, join(dir, 'bad.tape'));
    const fresh = (await readTape(join(dir, 'bad.tape'))).header.salt;
    expect(fresh).toMatch(/^[0-9a-f]{32}$/);
    expect(fresh).not.toBe(salt);
  });
});
