// tapedeck scan of a tape it cannot read as one (a newer tapedeck's format, a damaged header)
// searches its bytes for credentials. A record's origin with a port, `http://127.0.0.1:8091`,
// is followed in msgpack by the `trace` member's name and the length byte of its 64-character
// value, which is `@`: read as text, `http://127.0.0.1:8091¥traceÙ@d6e4…` is a URL with the
// password `8091¥traceÙ`, and the scan reported a credential (exit 1; the pre-commit hook then
// refused the commit and said to revoke a key). A secret is one piece of text: a match that
// runs across a msgpack length byte, no character of any text, is not one.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { secretsInBytes } from '../../src/store/secret-scan.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { crc32 } from '../../src/store/tape-codec.ts';
import { VERSION as TAPEDECK_VERSION } from '../../src/version.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-scan-url-port-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A msgpack string as its bytes (fixstr up to 31 bytes, else str8). */
const str = (s: string) => Buffer.concat([s.length < 32 ? Buffer.from([0xa0 | s.length]) : Buffer.from([0xd9, s.length]), Buffer.from(s, 'latin1')]);

describe('secretsInBytes', () => {
  it('finds no URL password across a msgpack member boundary', () => {
    const bytes = Buffer.concat([str('origin'), str('http://127.0.0.1:8091'), str('trace'), str('d6e4222b6e3a9ab517'.padEnd(64, '0'))]);
    expect(secretsInBytes(bytes)).toEqual([]);
  });

  it('still finds a URL password and a key inside one string', () => {
    const password = 'Db777fMoaSjuBkwK7ZZm';
    const key = 'sk-proj-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP';
    const bytes = Buffer.concat([str('origin'), str('http://127.0.0.1:8091'), str('url'), str(`postgres://app:${password}@pg/prod`), str('key'), str(key)]);
    expect(secretsInBytes(bytes).map((f) => f.excerpt)).toEqual([`"${password.slice(0, 4)}…" (${password.length} chars)`, `"${key.slice(0, 4)}…" (${key.length} chars)`]);
  });
});

describe('tapedeck scan of a tape in a newer format', () => {
  it('reports no credential for a tape recorded against a host with a port', async () => {
    const tape = join(dir, 'local.tape');
    const upstream = (async () => new Response(JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {}, summary: false });
    await (await f('http://127.0.0.1:8091/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) })).text();
    await f.close();
    // Format version 2 from tapedeck 9.0.0, as a newer tapedeck writes it: read as bytes only.
    const bytes = readFileSync(tape);
    bytes.writeUInt16BE(2, 8);
    const meta = bytes.subarray(18, 18 + bytes.readUInt32BE(10));
    const v = meta.indexOf(Buffer.from(TAPEDECK_VERSION));
    expect(v).toBeGreaterThan(0);
    meta.write('9'.padEnd(TAPEDECK_VERSION.length, '.0').slice(0, TAPEDECK_VERSION.length), v, 'latin1');
    bytes.writeUInt32BE(crc32(meta) >>> 0, 14);
    writeFileSync(tape, bytes);
    const r = spawnSync(process.execPath, [bin, 'scan', 'local.tape'], { cwd: dir, encoding: 'utf8' });
    expect(r.stdout).toContain('unreadable as a tape, searched for key formats only: E_TAPE_VERSION');
    expect(r.stdout).not.toContain('key format "');
    expect(r.stderr).not.toContain('possible credential');
  });
});
