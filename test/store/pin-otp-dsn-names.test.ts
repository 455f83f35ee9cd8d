// A card PIN, a one-time password and a DSN (a Sentry DSN holds its project's key; a database
// DSN its password) under their own names (`pin`, `otp`, `otp_code`, `sentry_dsn`, a `DSN`
// header or query parameter) were stored in clear: no secret name ended in those words. They
// are masked now by the name's words, as the other name rules judge a name (the last word, and
// `otp code`, `pin code`), so ordinary names that merely hold the letters (`spin`, `pinned`,
// `option`, `hotpot`, `dsn_count`) keep their values. Judged here through every place a name
// is read (JSON members, form fields, headers, query parameters, JSON text in a string) and
// through a createFetch recording against a loopback server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { secretByLastWord } from '../../src/store/secret-words.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });

const SECRET_NAMES = ['pin', 'PIN', 'otp', 'OTP', 'otp_code', 'otpCode', 'totp', 'pin_code', 'card_pin', 'userPIN', 'dsn', 'DSN', 'sentry_dsn', 'SENTRY_DSN', 'sentryDsn', 'database-dsn', 'mfa_code'];
const PLAIN_NAMES = ['spin', 'pinned', 'is_pinned', 'pin_count', 'option', 'options', 'hotpot', 'dsn_count', 'code', 'country_code', 'status_code', 'topping', 'opinion', 'adsnet', 'dsname', 'otpx', 'snapshot', 'top_p'];

describe('pin, otp and dsn names', () => {
  it('a JSON member so named is masked; one that merely holds the letters is kept', () => {
    for (const name of SECRET_NAMES) {
      const v = { [name]: '482913', other: 1 };
      expect(r.isSecretField(name), name).toBe(true);
      expect(r.value(v)[name], name).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
      // The cheap test a body passes before it is parsed and judged: it must see the name.
      expect(r.mayHaveSecrets(JSON.stringify(v)), name).toBe(true);
    }
    for (const name of PLAIN_NAMES) {
      expect(r.isSecretField(name), name).toBe(false);
      expect(r.value({ [name]: '482913' })).toEqual({ [name]: '482913' });
    }
    // Two PINs stay two keys.
    expect(r.value({ pin: '1234' }).pin).not.toBe(r.value({ pin: '4321' }).pin);
  });

  it('a header or query parameter so named is masked', () => {
    for (const name of ['DSN', 'x-sentry-dsn', 'X-OTP', 'x-otp-code', 'pin']) {
      expect(r.isSecretHeader(name), name).toBe(true);
      expect(secretByLastWord(name), name).toBe(true);
      expect(r.headers({ [name]: 'https://e3b0c44298fc1c14@o1.ingest.sentry.io/42' })[name]).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
    }
    for (const name of ['x-spin', 'x-pinned', 'options', 'x-dsn-count']) {
      expect(r.isSecretHeader(name), name).toBe(false);
      expect(secretByLastWord(name), name).toBe(false);
    }
    const u = r.url('/v1/verify?otp=482913&dsn=postgres%3A%2F%2Fdb&pinned=1&option=a');
    expect(u).not.toContain('482913');
    expect(u).not.toContain('postgres');
    expect(u).toContain('&pinned=1&option=a');
  });

  it('in JSON text inside a string', () => {
    const said = r.text('the config is {"sentry_dsn": "https://e3b0c44298fc1c14@o1.ingest.sentry.io/42", "spin": "fast"}');
    expect(said).not.toContain('e3b0c44298fc1c14');
    expect(said).toContain('"spin": "fast"');
    expect(r.value({ content: 'tool said {"otp":"482913"}' }).content).not.toContain('482913');
  });

  describe('createFetch', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-pin-otp-dsn-'));
    let server: Server;
    let base = '';
    let calls = 0;
    beforeAll(async () => {
      // Answers each call with its number.
      server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ ok: true, call: ++calls }));
        });
      });
      await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((res) => server.close(res));
      rmSync(dir, { recursive: true, force: true });
    });

    const SECRETS = { pin: '729301', otp: '558812', dsn: 'https://a1b2c3d4e5f60718@o77.ingest.sentry.io/9', otp2: '660044' };
    const send = async (f: typeof fetch): Promise<number[]> => {
      const out: number[] = [];
      const go = async (path: string, init: RequestInit) => out.push(((await (await f(`${base}${path}`, init)).json()) as { call: number }).call);
      await go('/v1/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'u1', otp_code: SECRETS.otp, spin: 'fast', pinned: true, option: 'x' }) });
      await go('/v1/verify', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user: 'u1', otp_code: SECRETS.otp2, spin: 'fast', pinned: true, option: 'x' }) });
      await go('/v1/card', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `card=4111&pin=${SECRETS.pin}&hotpot=yes` });
      await go(`/v1/report?dsn=${encodeURIComponent(SECRETS.dsn)}&dsn_count=2`, { method: 'GET', headers: { DSN: SECRETS.dsn } });
      return out;
    };

    it('none reaches the tape, the other names stay, two OTPs stay two recordings', async () => {
      const tape = join(dir, 'names.tape');
      const rec = createFetch({ tape, mode: 'record' });
      let recorded: number[];
      try {
        recorded = await send(rec);
      } finally {
        await rec.close();
      }
      const bytes = readFileSync(tape).toString('latin1');
      for (const s of [SECRETS.pin, SECRETS.otp, SECRETS.otp2, 'a1b2c3d4e5f60718', encodeURIComponent(SECRETS.dsn)]) expect(bytes).not.toContain(s);
      const records = (await readTape(tape)).records.map((x) => x.value).filter(isHttpRecord);
      const verify = records.filter((x) => x.request.url === '/v1/verify').map((x) => x.request.body as Record<string, unknown>);
      expect(verify).toHaveLength(2);
      for (const b of verify) expect(b).toMatchObject({ user: 'u1', spin: 'fast', pinned: true, option: 'x', otp_code: expect.stringMatching(/^\[REDACTED:[0-9a-f]{16}\]$/) });
      expect(verify[0]!.otp_code).not.toBe(verify[1]!.otp_code);
      expect(String(records.find((x) => x.request.url === '/v1/card')!.request.body)).toMatch(/^card=4111&pin=%5BREDACTED%3A[0-9a-f]{16}%5D&hotpot=yes$/);
      const report = records.find((x) => x.request.url.startsWith('/v1/report'))!.request;
      expect(report.url).toMatch(/^\/v1\/report\?dsn=%5BREDACTED%3A[0-9a-f]{16}%5D&dsn_count=2$/);
      expect(String(report.headers.dsn ?? report.headers.DSN)).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
      const play = createFetch({ tape, mode: 'replay' });
      try {
        expect(await send(play)).toEqual(recorded);
        expect((await play.stats()).misses).toBe(0);
      } finally {
        await play.close();
      }
    });
  });
});
