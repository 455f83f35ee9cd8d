// The request's own secrets looked for in its answer (src/store/echo-redact.ts): which values
// count, the forms they take in an answer, and that an answer holding none of them stays the
// same bytes. The oracle for "masked" is the request side: the value's mask is the one the
// redactor gives the value itself.
import { describe, expect, it } from 'vitest';
import { echoing } from '../../src/store/echo-redact.ts';
import { redactor } from '../../src/store/redact.ts';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const SALT = '00112233445566778899aabbccddeeff';
const r = redactor({ salt: SALT });
const utf8 = new TextEncoder();
const text = new TextDecoder();
const none = new Uint8Array();

/** The answer bytes as the recording would store them, read back as text. */
function stored(masks: ReturnType<typeof echoing>, answer: string, type = 'text/plain'): string {
  return text.decode(masks.bytes(utf8.encode(answer), type));
}

describe('echoing', () => {
  it('masks a secret query value, a JSON member and a form field where the answer repeats them, with the request side\'s mask', () => {
    const masks = echoing(r, { headers: { 'content-type': 'application/json' }, url: '/v1/x?token=Tq8Wn3Ks9Lp2&page=2', body: utf8.encode('{"auth":{"client_secret":"cS7Hd2Fg5Jk1"},"q":"hello"}') });
    expect(stored(masks, 'got Tq8Wn3Ks9Lp2 and cS7Hd2Fg5Jk1 for hello')).toBe(`got ${r.mask('Tq8Wn3Ks9Lp2')} and ${r.mask('cS7Hd2Fg5Jk1')} for hello`);
    const form = echoing(r, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, url: '/token', body: utf8.encode('grant_type=client_credentials&client_secret=fS4Jm8Qx1Zr6') });
    expect(stored(form, 'bad secret fS4Jm8Qx1Zr6')).toBe(`bad secret ${r.mask('fS4Jm8Qx1Zr6')}`);
    // A form sent as text/plain (a string body to fetch) is read as a form all the same.
    const plain = echoing(r, { headers: { 'content-type': 'text/plain;charset=UTF-8' }, url: '/token', body: utf8.encode('client_secret=pT6Hy2Wq9Ld3&grant_type=client_credentials') });
    expect(stored(plain, 'bad secret pT6Hy2Wq9Ld3')).toBe(`bad secret ${r.mask('pT6Hy2Wq9Ld3')}`);
  });

  it('masks a secret member of JSON text inside a request string where an answer echoing the whole body repeats it, one escape deeper', () => {
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'config: {"password": "NESTEDpw9xyz"}' }, ['list', '{"api_key":"ARRAYkey7Qw2"}']] });
    // The request side masks it where it stands (the oracle for the mask).
    const sent = JSON.stringify(r.value(JSON.parse(body)));
    expect(sent).not.toContain('NESTEDpw9xyz');
    expect(sent).toContain(r.mask('NESTEDpw9xyz'));
    const masks = echoing(r, { headers: { 'content-type': 'application/json' }, url: '/v1/x', body: utf8.encode(body) });
    const answer = JSON.stringify({ echo: body });
    const out = stored(masks, answer, 'application/json');
    expect(out).not.toContain('NESTEDpw9xyz');
    expect(out).not.toContain('ARRAYkey7Qw2');
    expect(JSON.parse(out).echo).toBe(body.replace('NESTEDpw9xyz', r.mask('NESTEDpw9xyz')).replace('ARRAYkey7Qw2', r.mask('ARRAYkey7Qw2')));
  });

  it('masks a provider credential as [REDACTED], as the token after its scheme too', () => {
    const masks = echoing(r, { headers: { authorization: 'Bearer gw5Kq8Zt3Lm9Pw2R', 'x-goog-api-key': 'Gk2Lm8Nq4Rs6Tu0V' }, url: '/v1/x?key=Qz1Xw2Ce3Vr4Bt5Y', body: none });
    expect(stored(masks, 'h: Bearer gw5Kq8Zt3Lm9Pw2R; t: gw5Kq8Zt3Lm9Pw2R; g: Gk2Lm8Nq4Rs6Tu0V; q: Qz1Xw2Ce3Vr4Bt5Y')).toBe('h: Bearer [REDACTED]; t: [REDACTED]; g: [REDACTED]; q: [REDACTED]');
  });

  it('finds a value escaped in a JSON string, escaped in a URL, and as UTF-8 bytes beyond ASCII', () => {
    const quoted = 'pa"ss\\w0rd-Xy9';
    const masks = echoing(r, { headers: { 'content-type': 'application/json' }, url: '/v1/x', body: utf8.encode(JSON.stringify({ password: quoted })) });
    const answer = JSON.stringify({ echo: quoted, n: 1 });
    expect(JSON.parse(stored(masks, answer, 'application/json'))).toEqual({ echo: r.mask(quoted), n: 1 });
    const spaced = 'my pass w0rd+/=';
    const url = echoing(r, { headers: {}, url: `/v1/x?password=${encodeURIComponent(spaced)}`, body: none });
    // The mask the request's URL stores for it (of the value as sent): the answer's copy gets the same.
    const urlMask = decodeURIComponent(/password=([^&]+)/.exec(r.url(`/v1/x?password=${encodeURIComponent(spaced)}`))![1]!);
    expect(urlMask).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
    expect(stored(url, `see https://x.test/cb?p=${encodeURIComponent(spaced)} now`)).toBe(`see https://x.test/cb?p=${urlMask} now`);
    expect(stored(url, `you sent "${spaced}"`)).toBe(`you sent "${urlMask}"`);
    const wide = 'contraseña-Ñu9Ωz';
    const utf = echoing(r, { headers: { 'content-type': 'application/json' }, url: '/v1/x', body: utf8.encode(JSON.stringify({ password: wide })) });
    expect(stored(utf, `echo «${wide}»`)).toBe(`echo «${r.mask(wide)}»`);
  });

  it('leaves short values, values without a letter and plain words of a header alone; an answer without any keeps its bytes', () => {
    const masks = echoing(r, { headers: { 'content-type': 'application/json', cookie: 'theme=darkmode; sid=Sd9Fg3Hj7Kl1' }, url: '/v1/x?token=abc12&pin=12345678', body: utf8.encode('{"password":"hunter2"}') });
    expect(stored(masks, 'abc12 hunter2 12345678 darkmode {"n":12345678}')).toBe('abc12 hunter2 12345678 darkmode {"n":12345678}');
    // The cookie's value holds a letter and a digit: masked alone too.
    expect(stored(masks, 'sid was Sd9Fg3Hj7Kl1')).toBe(`sid was ${r.mask('Sd9Fg3Hj7Kl1')}`);
    const body = utf8.encode('{"answer":"nothing of the request"}');
    expect(masks.bytes(body, 'application/json')).toBe(body);
  });

  it('SigV4: the signature is masked where an answer repeats it; the scheme\'s name and the date stay', () => {
    const sig = 'a3f1c9e07b2d4f6a8c0e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f30';
    const masks = echoing(r, {
      headers: { authorization: `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=${sig}`, 'x-amz-date': '20260101T000000Z' },
      url: '/model/x/converse',
      body: none,
    });
    const answer = `{"message":"The request signature we calculated does not match. String to sign: AWS4-HMAC-SHA256 20260101T000000Z; yours: ${sig}"}`;
    expect(stored(masks, answer, 'application/json')).toBe(answer.replace(sig, '[REDACTED]'));
  });

  it('changes nothing with keepSecrets, and is the redactor itself when the request carried no secret', () => {
    const keep = redactor({ keepSecrets: true });
    expect(echoing(keep, { headers: { authorization: 'Bearer gw5Kq8Zt3Lm9Pw2R' }, url: '/', body: none })).toBe(keep);
    expect(echoing(r, { headers: { accept: 'application/json' }, url: '/v1/x?page=2', body: utf8.encode('{"q":"hello"}') })).toBe(r);
  });

  it('reads each request\'s headers: a frozen map judged once is not taken for another, nor a map changed since', () => {
    // An importer's entries share one frozen header map while their headers repeat: its values
    // are judged once; a second frozen map, or an unfrozen one changed in place, is read again.
    const a = Object.freeze({ 'x-session-token': 'gwAAAA1111bbbb' });
    const b = Object.freeze({ 'x-session-token': 'gwBBBB2222cccc' });
    for (const h of [a, a, b, a]) {
      const masks = echoing(r, { headers: h, url: '/', body: none });
      const other = h === a ? 'gwBBBB2222cccc' : 'gwAAAA1111bbbb';
      expect(stored(masks, `${h['x-session-token']} and ${other}`)).toBe(`${r.mask(h['x-session-token'])} and ${other}`);
    }
    const mutable: Record<string, string> = { 'x-session-token': 'gwCCCC3333dddd' };
    expect(stored(echoing(r, { headers: mutable, url: '/', body: none }), 'gwCCCC3333dddd')).toBe(r.mask('gwCCCC3333dddd'));
    mutable['x-session-token'] = 'gwDDDD4444eeee';
    expect(stored(echoing(r, { headers: mutable, url: '/', body: none }), 'gwCCCC3333dddd gwDDDD4444eeee')).toBe(`gwCCCC3333dddd ${r.mask('gwDDDD4444eeee')}`);
    // Another redactor (another salt) gets its own masks for the same map.
    const r2 = redactor({ salt: 'ffeeddccbbaa99887766554433221100' });
    expect(stored(echoing(r2, { headers: a, url: '/', body: none }), 'gwAAAA1111bbbb')).toBe(r2.mask('gwAAAA1111bbbb'));
    // The body as sent is not searched when the caller knows it holds nothing to mask.
    const json = { headers: { 'content-type': 'application/json' }, url: '/', body: utf8.encode('{"client_secret":"cS9Hd2Fg5Jk1"}') };
    expect(stored(echoing(r, json), 'cS9Hd2Fg5Jk1')).toBe(r.mask('cS9Hd2Fg5Jk1'));
    expect(stored(echoing(r, json, true), 'cS9Hd2Fg5Jk1')).toBe('cS9Hd2Fg5Jk1');
  });

  it('masks values in response headers, and in a JSON value\'s strings only', () => {
    const masks = echoing(r, { headers: { 'x-api-key': 'live3f9a8b7c6d5e' }, url: '/', body: none });
    expect(masks.headers({ 'x-echo': 'key live3f9a8b7c6d5e', 'x-n': ['live3f9a8b7c6d5e', 'b'] })).toEqual({ 'x-echo': 'key [REDACTED]', 'x-n': ['[REDACTED]', 'b'] });
    expect(masks.value({ a: ['live3f9a8b7c6d5e'], live3f9a8b7c6d5e: 1, deep: { t: 'x live3f9a8b7c6d5e y' } })).toEqual({ a: ['[REDACTED]'], live3f9a8b7c6d5e: 1, deep: { t: 'x [REDACTED] y' } });
  });
});

describe('ReplayCache.put', () => {
  it("masks the request's own secrets where the answer repeats them, in the value and in the raw bytes, and the call replays", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-echo-cache-'));
    try {
      const tape = join(dir, 'cache.tape');
      const secret = 'gwSecret9Kq2Lm7Pz4';
      const request = { model: 'gpt-4o-mini', client_secret: secret, messages: [{ role: 'user', content: 'repeat the secret' }] };
      const value = { choices: [{ message: { role: 'assistant', content: `your secret is ${secret}` } }] };
      const rec = await ReplayCache.open(tape, { mode: 'record' });
      await rec.put(request, value, { raw: { body: JSON.stringify(value), contentType: 'application/json' } });
      await rec.close();
      const bytes = readFileSync(tape).toString('latin1');
      expect(bytes).not.toContain(secret);
      const play = await ReplayCache.open(tape, { mode: 'replay' });
      try {
        const got = (await play.getRecord(request))!;
        const said = (got.value as typeof value).choices[0]!.message.content;
        // The mask the request's own copy has, so a reviewer pairs them.
        const stored = (got.request as { client_secret: string }).client_secret;
        expect(stored).toMatch(/^\[REDACTED(:[0-9a-f]{16})?\]$/);
        expect(said).toBe(`your secret is ${stored}`);
        expect(Buffer.from(got.raw!.body).toString()).toContain(stored);
      } finally {
        await play.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
