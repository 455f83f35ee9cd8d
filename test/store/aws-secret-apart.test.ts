// An AWS access key id and its secret access key a user pasted apart (two messages of one chat
// request, two members of one body, two fields of a form, two parts of an upload) were stored with
// the id masked and the secret as typed: redaction reads one string at a time, and no one string
// held the pair. So was a secret written with JSON's `\/` for its slashes (PHP's json_encode), or
// percent-encoded in a URL (`%2F`), whose run of characters no longer read as 40. Both are masked
// now, keyed as the id is (two secrets stay two requests), in requests, answers and streams, and
// `tapedeck scan` reports them in tapes recorded before.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';
import { echoing } from '../../src/store/echo-redact.ts';
import { normalizeBody } from '../../src/store/http-body.ts';
import { redactAnswerBody } from '../../src/store/stream-redact.ts';
import { scanCommand } from '../../src/store/scan-cli.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { awsKeys } from './aws-keys.ts';

const SALT = '0123456789abcdef0123456789abcdef';
const r = redactor({ salt: SALT });
const { pick, newSecret, newId } = awsKeys(5021, { slash: true });

const ID = newId();
const SECRET = newSecret();
const OTHER = newSecret();
const enc = new TextEncoder();
const dec = new TextDecoder();

/** What must not be on disk of a secret: any 12 of its characters in a row. */
const holdsPart = (text: string, secret: string): boolean => {
  for (let i = 0; i + 12 <= secret.length; i += 4) if (text.includes(secret.slice(i, i + 12))) return true;
  return false;
};

const chat = (...contents: string[]) => ({ model: 'gpt-4o', messages: contents.map((content) => ({ role: 'user', content })) });

describe('an AWS secret in another string than its id', () => {
  it('is masked in a request, keyed, in two messages or two members', () => {
    for (const body of [
      chat(`my access key id is ${ID}`, `and the secret is ${SECRET}`),
      chat(`id ${ID}`, SECRET),
      { model: 'gpt-4o', input: { a: ID, b: SECRET } },
      { model: 'gpt-4o', input: { b: SECRET, note: 'the id after it', a: ID } },
    ]) {
      const out = JSON.stringify(r.value(body));
      expect(out).not.toContain(ID);
      expect(holdsPart(out, SECRET), out).toBe(false);
      // Where the secret stood, its own keyed mask, as in one string.
      expect(out).toContain(r.mask(SECRET));
      // The oracle: the body with each value replaced by its keyed mask.
      expect(out).toBe(JSON.stringify(body).split(ID).join(r.mask(ID)).split(SECRET).join(r.mask(SECRET)));
    }
  });

  it('keeps two requests that differ only in the secret two', () => {
    const a = JSON.stringify(r.value(chat(`id ${ID}`, `secret ${SECRET}`)));
    const b = JSON.stringify(r.value(chat(`id ${ID}`, `secret ${OTHER}`)));
    expect(a).not.toBe(b);
    // And the same request twice one.
    expect(JSON.stringify(r.value(chat(`id ${ID}`, `secret ${SECRET}`)))).toBe(a);
  });

  it('leaves a run alone that no id stands near, or that is no secret', () => {
    const far = chat(`id ${ID}`, `${'lorem ipsum dolor sit amet '.repeat(8)}${SECRET}`);
    expect(JSON.stringify(r.value(far))).toContain(SECRET);
    const sha = pick('0123456789abcdef', 40);
    expect(JSON.stringify(r.value(chat(`id ${ID}`, sha)))).toContain(sha);
    const none = chat('no id here', SECRET);
    expect(r.value(none)).toBe(none);
  });

  it('is masked in a JSON answer where the secret member is masked by name too', () => {
    // A secret-named member sends the answer through the parse, one string at a time.
    const answer = JSON.stringify({ password: 'hunter2hunter2', user: { id: ID }, note: SECRET });
    const out = dec.decode(r.bytes(enc.encode(answer), 'application/json'));
    expect(out).not.toContain(ID);
    expect(holdsPart(out, SECRET), out).toBe(false);
  });

  it('is masked in an answer that repeats it alone, as the request masked it', () => {
    const req = { headers: { 'content-type': 'application/json' }, url: '/v1/chat/completions', body: enc.encode(JSON.stringify(chat(`id ${ID}`, `secret ${SECRET}`))) };
    const masks = echoing(r, req);
    expect(masks.text(`The secret ${SECRET} looks fine.`)).toBe(`The secret ${r.mask(SECRET)} looks fine.`);
    // Written by a server that escapes its slashes.
    expect(masks.text(`{"said":"${SECRET.replace(/\//g, '\\/')}"}`)).toBe(`{"said":"${r.mask(SECRET)}"}`);
  });

  it('is flagged by scan in a record written before, at the string that holds it', () => {
    const rec = { v: 1, kind: 'http', request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: chat(`id ${ID}`, `secret ${SECRET}`) } };
    const found = secretsInValue(rec);
    expect(found.map((f) => f.excerpt).sort()).toEqual([`"${ID.slice(0, 4)}…" (20 chars)`, `"${SECRET.slice(0, 4)}…" (40 chars)`].sort());
    expect(found.find((f) => f.excerpt.endsWith('(40 chars)'))!.path).toBe('$.request.body.messages[1].content');
    // In an answer's JSON bytes too.
    const answer = { v: 1, kind: 'http', request: { method: 'GET', url: '/', headers: {} }, response: { status: 200, headers: { 'content-type': 'application/json' }, body: enc.encode(JSON.stringify({ a: ID, b: SECRET })) } };
    expect(secretsInValue(answer).some((f) => f.excerpt === `"${SECRET.slice(0, 4)}…" (40 chars)`)).toBe(true);
  });
});

describe('an AWS secret written with escaped slashes', () => {
  const escaped = SECRET.replace(/\//g, '\\/');

  it('is masked in a raw JSON answer, keyed as the secret itself', () => {
    for (const raw of [`{"text":"id ${ID} secret ${escaped}"}`, `{"a":"${ID}","b":"${escaped}"}`, `{"text":"creds:\\n${ID}\\n${escaped}\\n"}`]) {
      const out = dec.decode(r.bytes(enc.encode(raw), 'application/json'));
      expect(out, raw).not.toContain(ID);
      expect(holdsPart(out.replace(/\\\//g, '/'), SECRET), out).toBe(false);
      expect(out).toContain(r.mask(SECRET));
    }
  });

  it('is masked in a streamed answer, in one event and across events', () => {
    // Each event as a server that escapes its slashes writes it.
    const events = [`id ${ID} secret ${SECRET}`, `id ${ID}`, ` secret ${SECRET.slice(0, 9)}`, `${SECRET.slice(9)} ok`].map((t) => JSON.stringify({ delta: t }).replace(/\//g, '\\/'));
    const sse = events.map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n';
    const out = dec.decode(redactAnswerBody(enc.encode(sse), 'text/event-stream', r).body);
    const plain = out.replace(/\\\//g, '/');
    for (let i = 0; i + 8 <= SECRET.length; i++) expect(plain, out).not.toContain(SECRET.slice(i, i + 8));
  });

  it('is masked percent-encoded in a URL', () => {
    // Under names that are no secret's: the pair is what makes the value one.
    const url = `/v1/lookup?id=${ID}&v=${encodeURIComponent(SECRET)}`;
    const out = r.url(url);
    expect(out).not.toContain(ID);
    expect(holdsPart(decodeURIComponent(out), SECRET), out).toBe(false);
  });

});

describe('an AWS secret in another field of a form or part of an upload', () => {
  it('is masked in a form body, in another field or after words', () => {
    for (const form of [`id=${ID}&v=${encodeURIComponent(SECRET)}&region=us-east-1`, `q=my+key+is+${ID}&note=and+the+secret+is+${encodeURIComponent(SECRET)}+thanks`]) {
      const out = normalizeBody({ 'content-type': 'application/x-www-form-urlencoded' }, enc.encode(form), r).stored as string;
      expect(out, form).not.toContain(ID);
      expect(holdsPart(decodeURIComponent(out.replace(/\+/g, ' ')), SECRET), out).toBe(false);
      expect(decodeURIComponent(out)).toContain(r.mask(SECRET));
    }
    const a = normalizeBody({ 'content-type': 'application/x-www-form-urlencoded' }, enc.encode(`id=${ID}&s=${encodeURIComponent(SECRET)}`), r).stored;
    const b = normalizeBody({ 'content-type': 'application/x-www-form-urlencoded' }, enc.encode(`id=${ID}&s=${encodeURIComponent(OTHER)}`), r).stored;
    expect(a).not.toBe(b);
  });

  it('is masked in a query whose words are joined by +, and flagged by scan in a form stored before', () => {
    const url = `/v1/search?q=my+access+key+is+${ID}+and+the+secret+is+${encodeURIComponent(SECRET)}+thanks`;
    const out = r.url(url);
    expect(out).not.toContain(ID);
    expect(holdsPart(decodeURIComponent(out), SECRET), out).toBe(false);
    const form = `q=my+key+is+${ID}&note=and+the+secret+is+${encodeURIComponent(SECRET)}+thanks`;
    const rec = { v: 1, kind: 'http', request: { method: 'POST', url: '/v1/x', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form } };
    expect(secretsInValue(rec).map((f) => f.excerpt)).toContain(`"${SECRET.slice(0, 4)}…" (40 chars)`);
  });

  it('is masked in an answer that repeats it alone after a form or an upload sent it', () => {
    const part = (name: string, v: string) => `--b0undary\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}\r\n`;
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', `id=${ID}&note=the+secret+is+${encodeURIComponent(SECRET)}`],
      ['multipart/form-data; boundary=b0undary', `${part('id', ID)}${part('value', SECRET)}--b0undary--\r\n`],
    ] as const) {
      const masks = echoing(r, { headers: { 'content-type': type }, url: '/v1/x', body: enc.encode(body) });
      expect(masks.text(`You sent ${SECRET}.`), type).toBe(`You sent ${r.mask(SECRET)}.`);
    }
  });

  it('is masked in a multipart body, the id in one part and the secret in the next', () => {
    const part = (name: string, v: string) => `--b0undary\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}\r\n`;
    const body = `${part('id', ID)}${part('value', SECRET)}--b0undary--\r\n`;
    const out = dec.decode(normalizeBody({ 'content-type': 'multipart/form-data; boundary=b0undary' }, enc.encode(body), r).bytes);
    expect(out).not.toContain(ID);
    expect(holdsPart(out, SECRET), out).toBe(false);
    expect(out).toContain(r.mask(SECRET));
  });
});

describe('recorded through createFetch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-aws-apart-'));
  let server: Server;
  let base = '';

  beforeAll(async () => {
    // A chat API that answers with what it was sent, its slashes escaped as PHP writes them.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const sent = JSON.parse(Buffer.concat(chunks).toString()) as ReturnType<typeof chat>;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: `You sent: ${sent.messages.map((m) => m.content).join(' | ')}` } }] }).replace(/\//g, '\\/'));
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((ok) => server.close(ok));
    rmSync(dir, { recursive: true, force: true });
  });

  async function ask(f: typeof fetch, ...contents: string[]): Promise<string> {
    const res = await f(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat(...contents)) });
    return res.text();
  }

  async function scan(tape: string): Promise<{ code: number; out: string }> {
    let out = '';
    const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      return { code: await scanCommand([tape]), out };
    } finally {
      o.mockRestore();
      e.mockRestore();
    }
  }

  it('stores neither secret, replays each its own answer, and scan flags an older tape', async () => {
    const asks = [[`my id is ${ID}`, `the secret is ${SECRET}`], [`my id is ${ID}`, `the secret is ${OTHER}`]];
    const tape = join(dir, 'chat.tape');
    const rec = createFetch({ tape, mode: 'record' });
    const live: string[] = [];
    try {
      for (const a of asks) live.push(await ask(rec, ...a));
    } finally {
      await rec.close();
    }
    const text = readFileSync(tape).toString('latin1');
    for (const s of [SECRET, OTHER]) expect(holdsPart(text.replace(/\\\//g, '/'), s)).toBe(false);
    expect(await scan(tape)).toMatchObject({ code: 0 });

    const play = createFetch({ tape, mode: 'replay' });
    try {
      const second = await ask(play, ...asks[1]!);
      const first = await ask(play, ...asks[0]!);
      expect(first).not.toBe(second);
      expect((await play.stats()).misses).toBe(0);
    } finally {
      await play.close();
    }

    const old = join(dir, 'old.tape');
    const k = createFetch({ tape: old, mode: 'record', redact: { keepSecrets: true } });
    try {
      for (const a of asks) await ask(k, ...a);
    } finally {
      await k.close();
    }
    const found = await scan(old);
    expect(found.code).not.toBe(0);
    for (const s of [SECRET, OTHER]) expect(found.out).toContain(`"${s.slice(0, 4)}…" (40 chars)`);
  });
});
