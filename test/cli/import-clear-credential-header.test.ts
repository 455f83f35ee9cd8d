// `tapedeck import` of an export with a key pasted into the `authorization` header (the edit the
// scan hint suggests making in the JSON) wrote the key to the tape in clear, exit 0, without a
// word. It is masked as on record now, and the import says how many values it masked.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-cred-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tapedeck = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

describe('tapedeck import of an export holding a clear credential header', () => {
  it('masks it, warns, and writes no key to the tape', async () => {
    const tape = join(dir, 'chat.tape');
    const recs = [chatRecord(1), chatRecord(2)].map((r) => ({ ...r, request: { ...r.request, headers: { ...r.request.headers, authorization: '[REDACTED]' } } }));
    await createTape(tape, { salt: null });
    await appendRecords(tape, recs);
    const exported = tapedeck('export', tape);
    expect(exported.status).toBe(0);
    const edited = exported.stdout.replaceAll('"authorization": "[REDACTED]"', '"authorization": "Bearer sk-proj-CLEARKEYabcdefghijklmnopqrstuvwxyz0123456789"');
    expect(edited).toContain('CLEARKEY');
    const json = join(dir, 'edited.json');
    writeFileSync(json, edited);
    const out = join(dir, 'clear.tape');
    const r = tapedeck('import', json, out);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('2 credential header value(s)');
    expect(readFileSync(out).includes(Buffer.from('CLEARKEY'))).toBe(false);
    expect(tapedeck('scan', out).status).toBe(0);
  });
});
