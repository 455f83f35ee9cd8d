// Secret query parameters of relative URLs: a redirect's `Location: /done?token=…` and a JSON
// answer's `"next": "/v1/files?after=f1&access_token=…"` were stored in clear (only URLs with
// `://` were read), though `tapedeck scan` reported them and said re-recording would mask them.
// A relative URL is a whole string starting with `/` or `?` (or a `Location` value): prose is
// left alone. Masks are keyed, so two tokens stay two requests, and a request holding such a URL
// is keyed after redaction, so it replays.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-relative-urls-'));
const LOC = 'PLANTEDLOCREL17abcdefg';
const NEXT = 'PLANTEDJSONREL19abcdefg';
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/rel') {
        res.writeHead(302, { location: `/done?token=${LOC}` });
        res.end();
        return;
      }
      if (req.url === '/bare') {
        res.writeHead(302, { location: `done?state=ok&code=${LOC}` });
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ data: [], next: `/v1/files?after=f1&access_token=${NEXT}`, note: 'see /docs?page=2 for more' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('secret query parameters of relative URLs', () => {
  it('a Location header and a JSON answer holding one are recorded masked, and the request replays', async () => {
    const tape = join(dir, 'location.tape');
    const rec = createFetch({ tape, mode: 'record' });
    for (const p of ['/rel', '/bare']) await (await rec(base + p, { redirect: 'manual' })).text();
    expect(await (await rec(`${base}/json`)).text()).toContain(NEXT);
    await rec.close();
    const bytes = readFileSync(tape).toString('latin1');
    expect(bytes).not.toContain(LOC);
    expect(bytes).not.toContain(NEXT);
    expect(bytes).toContain('after=f1');
    expect(bytes).toContain('state=ok');
    expect(bytes).toContain('see /docs?page=2 for more');
    const play = createFetch({ tape, mode: 'replay' });
    const again = await play(`${base}/json`);
    expect(again.headers.get('x-tapedeck-match')).toBe('exact');
    expect(await again.json()).toMatchObject({ next: expect.stringMatching(/^\/v1\/files\?after=f1&access_token=%5BREDACTED%3A[0-9a-f]{16}%5D$/) });
    await play.close();
  });

  it('the redactor: whole relative URLs by parameter name, keyed; prose left alone; a request body holding one is redacted before it is keyed', () => {
    const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
    expect(r.value('/v1/files?after=f1&access_token=one')).toMatch(/^\/v1\/files\?after=f1&access_token=%5BREDACTED%3A[0-9a-f]{16}%5D$/);
    expect(r.value('?code=one')).not.toBe(r.value('?code=two'));
    expect(r.value('?code=one')).toBe(r.value('?code=one'));
    expect(r.value('why? token=abc is a word here')).toBe('why? token=abc is a word here');
    expect(r.value('/help me?token=abc')).toBe('/help me?token=abc');
    expect(r.headers({ location: 'done?token=abcdefgh12' }).location).toMatch(/^done\?token=%5BREDACTED/);
    expect(r.mayHaveSecrets('{"next":"/v1/files?access_token=abc"}')).toBe(true);
    expect(r.mayHaveSecrets('{"next":"/v1/files?after=f1"}')).toBe(false);
    const json = new TextEncoder().encode(JSON.stringify({ next: `/v1/files?after=f1&access_token=${NEXT}` }));
    const out = r.bytes(json, 'application/json');
    expect(new TextDecoder().decode(out)).not.toContain(NEXT);
    // What scan reports of the unmasked answer, it does not report of the masked one.
    expect(secretsInValue({ response: { body: json } }).length).toBeGreaterThan(0);
    expect(secretsInValue({ response: { body: out } })).toEqual([]);
  });
});
