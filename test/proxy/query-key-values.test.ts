// A secret-named query parameter is judged by its value. `?key=` is Google's API key on one host
// and a lookup key on another (`/v1/things?key=alpha-report-2026`): masked plainly whatever its
// value, two GETs differing only in it were one request, and replayed in another order each got
// the other's answer. `?access_token=` holds a Google OAuth token that expires hourly: keyed
// whatever its value, replay with a fresh token always missed. A credential-shaped value is now
// masked plainly (any credential replays) and any other keyed (two values, two requests); neither
// is stored in clear.
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { queryOnOtherRoute } from '../../src/proxy/other-route.ts';
import { redactor } from '../../src/store/redact.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-query-key-values-'));
let server: Server;
let base = '';
let calls = 0;
beforeAll(async () => {
  // Answers by the query's values, never repeating them (an answer echoing a secret is masked).
  server = createServer((req, res) => {
    calls++;
    const q = new URL(req.url!, 'http://x').searchParams;
    const id = [...q.values()].map((v) => v.length).join('-') + ':' + (q.get('key') ?? q.get('access_token') ?? '').slice(0, 4).toUpperCase().split('').reverse().join('');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const tapeText = (tape: string) => readFileSync(tape).toString('latin1');
const randomText = (alphabet: string, n: number) => [...randomBytes(n)].map((b) => alphabet[b % alphabet.length]).join('');
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

async function record(tape: string, urls: string[]): Promise<Map<string, string>> {
  const answers = new Map<string, string>();
  const rec = createFetch({ tape, mode: 'record' });
  for (const u of urls) answers.set(u, await (await rec(u)).text());
  await rec.close();
  return answers;
}

describe('a lookup value in ?key= is a request of its own', () => {
  it('two values replayed in the reverse order each get their own answer; neither is on the tape', async () => {
    const tape = join(dir, 'r8.tape');
    const urls = ['alpha-report-2026', 'beta-report-2026'].map((v) => `${base}/v1/things?key=${v}`);
    const live = await record(tape, urls);
    expect(new Set(live.values()).size).toBe(2);
    const before = calls;
    const play = createFetch({ tape, mode: 'replay' });
    try {
      for (const u of [...urls].reverse()) expect(await (await play(u)).text()).toBe(live.get(u));
    } finally {
      await play.close();
    }
    expect(calls).toBe(before);
    const text = tapeText(tape);
    expect(text).not.toContain('alpha-report');
    expect(text).not.toContain('beta-report');
    expect(text).toMatch(/key=%5BREDACTED%3A[0-9a-f]{16}%5D/);
  });

  it('added by hand (tapedeck add), as the report did: beta gets BETA, alpha gets ALPHA', async () => {
    const tape = join(dir, 'r8-added.tape');
    const url = (v: string) => `http://127.0.0.1:18080/v1/things?key=${v}-report-2026`;
    await addRecordings({ tape }, [
      { request: { method: 'GET', url: url('alpha') }, response: { body: { id: 'ALPHA' } } },
      { request: { method: 'GET', url: url('beta') }, response: { body: { id: 'BETA' } } },
    ]);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      for (const v of ['beta', 'alpha']) expect(await (await play(url(v))).json()).toEqual({ id: v.toUpperCase() });
    } finally {
      await play.close();
    }
  });
});

describe('a credential in a secret-named query parameter replays with another', () => {
  it('?access_token= with a fresh Google OAuth token', async () => {
    const tape = join(dir, 'oauth.tape');
    const token = () => `ya29.a0${randomText(B62 + '_-', 60)}`;
    const first = token();
    const live = await record(tape, [`${base}/v1/files?access_token=${first}&page=2`]);
    const before = calls;
    const play = createFetch({ tape, mode: 'replay' });
    try {
      const res = await play(`${base}/v1/files?access_token=${token()}&page=2`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe([...live.values()][0]);
    } finally {
      await play.close();
    }
    expect(calls).toBe(before);
    expect(tapeText(tape)).not.toContain(first.slice(5));
    expect(tapeText(tape)).not.toContain('ya29.');
  });

  it("Google's ?key=AIza… with another key, and with a placeholder, the docs' `replay` or none", async () => {
    const tape = join(dir, 'gemini.tape');
    const key = () => `AIza${randomText(B62 + '_-', 35)}`;
    const first = key();
    const url = (k: string) => `${base}/v1beta/models/gemini-2.5-flash:countTokens?key=${k}`;
    const live = [...(await record(tape, [url(first)])).values()][0];
    const play = createFetch({ tape, mode: 'replay' });
    try {
      for (const k of [key(), 'dummy', 'replay', '']) {
        const res = await play(url(k));
        expect(res.status, k).toBe(200);
        expect(await res.text()).toBe(live);
      }
    } finally {
      await play.close();
    }
    expect(tapeText(tape)).not.toContain(first.slice(4));
  });
});

describe('a miss between the two masks says why', () => {
  it('recorded with a key, replayed with a value not shaped like one', async () => {
    const tape = join(dir, 'shape-miss.tape');
    const url = (k: string) => `${base}/v1beta/models/gemini-2.5-flash:countTokens?key=${k}`;
    await record(tape, [url(`AIza${randomText(B62, 35)}`)]);
    const play = createFetch({ tape, mode: 'replay', onWarning: () => {} });
    try {
      const res = await play(url('test'));
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain("tapedeck miss: ?key= sent is not shaped like a key, so it is matched by its value; the recording's was a key: send a key-shaped value, dummy or none");
      // Sent as it advises, it replays.
      expect((await play(url('dummy'))).status).toBe(200);
      expect(text).not.toContain('test');
    } finally {
      await play.close();
    }
  });

  it('recorded with a lookup value, sent with a key', () => {
    const routes = new Map([['GET /v1/things?key=%5BREDACTED%3A0123456789abcdef%5D&page=1', { count: 1 }]]);
    expect(queryOnOtherRoute('GET /v1/things?key=%5BREDACTED%5D&page=1', routes)).toBe(
      "?key= sent is shaped like a key, so any key matches; the recording's was not (matched by its value): send the value it was recorded with",
    );
    // Another difference beside it: the differences are listed as before.
    expect(queryOnOtherRoute('GET /v1/things?key=%5BREDACTED%5D&page=2', routes)).toMatch(/^query differs: key=\[REDACTED\] vs key=\[REDACTED:0123456789abcdef\] in the recordings, page=2 vs page=1/);
  });
});

// Values a lookup parameter holds: words, slugs, short ids, numbers, paths, UUIDs.
const WORD = fc.stringMatching(/^[a-z]{2,9}$/);
const lookupValue = fc.oneof(
  WORD,
  fc.array(fc.oneof(WORD, fc.integer({ min: 0, max: 99999 }).map(String)), { minLength: 2, maxLength: 5 }).map((xs) => xs.join('-')),
  fc.array(WORD, { minLength: 2, maxLength: 4 }).map((xs) => xs.map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join('')),
  fc.array(WORD, { minLength: 2, maxLength: 4 }).map((xs) => `${xs.join('/')}.pdf`),
  fc.integer({ min: 0, max: 1e9 }).map(String),
  fc.uuid(),
);
// Credentials as providers issue them: Google keys, OpenAI keys, OAuth tokens, JWTs, hex and
// base62 keys (Azure OpenAI, API Management), a base64 signature (Azure SAS).
const b62 = (n: number) => fc.string({ unit: fc.constantFrom(...B62), minLength: n, maxLength: n });
const hex = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });
const credentialValue = fc.oneof(
  b62(35).map((s) => `AIza${s}`),
  b62(40).map((s) => `sk-proj-${s}`),
  b62(60).map((s) => `ya29.${s}`),
  fc.tuple(b62(20), b62(30), b62(43)).map(([h, p, s]) => `eyJ${h}.eyJ${p}.${s}`),
  hex(32),
  hex(64),
  b62(84),
  // A base64 signature with a digit: one without (about 1 in 1,500) is judged by how often its
  // letters change case, and one that rarely does is keyed, the side the rule takes for a value in
  // between (a miss that says so, never another request's answer); the property would then fail
  // a run in a few at random.
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('base64')).filter((v) => /\d/.test(v)),
);
// The names that carry a client's credential on some APIs; other secret names are always keyed.
const NAMES = ['key', 'api_key', 'apikey', 'api-key', 'sig', 'access_token', 'subscription-key', 'KEY', 'accessToken'];
const KEYED_NAMES = ['token', 'session', 'code', 'signature', 'password'];
const salt = randomBytes(16).toString('hex');
const r = redactor({ salt });
const routeOf = (name: string, v: string) => r.url(`/v1/things?${name}=${encodeURIComponent(v)}&page=1`);

describe('a lookup value that opens like a key format', () => {
  it("sk-… slugs are two requests (keyed), as any words are; a real sk- key stays the plain mask", () => {
    // The sk- format takes any 20 of [A-Za-z0-9_-] after it: a slug of words matched it, and two
    // such lookups became one request (the property below drew 'sk-aaaaaa-1000-aa-10000').
    const [q1, q2] = [routeOf('key', 'sk-sales-2026-q1-report'), routeOf('key', 'sk-sales-2026-q2-report')];
    expect(q1).toMatch(/\?key=%5BREDACTED%3A[0-9a-f]{16}%5D&page=1$/);
    expect(q1).not.toBe(q2);
    expect(routeOf('key', 'sk-aaaaaa-1000-aa-10000')).toMatch(/%5BREDACTED%3A[0-9a-f]{16}%5D/);
    // Keys as OpenAI, Anthropic and OpenRouter issue them: the one plain mask.
    for (const k of ['sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c', 'sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa', `sk-or-v1-${'0123456789abcdef'.repeat(4)}`]) {
      expect(routeOf('key', k)).toBe('/v1/things?key=%5BREDACTED%5D&page=1');
    }
  });
});

describe('property: what a secret-named query parameter is masked as', () => {
  it('two different lookup values are two routes, neither in clear', () => {
    fc.assert(
      fc.property(fc.constantFrom(...NAMES), lookupValue, lookupValue, (name, a, b) => {
        fc.pre(a !== b);
        const ra = routeOf(name, a);
        const rb = routeOf(name, b);
        expect(ra).not.toBe(rb);
        // Redacted again (a stored record read back), a route is what it was.
        expect(r.url(ra)).toBe(ra);
        // In place of the value, its keyed mask: nothing of it in clear.
        expect(ra).toMatch(new RegExp(`^/v1/things\\?${name}=%5BREDACTED%3A[0-9a-f]{16}%5D&page=1$`));
      }),
      { numRuns: 2000 },
    );
  });

  it('every credential-shaped value is the one plain mask: any credential replays the recording', () => {
    fc.assert(
      fc.property(fc.constantFrom(...NAMES), credentialValue, (name, v) => {
        expect(routeOf(name, v)).toBe(`/v1/things?${name}=%5BREDACTED%5D&page=1`);
        expect(r.url(routeOf(name, v))).toBe(routeOf(name, v));
      }),
      { numRuns: 2000 },
    );
  });

  it('under any other secret name, a credential-shaped value is keyed too: two values, two routes', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KEYED_NAMES), credentialValue, credentialValue, (name, a, b) => {
        fc.pre(a !== b);
        expect(routeOf(name, a)).toMatch(/=%5BREDACTED%3A[0-9a-f]{16}%5D&page=1$/);
        expect(routeOf(name, a)).not.toBe(routeOf(name, b));
        expect(r.url(routeOf(name, a))).toBe(routeOf(name, a));
      }),
      { numRuns: 500 },
    );
  });

  it('recorded, no credential-shaped value is anywhere in the tape bytes', async () => {
    const values = fc.sample(fc.tuple(fc.constantFrom(...NAMES, ...KEYED_NAMES), credentialValue), 30);
    const tape = join(dir, 'many.tape');
    await record(
      tape,
      values.map(([name, v], i) => `${base}/v1/n${i}?${name}=${encodeURIComponent(v)}`),
    );
    const text = tapeText(tape);
    for (const [, v] of values) {
      expect(text).not.toContain(v.slice(0, 24));
      expect(text).not.toContain(encodeURIComponent(v).slice(0, 24));
    }
  });
});
