// Query parameters of URLs inside text (a prompt, an answer), as user trials found them:
// - a credential parameter (`?key=`, `?api-key=`, `?sig=`) of a URL pasted into a prompt was
//   stored as a plain `[REDACTED]`, so two prompts differing only in it were one request and
//   replay handed each the other's answer. Inside text it is a keyed mask (two values, two
//   keys); the request's own URL keeps the plain mask (the client's credential, not the request);
// - a text that merely begins with `?key=` (a question, an answer) was read as a whole relative
//   URL and everything after `key=` masked, spaces included: the answer was lost, and the prompt
//   was keyed unmasked live but masked on the tape, so it never replayed.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-url-in-text-'));
const SALT = '0123456789abcdef0123456789abcdef';
let server: Server;
let base = '';
let calls = 0;

beforeAll(async () => {
  // Answers the last message's text with a call number: each recording's answer is its own.
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const j = JSON.parse(body) as { messages: { content: string }[] };
      const content = `#${++calls} ${j.messages.at(-1)!.content}`;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `c${calls}`, object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = async (f: ReturnType<typeof createFetch>, content: string) => {
  const r = await f(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content }] }) });
  const j = (await r.json()) as { choices?: { message: { content: string } }[]; error?: { message: string } };
  return { match: r.headers.get('x-tapedeck-match'), content: j.choices?.[0]?.message.content ?? `ERROR ${j.error?.message}` };
};

const PAIRS: [string, string, string][] = [
  ['Google ?key=', 'Why does https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=AIzaSyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA fail?', 'Why does https://maps.googleapis.com/maps/api/geocode/json?address=Paris&key=AIzaSyBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB fail?'],
  ['Azure ?api-key=', 'curl https://x.openai.azure.com/openai/deployments/d/chat?api-key=aaaaaaaaaaaaaaaa', 'curl https://x.openai.azure.com/openai/deployments/d/chat?api-key=bbbbbbbbbbbbbbbb'],
  ['SAS ?sig=', 'download https://acct.blob.core.windows.net/c/f.pdf?sv=2022&sig=AAAAAAAA', 'download https://acct.blob.core.windows.net/c/f.pdf?sv=2022&sig=BBBBBBBB'],
];

describe('a credential query parameter of a URL inside text', () => {
  it('is a keyed mask in text (two values, two masks) and a plain one in the request URL', () => {
    const r = redactor({ salt: SALT });
    for (const [label, a, b] of PAIRS) {
      const ma = r.value(a);
      const mb = r.value(b);
      expect(ma, label).toMatch(/=%5BREDACTED%3A[0-9a-f]{16}%5D/);
      expect(ma, label).not.toBe(mb);
      expect(r.value(a), label).toBe(ma);
      // Stored again (a record redacted twice): unchanged.
      expect(r.value(ma), label).toBe(ma);
    }
    // The request's own URL: the client's credential, one plain mask for every key.
    const u = (k: string) => r.url(`/v1beta/models/gemini-2.0-flash:generateContent?key=${k}`);
    expect(u('AIzaSyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toBe('/v1beta/models/gemini-2.0-flash:generateContent?key=%5BREDACTED%5D');
    expect(u('AIzaSyBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB')).toBe(u('AIzaSyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'));
    expect(r.url('https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=1&api-key=9f86d081884c7d659a2feaa0c55ad015')).toBe('https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=1&api-key=%5BREDACTED%5D');
    // A value not shaped like a credential (a lookup key on some APIs) is keyed there too.
    expect(r.url('/v1/x?api-key=abc')).toMatch(/^\/v1\/x\?api-key=%5BREDACTED%3A[0-9a-f]{16}%5D$/);
    // A relative URL standing alone as a JSON value (an answer's `next`) is text too.
    expect(r.value({ next: '/v1/x?key=one' }).next).not.toBe(r.value({ next: '/v1/x?key=two' }).next);
  });

  it('createFetch: prompts differing only in such a parameter are two recordings, replayed each with its own answer', async () => {
    const tape = join(dir, 'keys.tape');
    const rec = createFetch({ tape, mode: 'record' });
    const recorded: Record<string, string> = {};
    for (const [, a, b] of PAIRS) for (const p of [a, b]) recorded[p] = (await ask(rec, p)).content;
    await rec.close();
    const bytes = readFileSync(tape).toString('latin1');
    expect(bytes).not.toContain('aaaaaaaaaaaaaaaa');
    expect(bytes).not.toContain('sig=BBBBBBBB');
    const play = createFetch({ tape, mode: 'replay' });
    for (const [label, a, b] of PAIRS)
      for (const p of [b, a]) {
        const got = await ask(play, p);
        expect(got.match, label).toBe('exact');
        // The answer's number: its echo of the key is stored masked.
        expect(got.content.split(' ')[0], label).toBe(recorded[p]!.split(' ')[0]);
      }
    await play.close();
  });
});

describe('a text that begins with `?name=` is no URL', () => {
  it('the redactor leaves prose alone and still masks a whole relative URL', () => {
    const r = redactor({ salt: SALT });
    const prose = '?key= is the query parameter Google Maps expects; put your API key after it.';
    expect(r.value(prose)).toBe(prose);
    expect(r.text('?token=abc then more words')).toBe('?token=abc then more words');
    // An empty value in a URL inside text holds nothing secret: kept, not made a mask.
    expect(r.value('Try https://maps.googleapis.com/maps/api/geocode/json?key=&address=Paris')).toBe('Try https://maps.googleapis.com/maps/api/geocode/json?key=&address=Paris');
    expect(r.mayHaveSecrets(JSON.stringify({ content: prose }))).toBe(false);
    // Whole relative URLs, with no white space: masked as before.
    expect(r.value('?key=abcdefgh')).toMatch(/^\?key=%5BREDACTED%3A[0-9a-f]{16}%5D$/);
    expect(r.value('?token=abc')).toMatch(/^\?token=%5BREDACTED%3A[0-9a-f]{16}%5D$/);
    expect(r.value('/v1/files?after=f1&access_token=x')).toMatch(/^\/v1\/files\?after=f1&access_token=%5BREDACTED%3A[0-9a-f]{16}%5D$/);
  });

  it('ReplayCache keeps an answer that begins with ?key= as it was put', async () => {
    const tape = join(dir, 'answer.tape');
    const answer = '?key= is the query parameter Google Maps expects; put your API key after it and restrict the key by HTTP referrer.';
    const req = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Which parameter carries the Maps API key?' }] };
    let c = await ReplayCache.open(tape, { mode: 'record' });
    await c.put(req, answer);
    await c.close();
    c = await ReplayCache.open(tape, { mode: 'replay' });
    expect(await c.get(req)).toBe(answer);
    await c.close();
  });

  it('createFetch: two prompts that begin with ?key= are recorded as sent and replay', async () => {
    const tape = join(dir, 'qmark.tape');
    const A = '?key= means what in a Google Maps URL?';
    const B = '?key= vs ?api-key=: which one does Azure OpenAI use?';
    const rec = createFetch({ tape, mode: 'record' });
    const ra = await ask(rec, A);
    const rb = await ask(rec, B);
    await rec.close();
    expect(ra.content).toContain(A);
    const play = createFetch({ tape, mode: 'replay' });
    for (const [p, want] of [[B, rb], [A, ra]] as const) {
      const got = await ask(play, p);
      expect(got.match).toBe('exact');
      expect(got.content).toBe(want.content);
    }
    await play.close();
  });
});
