// An answer echoing a secret field of its multipart request (a files endpoint that returns the
// body it got, with `api_key` beside the upload) was stored in clear: the request side masked the
// part, but only JSON members and form fields were looked for in the answer. A secret-named
// part's content is looked for too, masked with the request side's mask.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { echoing } from '../../src/store/echo-redact.ts';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const SECRET = 'PLANTEDMPECHO20abcdef';
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-echo-mp-'));
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

const form = (secret: string) => {
  const fd = new FormData();
  fd.append('purpose', 'assistants');
  fd.append('api_key', secret);
  fd.append('file', new Blob(['hello']), 'a.txt');
  return fd;
};

describe('an answer echoing a secret multipart field', () => {
  it('is stored with the field masked, and the request replays', async () => {
    const tape = join(dir, 'mp.tape');
    const rec = createFetch({ tape, mode: 'record' });
    expect(await (await rec(`${base}/v1/files`, { method: 'POST', body: form(SECRET) })).text()).toContain(SECRET);
    await rec.close();
    expect(readFileSync(tape).toString('latin1')).not.toContain(SECRET);
    const play = createFetch({ tape, mode: 'replay' });
    const again = await play(`${base}/v1/files`, { method: 'POST', body: form(SECRET) });
    expect(again.headers.get('x-tapedeck-match')).toBe('exact');
    await play.close();
  });

  it('uses the request side\'s mask; other parts are not looked for', () => {
    const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
    const body = new TextEncoder().encode(`--b0\r\nContent-Disposition: form-data; name="api_key"\r\n\r\n${SECRET}\r\n--b0\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants-long\r\n--b0--\r\n`);
    const masks = echoing(r, { headers: { 'content-type': 'multipart/form-data; boundary=b0' }, url: '/v1/files', body });
    const out = new TextDecoder().decode(masks.bytes(new TextEncoder().encode(`got ${SECRET} for assistants-long`), 'text/plain'));
    expect(out).toBe(`got ${r.mask(SECRET)} for assistants-long`);
  });

  it('tapedeck scan reports such an echo recorded unmasked (and not the masked one)', () => {
    const echoed = (v: string) => ({ response: { body: { id: 'file-1', received: `--b0\r\nContent-Disposition: form-data; name="api_key"\r\n\r\n${v}\r\n--b0\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nassistants\r\n--b0--\r\n` } } });
    expect(secretsInValue(echoed(SECRET)).map((f) => f.kind)).toEqual(['secret member']);
    expect(secretsInValue(echoed(redactor({ salt: '00112233445566778899aabbccddeeff' }).mask(SECRET)))).toEqual([]);
  });
});
