// createHandler mounted under a prefix in Express 5 and Fastify 5, the ways docs/proxy.md says
// it works: Express before any body parser, after express.json() (the parsed body is
// re-serialized), with express.raw(); Fastify with reply.hijack() and a content-type parser that
// leaves the body unread. Each records a chat completion and a stream through the framework,
// then replays them with the upstream gone.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { createHandler, type TapedeckHandler } from '../../src/proxy/handler.ts';
import { isHttpRecord, type HttpRecord } from '../../src/store/records.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-frameworks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const tapePath = () => join(dir, `f${++seq}.tape`);

const KEY = 'sk-proj-' + 'Zx8cVb6nMa4sDf2gHj0kLq9wEr7tYu5iOp3aSd1F'; // 8 + 40 characters

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content }], ...extra });

interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') };
}

async function httpRecords(tape: string): Promise<HttpRecord[]> {
  return (await readTape(tape)).records.map((r) => r.value).filter(isHttpRecord);
}

/** What the app's own middleware saw of each request before the proxy got it. */
interface Seen {
  body: 'none' | 'buffer' | 'string' | 'object';
  streamRead: boolean;
}

interface Mounted {
  base: string;
  seen: Seen[];
  close(): Promise<void>;
}

function seenOf(req: IncomingMessage & { body?: unknown }): Seen {
  const b = req.body;
  return {
    body: b === undefined ? 'none' : Buffer.isBuffer(b) ? 'buffer' : typeof b === 'string' ? 'string' : 'object',
    streamRead: req.readableEnded,
  };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/** Express 5: `app.use('/llm', handler)`, after the given body parser (if any). */
function mountExpress(parser: 'none' | 'json' | 'raw' | 'form') {
  return async (handler: TapedeckHandler): Promise<Mounted> => {
    const seen: Seen[] = [];
    const app = express();
    if (parser === 'json') app.use(express.json());
    if (parser === 'form') app.use(express.urlencoded({ extended: true }));
    // express.raw() alone only takes application/octet-stream; '*/*' makes it hold every body.
    if (parser === 'raw') app.use(express.raw({ type: '*/*' }));
    app.use((req: IncomingMessage, _res: ServerResponse, next: () => void) => {
      seen.push(seenOf(req));
      next();
    });
    app.use('/llm', handler);
    app.get('/other', (_req: IncomingMessage, res: ServerResponse) => {
      res.end('app');
    });
    const server = createServer(app);
    const base = await listen(server);
    return { base, seen, close: () => closeServer(server) };
  };
}

/**
 * Fastify 5: the route hijacks the reply and hands the raw request and response to the handler.
 * Fastify keeps the full path in req.raw.url, so the prefix is cut off first.
 */
async function mountFastify(handler: TapedeckHandler): Promise<Mounted> {
  const seen: Seen[] = [];
  const app = Fastify();
  // In a plugin of its own, so the rest of the app keeps Fastify's parsers.
  app.register(async (llm) => {
    // Leave every body unread: the proxy reads the raw bytes itself.
    llm.removeAllContentTypeParsers();
    llm.addContentTypeParser('*', (_req, _payload, done) => done(null));
    llm.all('/llm/*', (req, reply) => {
      seen.push(seenOf(req.raw));
      reply.hijack();
      req.raw.url = req.raw.url!.slice('/llm'.length);
      handler(req.raw, reply.raw);
    });
  });
  app.get('/other', async () => 'app');
  app.post('/other', async (req) => ({ parsed: req.body }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    base,
    seen,
    close: async () => {
      app.server.closeAllConnections();
      await app.close();
    },
  };
}

const cases: { name: string; mount: (h: TapedeckHandler) => Promise<Mounted>; proxySees: Seen['body']; streamRead: boolean }[] = [
  { name: 'Express, before any body parser', mount: mountExpress('none'), proxySees: 'none', streamRead: false },
  { name: 'Express, after express.json() (parsed body re-serialized)', mount: mountExpress('json'), proxySees: 'object', streamRead: true },
  { name: 'Express, with express.raw()', mount: mountExpress('raw'), proxySees: 'buffer', streamRead: true },
  { name: 'Fastify, reply.hijack() and an unread body', mount: mountFastify, proxySees: 'none', streamRead: false },
];

describe.each(cases)('$name', ({ mount, proxySees, streamRead }) => {
  it('records a chat completion and a stream, then replays them byte for byte with the upstream gone', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const recorder = createHandler({ upstream: up.url, tape, mode: 'record' });
    let app = await mount(recorder);
    let live: Answer, liveStream: Answer;
    try {
      live = await post(`${app.base}/llm/v1/chat/completions`, chat('hello framework'));
      liveStream = await post(`${app.base}/llm/v1/chat/completions`, chat('stream it', { stream: true }));
      expect(live.status).toBe(200);
      expect(live.headers.get('x-tapedeck-match')).toBe('recorded');
      expect(JSON.parse(live.text).choices[0].message.content).toBe('Echo 1: hello framework');
      expect(liveStream.status).toBe(200);
      expect(liveStream.headers.get('x-tapedeck-match')).toBe('recording');
      expect(liveStream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(liveStream.text).toMatch(/^data: /);
      expect(liveStream.text).toContain(': keep-alive\n\n\n');
      expect(liveStream.text).toMatch(/data: \[DONE\]\n\n$/);
      // The upstream saw the path without the mount prefix, the body, and the real key.
      expect(up.calls.map((c) => `${c.method} ${c.url}`)).toEqual(['POST /v1/chat/completions', 'POST /v1/chat/completions']);
      expect(JSON.parse(up.calls[0]!.body)).toEqual(chat('hello framework'));
      expect(JSON.parse(up.calls[1]!.body)).toEqual(chat('stream it', { stream: true }));
      expect(up.calls[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
      // The app's other routes still work, and the body reached the proxy the way this case says.
      expect(await (await fetch(`${app.base}/other`)).text()).toBe('app');
      if (mount === mountFastify) {
        const parsed = await post(`${app.base}/other`, { a: 1 });
        expect(JSON.parse(parsed.text)).toEqual({ parsed: { a: 1 } });
      }
      expect(app.seen.slice(0, 2)).toEqual([
        { body: proxySees, streamRead },
        { body: proxySees, streamRead },
      ]);
    } finally {
      await recorder.close();
      await app.close();
      await up.close();
    }

    // Nothing of the key is on the tape, in any byte.
    const bytes = readFileSync(tape);
    for (const secret of [KEY, KEY.slice(8), KEY.slice(24)]) expect(bytes.indexOf(Buffer.from(secret)), secret).toBe(-1);
    const recs = await httpRecords(tape);
    expect(recs.length).toBe(2);
    for (const r of recs) {
      expect(r.route).toBe('POST /v1/chat/completions');
      expect(r.request.headers.authorization).toBe('[REDACTED]');
    }
    const streamed = recs.find((r) => (r.request.body as { stream?: boolean }).stream)!;
    expect(Buffer.from(streamed.response.body).equals(liveStream.bytes)).toBe(true);
    expect(streamed.response.chunks!.length).toBeGreaterThan(1);

    const player = createHandler({ tape, mode: 'replay' });
    app = await mount(player);
    try {
      const again = await post(`${app.base}/llm/v1/chat/completions`, chat('hello framework'));
      expect(again.status).toBe(200);
      expect(again.headers.get('x-tapedeck-match')).toBe('exact');
      expect(again.headers.get('x-tapedeck-trace')).toMatch(/^[0-9a-f]{64}$/);
      expect(again.text).toBe(live.text);

      const againStream = await post(`${app.base}/llm/v1/chat/completions`, chat('stream it', { stream: true }));
      expect(againStream.status).toBe(200);
      expect(againStream.headers.get('x-tapedeck-match')).toBe('exact');
      expect(againStream.headers.get('content-type')).toBe(liveStream.headers.get('content-type'));
      expect(againStream.bytes.equals(liveStream.bytes)).toBe(true);

      // A miss is a 400 in the provider's error shape: OpenAI's by default...
      const miss = await post(`${app.base}/llm/v1/chat/completions`, chat('never recorded'));
      expect(miss.status).toBe(400);
      expect(miss.headers.get('x-tapedeck-match')).toBe('miss');
      expect(miss.headers.get('content-type')).toBe('application/json');
      const e = JSON.parse(miss.text).error;
      expect(e).toMatchObject({ code: 'E_MISS', type: 'tapedeck_miss', param: null });
      expect(e.message).toContain('never recorded');
      expect(e.tapedeck.closest.length).toBeGreaterThan(0);
      // ...Anthropic's for /v1/messages (seen without the prefix).
      const amiss = await post(`${app.base}/llm/v1/messages`, { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });
      expect(amiss.status).toBe(400);
      expect(amiss.headers.get('x-tapedeck-match')).toBe('miss');
      expect(JSON.parse(amiss.text)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'E_MISS' } });

      expect(player.stats()).toMatchObject({ hits: 2, misses: 2 });
    } finally {
      await player.close();
      await app.close();
    }
  });
});

describe('Express, after express.json()', () => {
  it('an empty JSON object or array body, already parsed and read, is re-serialized rather than waited for', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const recorder = createHandler({ upstream: up.url, tape, mode: 'record' });
    const app = await mountExpress('json')(recorder);
    try {
      for (const body of ['{}', '[]']) {
        const r = await post(`${app.base}/llm/v1/echo`, body);
        expect(r.status, body).toBe(200);
        expect(JSON.parse(r.text).echo, body).toEqual(JSON.parse(body));
      }
      expect(up.calls.map((c) => c.body)).toEqual(['{}', '[]']);
    } finally {
      await recorder.close();
      await app.close();
      await up.close();
    }
    expect((await httpRecords(tape)).map((r) => r.request.body)).toEqual([{}, []]);
  });
});

describe('Express, after express.urlencoded()', () => {
  it('re-sends a parsed flat form as a form, and refuses a body it cannot rebuild', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const recorder = createHandler({ upstream: up.url, tape, mode: 'record' });
    const app = await mountExpress('form')(recorder);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    try {
      await post(`${app.base}/llm/v1/echo`, 'a=1&b=x%20y&b=z', form);
      expect(up.calls.map((c) => c.body)).toEqual(['a=1&b=x+y&b=z']);
      // Nested fields (qs syntax) parse to objects: no faithful way back, so an error, not a guess.
      const r = await post(`${app.base}/llm/v1/echo`, 'a[b]=1', form);
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text).error.code).toBe('E_PROXY_BODY');
      expect(up.calls.length).toBe(1);
    } finally {
      await recorder.close();
      await app.close();
      await up.close();
    }
  });
});
