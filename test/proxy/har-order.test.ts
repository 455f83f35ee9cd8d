// A tape exported as HAR and imported again keeps each recording's place among its request's
// recordings (`repeat`) and the run and test that made it, in the entry's `_tapedeck` member.
// Without them the import numbered what the HAR held: a damaged tape's export leaves the damaged
// recording out, so the one after it took its turn and a call got another call's answer.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { exportTapeHar } from '../../src/store/export-har.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { scanTape } from '../../src/store/tape-file.ts';
import { TapedeckError } from '../../src/errors.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-har-order-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'same question' }] });
const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body };

/** Flips a byte inside the k-th record of a tape (its checksum then fails: the record is lost). */
function damage(tape: string, offset: number): void {
  const bytes = readFileSync(tape);
  bytes[offset + 30] = bytes[offset + 30]! ^ 0x5a;
  writeFileSync(tape, bytes);
}

describe('HAR export and import: the order of a request\'s recordings', () => {
  it('a damaged tape\'s HAR, imported: the damaged recording\'s call gets E_TAPE_DAMAGED, not the next one\'s answer', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'damaged.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    const live: string[] = [];
    try {
      for (let i = 0; i < 3; i++) live.push(await (await rec(`${up.url}/v1/chat/completions`, post)).text());
    } finally {
      await rec.close();
      await up.close();
    }
    expect(new Set(live).size).toBe(3);
    damage(tape, (await scanTape(tape)).frames[0]!.offset);
    const har = await exportTapeHar(tape, { origin: up.url });
    expect(har.warnings.length).toBe(1);
    expect(har.entries).toBe(2);
    const file = join(dir, 'damaged.har');
    writeFileSync(file, har.text);
    const out = join(dir, 'imported.tape');
    await importRecordings(file, out);
    const play = createFetch({ tape: out, mode: 'replay', summary: false, onWarning: () => {} });
    const got: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const res = await play(`${up.url}/v1/chat/completions`, post);
        const text = await res.text();
        if (res.status === 200) got.push(text);
        else {
          const err = JSON.parse(text) as { error: { code: string; message: string; tapedeck: { hint: string } } };
          got.push(err.error.code);
          // The imported tape has no damage of its own: the message says where the recording went.
          expect(err.error.message).toMatch(/Recording 1 of POST \/v1\/chat\/completions .* is missing/);
          expect(err.error.message).toMatch(/lost before this tape was written/);
          expect(err.error.tapedeck.hint).toMatch(/record/i);
          expect(err.error.tapedeck.hint).not.toMatch(/lists the damage/);
        }
      }
    } finally {
      await play.close();
    }
    expect(got).toEqual(['E_TAPE_DAMAGED', live[1], live[2]]);
  });

  it('a healthy tape shared by two tests: the round trip keeps every record as it was (repeat, run, test)', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'shared.tape');
    try {
      for (const test of ['suite > a', 'suite > b']) {
        const rec = createFetch({ tape, mode: 'record', test, run: `run-${test.slice(-1)}`, summary: false });
        try {
          for (let i = 0; i < 2; i++) await (await rec(`${up.url}/v1/chat/completions`, post)).text();
        } finally {
          await rec.close();
        }
      }
    } finally {
      await up.close();
    }
    const har = await exportTapeHar(tape, { origin: up.url });
    const entries = (JSON.parse(har.text) as { log: { entries: { _tapedeck?: unknown }[] } }).log.entries;
    expect(entries.map((e) => e._tapedeck)).toEqual([
      { repeat: 0, run: 'run-a', test: 'suite > a' },
      { repeat: 1, run: 'run-a', test: 'suite > a' },
      { repeat: 0, run: 'run-b', test: 'suite > b' },
      { repeat: 1, run: 'run-b', test: 'suite > b' },
    ]);
    const file = join(dir, 'shared.har');
    writeFileSync(file, har.text);
    const out = join(dir, 'shared-imported.tape');
    await importRecordings(file, out);
    const records = (t: string) => exportTapeJSON(t).then((j) => (JSON.parse(j) as { records: unknown[] }).records);
    expect(await records(out)).toEqual(await records(tape));
  });

  it('a `_tapedeck` member that is not what the export writes is refused with its place', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'one.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    try {
      await (await rec(`${up.url}/v1/chat/completions`, post)).text();
    } finally {
      await rec.close();
      await up.close();
    }
    const har = JSON.parse((await exportTapeHar(tape, { origin: up.url })).text) as { log: { entries: Record<string, unknown>[] } };
    for (const bad of [{ repeat: -1 }, { repeat: 1.5 }, { repeat: 0, run: 7 }, { repeat: 0, test: null }, 'x']) {
      har.log.entries[0]!._tapedeck = bad;
      const file = join(dir, 'bad.har');
      writeFileSync(file, JSON.stringify(har));
      const err = await importRecordings(file, join(dir, 'bad.tape')).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_IMPORT_ENTRY');
      expect((err as TapedeckError).message).toMatch(/_tapedeck/);
    }
  });
});
