// An answer echoing an uploaded `.env` file kept its `DB_PASSWORD=…` line in clear, though the
// request's copy of the line was masked (a value with no key format: only its name makes it a
// secret). The secret-named lines of an uploaded file are looked for in the answer too, masked
// with the request side's mask, so `tapedeck scan` of the tape is clean.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { echoing } from '../../src/store/echo-redact.ts';
import { redactor } from '../../src/store/redact.ts';
import { secretsInRecords } from '../../src/store/secret-scan.ts';
import { readTape } from '../../src/store/tape-file.ts';

const PW = 'PxEnvFileDbPwQ1w2e3';
const YAML_PW = 'GLz7wxuCUj6eKTSPkW8EYoxGrZrFEE';
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-echo-env-'));
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let b = '';
    for await (const c of req) b += c;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'file-1', received: b }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const form = (pw: string) => {
  const fd = new FormData();
  fd.append('purpose', 'assistants');
  fd.append('file', new Blob([`DB_HOST=db.internal\nDB_PASSWORD=${pw}\n`]), '.env');
  fd.append('config', new Blob([`server:\n  secret_token: ${YAML_PW}\n`]), 'config.yml');
  return fd;
};

describe('an answer echoing an uploaded .env file', () => {
  it('has the secret-named lines masked as the request has them; scan finds nothing; it replays', async () => {
    const tape = join(dir, 'env.tape');
    const rec = createFetch({ tape, mode: 'record' });
    expect(await (await rec(`${base}/v1/files`, { method: 'POST', body: form(PW) })).text()).toContain(PW);
    await rec.close();
    const bytes = readFileSync(tape).toString('latin1');
    expect(bytes).not.toContain(PW);
    expect(bytes).not.toContain(YAML_PW);
    expect(bytes).toContain('DB_HOST=db.internal');
    const { records } = await readTape(tape);
    expect(secretsInRecords(records.map((r, i) => ({ offset: i, value: r })))).toEqual([]);
    const play = createFetch({ tape, mode: 'replay' });
    expect((await play(`${base}/v1/files`, { method: 'POST', body: form(PW) })).headers.get('x-tapedeck-match')).toBe('exact');
    await play.close();
  });

  it('the answer\'s copy gets the request side\'s mask', () => {
    const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
    const body = new TextEncoder().encode(`--b0\r\nContent-Disposition: form-data; name="file"; filename=".env"\r\n\r\nDB_PASSWORD=${PW}\r\n--b0--\r\n`);
    const masks = echoing(r, { headers: { 'content-type': 'multipart/form-data; boundary=b0' }, url: '/v1/files', body });
    const out = new TextDecoder().decode(masks.bytes(new TextEncoder().encode(`the file said ${PW}`), 'text/plain'));
    expect(out).toBe(`the file said ${r.mask(PW)}`);
  });
});
