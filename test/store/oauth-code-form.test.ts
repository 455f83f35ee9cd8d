// An OAuth token request (RFC 6749 4.1.3, a form: `grant_type=authorization_code&code=…&
// redirect_uri=…&code_verifier=…`) was stored with its authorization code and PKCE verifier in
// clear: `code` is no secret member name (a chat body's `code` is what the user wrote), and
// `code_verifier` was none at all. A form that asks for the authorization-code grant has its
// `code` masked now, and `code_verifier` is a secret name everywhere; a `code` field of any other
// form, or a JSON body's `code` member, is kept. The authorization redirect's `?code=` (the
// callback URL the browser is sent to) is masked as a secret query parameter. Recorded through
// createFetch against a loopback token endpoint: two codes stay two recordings that each replay,
// and `tapedeck scan` reports a tape written with the code kept.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { normalizeBody } from '../../src/store/http-body.ts';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { readTape } from '../../src/store/tape-file.ts';

const CODE_A = 'SplxlOBeZQQYbYS6WxSbIA';
const CODE_B = 'Qm9uam91ckxlTW9uZGUyMDI2';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const form = (code: string) => `grant_type=authorization_code&code=${code}&redirect_uri=https%3A%2F%2Fclient.example.com%2Fcb&client_id=s6BhdRkqt3&code_verifier=${VERIFIER}`;

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const stored = (body: string, headers: Record<string, string> = FORM) => String(normalizeBody(headers, Buffer.from(body), r).stored);

describe('an OAuth authorization code', () => {
  it('in a token request form: code and code_verifier masked, keyed; the rest kept', () => {
    const a = stored(form(CODE_A));
    expect(a).not.toContain(CODE_A);
    expect(a).not.toContain(VERIFIER);
    expect(a).toMatch(/^grant_type=authorization_code&code=%5BREDACTED%3A[0-9a-f]{16}%5D&redirect_uri=https%3A%2F%2Fclient\.example\.com%2Fcb&client_id=s6BhdRkqt3&code_verifier=%5BREDACTED%3A[0-9a-f]{16}%5D$/);
    // Two codes stay two keys.
    expect(stored(form(CODE_B))).not.toBe(a);
    // Idempotent: a stored form redacted again is unchanged.
    expect(stored(a)).toBe(a);
    // A form without its content type (nock keeps none) is read as a form too.
    expect(stored(form(CODE_A), {})).not.toContain(CODE_A);
    // The grant named anywhere in the form.
    expect(stored(`code=${CODE_A}&grant_type=authorization_code`)).not.toContain(CODE_A);
  });

  it('a code field of another form, and a code member of JSON, is kept', () => {
    for (const body of [`lang=python&code=print%28%22hi%22%29`, `grant_type=client_credentials&code=ABCDEF123456`, `grant_type=authorization_codes&code=ABCDEF123456`]) expect(stored(body)).toBe(body);
    const chat = { model: 'gpt-4o', code: 'def main(): pass', messages: [{ role: 'user', content: 'review this' }] };
    expect(r.value(chat)).toEqual(chat);
  });

  it('in the authorization redirect\'s query: masked', () => {
    const u = r.url(`/cb?code=${CODE_A}&state=xyz`);
    expect(u).not.toContain(CODE_A);
    expect(u).toContain('&state=xyz');
  });

  it('scan reports it in a stored form', () => {
    expect(secretsInValue({ request: { body: form(CODE_A) } }).map((f) => f.path)).toEqual(expect.arrayContaining(['$.request.body field "code"', '$.request.body field "code_verifier"']));
    expect(secretsInValue({ request: { body: stored(form(CODE_A)) } })).toEqual([]);
    expect(secretsInValue({ request: { body: 'lang=python&code=ZXhhbXBsZWNvZGUxMjM0NTY3' } })).toEqual([]);
  });

  describe('createFetch against a token endpoint', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-oauth-code-'));
    let server: Server;
    let base = '';
    beforeAll(async () => {
      // Exchanges a code for a token named after it (an authorization server's answer, RFC 6749 5.1).
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const code = new URLSearchParams(Buffer.concat(chunks).toString()).get('code') ?? '';
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          res.end(JSON.stringify({ token_type: 'Bearer', expires_in: 3600, scope: `read for ${code.length}-${code.slice(0, 2) === CODE_A.slice(0, 2) ? 'a' : 'b'}` }));
        });
      });
      await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((res) => server.close(res));
      rmSync(dir, { recursive: true, force: true });
    });

    const exchange = async (f: typeof fetch): Promise<string[]> => {
      const out: string[] = [];
      for (const code of [CODE_A, CODE_B]) out.push(((await (await f(`${base}/oauth/token`, { method: 'POST', headers: FORM, body: form(code) })).json()) as { scope: string }).scope);
      return out;
    };

    it('no code reaches the tape, each replays its own answer, scan finds a kept one', async () => {
      const tape = join(dir, 'token.tape');
      const rec = createFetch({ tape, mode: 'record' });
      let recorded: string[];
      try {
        recorded = await exchange(rec);
      } finally {
        await rec.close();
      }
      expect(recorded).toEqual(['read for 22-a', 'read for 24-b']);
      const bytes = readFileSync(tape).toString('latin1');
      for (const s of [CODE_A, CODE_B, VERIFIER]) expect(bytes).not.toContain(s);
      expect(bytes).toContain('grant_type=authorization_code');
      const play = createFetch({ tape, mode: 'replay' });
      try {
        expect(await exchange(play)).toEqual(recorded);
        expect((await play.stats()).misses).toBe(0);
      } finally {
        await play.close();
      }

      const kept = join(dir, 'kept.tape');
      const k = createFetch({ tape: kept, mode: 'record', redact: { keepSecrets: true } });
      try {
        await exchange(k);
      } finally {
        await k.close();
      }
      const found = (await readTape(kept)).records.flatMap((x) => secretsInValue(x.value));
      expect(found.some((f) => f.path.endsWith('field "code"'))).toBe(true);
    });
  });
});
