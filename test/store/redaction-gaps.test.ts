// Secrets a QA run of the packed tarball found on the tape in clear: the headers
// `x-functions-key` (Azure Functions) and `x-openai-key`, the query parameters `?auth=`
// (Firebase REST), `?jwt=` holding a JSON Web Token and `?session=`; and `tapedeck scan` called
// that tape clean. Here each goes through every writer that records HTTP (createFetch, the
// proxy, a HAR import) against a loopback server that also repeats them in its answer, with
// JWTs under names no rule knows (a header, a body string) besides; ReplayCache with a JWT in
// the request and the answer. No secret reaches the tape's bytes, every request replays its own
// answer (two `?session=` values stay two recordings), the data SDKs send (x-stainless-*,
// anthropic-version, an idempotency key, max_tokens, a page cursor) is stored as sent, and the
// scan reports a tape written with the secrets kept.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { isHttpRecord, type HttpRecord } from '../../src/store/records.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { scanCommand } from '../../src/store/scan-cli.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redaction-gaps-'));

/** A JWT (header, payload, signature); `n` makes each one's payload and signature its own. */
const jwt = (n: number) => `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLSR7bn0iLCJuIjo${n}fQ.Sf${n}KxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c`;

const SECRET = {
  functionsKey: 'FUNCKEYSECRET0123456789abcdef',
  openaiKey: 'OAIKEYSECRET0123456789abcdef',
  auth: 'AUTHQSECRET0123456789abcdef',
  queryJwt: jwt(1),
  session: 'SESSIONQSECRET0123456789abcdef',
  otherSession: 'SESSIONQOTHER9876543210fedcba',
  headerJwt: jwt(2),
  bodyJwt: jwt(3),
};

/** What is sent: the five QA cases, a second session, JWTs under no known name, and data that must stay. */
interface Call {
  query?: string;
  headers?: Record<string, string>;
  say?: string;
}
const CALLS: Call[] = [
  { headers: { 'x-functions-key': SECRET.functionsKey } },
  { headers: { 'x-openai-key': SECRET.openaiKey } },
  { query: `?auth=${SECRET.auth}` },
  { query: `?jwt=${SECRET.queryJwt}` },
  { query: `?session=${SECRET.session}` },
  { query: `?session=${SECRET.otherSession}` },
  { headers: { 'x-user-assertion': SECRET.headerJwt } },
  { say: `my token is ${SECRET.bodyJwt}` },
  { query: '?pageToken=Zk9PqL2mX8vR4tY7wQ1e', headers: { 'x-stainless-retry-count': '0', 'anthropic-version': '2023-06-01', 'idempotency-key': 'idem-5f2c8a9e7d3b1046' } },
];

/** Every secret and a 12-character piece from its middle (a piece on the tape is a leak too). */
function needles(): string[] {
  return Object.values(SECRET).flatMap((s) => [s, s.slice(Math.floor(s.length / 2) - 6, Math.floor(s.length / 2) + 6)]);
}

function leaks(tape: string): string[] {
  const bytes = readFileSync(tape);
  return needles().filter((n) => bytes.includes(Buffer.from(n)));
}

let server: Server;
let base = '';
let calls = 0;

beforeAll(async () => {
  // Answers with its call number and every secret it was sent (a debug echo), and a JWT in a header.
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url!, 'http://x');
      const sent = [req.headers['x-functions-key'], req.headers['x-openai-key'], req.headers['x-user-assertion'], url.searchParams.get('auth'), url.searchParams.get('jwt'), url.searchParams.get('session')].filter((x) => x != null);
      const said = (JSON.parse(Buffer.concat(chunks).toString() || '{}') as { messages?: { content: string }[] }).messages?.[0]?.content ?? '';
      const n = ++calls;
      res.writeHead(200, { 'content-type': 'application/json', 'x-echo-assertion': String(req.headers['x-user-assertion'] ?? 'none') });
      res.end(JSON.stringify({ id: `c${n}`, object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `call ${n}; you sent ${sent.join(' ')}; you said ${said}` } }], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** Sends every call through `f` to `origin`; the answers' call numbers ("call 7"), in order. */
async function sendAll(f: typeof fetch, origin: string, calls: Call[] = CALLS): Promise<string[]> {
  const out: string[] = [];
  for (const c of calls) {
    const res = await f(`${origin}/v1/chat/completions${c.query ?? ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...c.headers },
      body: JSON.stringify({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: c.say ?? 'hi' }] }),
    });
    const body = (await res.json()) as { choices?: { message: { content: string } }[] };
    out.push(/^call \d+/.exec(body.choices?.[0]?.message.content ?? '')?.[0] ?? `status ${res.status}`);
  }
  return out;
}

async function httpRecords(tape: string): Promise<HttpRecord[]> {
  return (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
}

/** The data SDKs send is stored as sent: the last call's headers, cursor and max_tokens. */
async function expectDataKept(tape: string): Promise<void> {
  const last = (await httpRecords(tape)).find((r) => r.request.url.includes('pageToken'))!;
  expect(last.request.url).toBe('/v1/chat/completions?pageToken=Zk9PqL2mX8vR4tY7wQ1e');
  expect(last.request.headers).toMatchObject({ 'x-stainless-retry-count': '0', 'anthropic-version': '2023-06-01', 'idempotency-key': 'idem-5f2c8a9e7d3b1046' });
  expect(JSON.stringify(last.request.body)).toContain('"max_tokens":100');
}

/** `tapedeck scan` run here: its exit code and what it wrote. */
async function scan(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
  try {
    return { code: await scanCommand(args), out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('secrets under the names QA found, and JWTs under any name', () => {
  it('createFetch: none reaches the tape, data stays, every call replays its own answer', async () => {
    const tape = join(dir, 'fetch.tape');
    const rec = createFetch({ tape, mode: 'record' });
    let recorded: string[];
    try {
      recorded = await sendAll(rec, base);
    } finally {
      await rec.close();
    }
    expect(new Set(recorded).size).toBe(CALLS.length);
    expect(leaks(tape)).toEqual([]);
    await expectDataKept(tape);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await sendAll(play, base)).toEqual(recorded);
      expect((await play.stats()).misses).toBe(0);
    } finally {
      await play.close();
    }
    expect(await scan(tape)).toMatchObject({ code: 0 });
  });

  it('a tape written before these names were masked (their values stored plain) still replays each request', async () => {
    const tape = join(dir, 'old-rules.tape');
    const old = CALLS.filter((c) => c.query?.startsWith('?auth=') || c.query?.startsWith('?session='));
    expect(old).toHaveLength(3);
    // Secrets kept: the URL as an older version stored it, the values plain.
    const rec = createFetch({ tape, mode: 'record', redact: { keepSecrets: true } });
    let recorded: string[];
    try {
      recorded = await sendAll(rec, base, old);
    } finally {
      await rec.close();
    }
    expect((await httpRecords(tape)).map((r) => r.request.url)).toContain(`/v1/chat/completions?session=${SECRET.session}`);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await sendAll(play, base, old)).toEqual(recorded);
      expect((await play.stats()).misses).toBe(0);
    } finally {
      await play.close();
    }
  });

  it('the proxy: none reaches the tape, data stays, every call replays its own answer', async () => {
    const tape = join(dir, 'proxy.tape');
    const proxy = await startProxy({ upstream: base, tape, mode: 'record', port: 0 });
    let recorded: string[];
    try {
      recorded = await sendAll(fetch, proxy.url);
    } finally {
      await proxy.close();
    }
    expect(new Set(recorded).size).toBe(CALLS.length);
    expect(leaks(tape)).toEqual([]);
    await expectDataKept(tape);
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      expect(await sendAll(fetch, play.url)).toEqual(recorded);
      expect(play.handler.stats().misses).toBe(0);
    } finally {
      await play.close();
    }
  });

  it('a HAR import: none reaches the tape', async () => {
    const har = join(dir, 'gaps.har');
    const entries = CALLS.map((c, i) => ({
      startedDateTime: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      time: 1,
      request: {
        method: 'POST',
        url: `https://fn.example.net/v1/chat/completions${c.query ?? ''}`,
        httpVersion: 'HTTP/1.1',
        headers: Object.entries({ 'Content-Type': 'application/json', ...c.headers }).map(([name, value]) => ({ name, value })),
        queryString: [],
        cookies: [],
        postData: { mimeType: 'application/json', text: JSON.stringify({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: c.say ?? 'hi' }] }) },
        headersSize: -1,
        bodySize: -1,
      },
      response: {
        status: 200,
        statusText: 'OK',
        httpVersion: 'HTTP/1.1',
        headers: [{ name: 'Content-Type', value: 'application/json' }],
        cookies: [],
        content: { size: -1, mimeType: 'application/json', text: JSON.stringify({ id: `c${i}`, object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `you sent ${Object.values(c.headers ?? {}).join(' ')} ${c.query ?? ''}` } }] }) },
        redirectURL: '',
        headersSize: -1,
        bodySize: -1,
      },
      cache: {},
      timings: { send: 0, wait: 1, receive: 0 },
    }));
    writeFileSync(har, JSON.stringify({ log: { version: '1.2', creator: { name: 'test', version: '1' }, entries } }));
    const tape = join(dir, 'har.tape');
    const report = await importRecordings(har, tape);
    expect(report.records).toBe(CALLS.length);
    expect(leaks(tape)).toEqual([]);
    await expectDataKept(tape);
  });

  it('ReplayCache: a JWT in the request and in the answer is masked, and the request replays', async () => {
    const tape = join(dir, 'cache.tape');
    const request = { model: 'm', messages: [{ role: 'user', content: `call the API with ${SECRET.bodyJwt}` }] };
    const rec = await ReplayCache.open(tape, { mode: 'record' });
    await rec.put(request, { text: `issued ${SECRET.headerJwt}` });
    await rec.close();
    expect(leaks(tape)).toEqual([]);
    const play = await ReplayCache.open(tape, { mode: 'replay' });
    try {
      const got = (await play.get(request)) as { text: string };
      expect(got.text).toMatch(/^issued \[REDACTED:[0-9a-f]{16}\]$/);
    } finally {
      await play.close();
    }
  });

  it('tapedeck scan reports them on a tape written with the secrets kept', async () => {
    const tape = join(dir, 'kept.tape');
    const rec = createFetch({ tape, mode: 'record', redact: { keepSecrets: true } });
    try {
      await sendAll(rec, base);
    } finally {
      await rec.close();
    }
    const r = await scan(tape);
    expect(r.code).toBe(1);
    const lines = r.out.trim().split('\n');
    const at = (path: string, kind: string) => lines.filter((l) => l.startsWith(`${tape}: record `) && l.includes(` ${path}: ${kind} `));
    expect(at('$.request.headers["x-functions-key"]', 'secret member')).toHaveLength(1);
    expect(at('$.request.headers["x-openai-key"]', 'secret member')).toHaveLength(1);
    expect(at('$.request.headers["x-user-assertion"]', 'key format')).toHaveLength(1);
    // The query's secrets: in the stored URL and in the route.
    for (const value of [SECRET.auth, SECRET.session, SECRET.otherSession]) {
      const excerpt = `"${value.slice(0, 4)}…" (${value.length} chars)`;
      expect(lines.filter((l) => l.includes(`$.request.url: secret query parameter ${excerpt}`)), value).toHaveLength(1);
      expect(lines.filter((l) => l.includes(`$.route: secret query parameter ${excerpt}`)), value).toHaveLength(1);
    }
    expect(lines.filter((l) => l.includes('$.request.url: key format "eyJh…"'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('$.request.body.messages[0].content: key format "eyJh…"'))).toHaveLength(1);
    // The answers repeated them: found there too.
    expect(lines.some((l) => l.includes('$.response.headers["x-echo-assertion"]: key format'))).toBe(true);
    // Only excerpts, never a whole value; the plain data is not reported.
    expect(r.out).not.toMatch(/SECRET0123|OTHER9876|pageToken|idem-5f2c|stainless/);
    expect(r.err).toMatch(/possible credentials in 1 tape\.\nhint: revoke any real key, then re-record the tape/);
  });
});
