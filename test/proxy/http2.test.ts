// Cleartext HTTP/2 (prior knowledge) on the proxy's port, beside HTTP/1.1: the AWS SDK's default
// handler speaks it to an http:// endpoint. Record and replay over HTTP/2 (streams paced as
// recorded), misses in the client's error shape, both protocols at once on one port, a preface
// split across packets, and a shutdown that waits for HTTP/2 streams in flight.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as h2connect, constants as h2constants, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream } from './fake-upstream.ts';
import { ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { awsClient, MODEL } from '../providers/bedrock-clients.ts';
import { startBedrock } from '../providers/fake-bedrock.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-h2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const tapePath = () => join(dir, `t${++seq}.tape`);

const chat = (content: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content }], ...extra });

interface H2Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Arrival time of each DATA chunk, ms after the request was sent. */
  at: number[];
}

function h2post(session: ClientHttp2Session, path: string, body: string, headers: Record<string, string> = {}): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', authorization: 'Bearer sk-test-h2', ...headers });
    const parts: Buffer[] = [];
    const at: number[] = [];
    let head: IncomingHttpHeaders = {};
    req.on('response', (h) => (head = h));
    req.on('data', (c: Buffer) => {
      parts.push(c);
      at.push(performance.now() - t0);
    });
    req.on('end', () => resolve({ status: Number(head[':status']), headers: head, body: Buffer.concat(parts), at }));
    req.on('error', reject);
    req.end(body);
  });
}

describe('cleartext HTTP/2 on the proxy port', () => {
  it('records and replays over HTTP/2, streams paced as recorded, misses in the OpenAI shape', async () => {
    const tape = tapePath();
    const up = await startUpstream({ gapMs: 25 });
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    let s = h2connect(rec.url);
    const plain = await h2post(s, '/v1/chat/completions', chat('hello over h2'));
    expect(plain.status).toBe(200);
    expect(plain.headers['x-tapedeck-match']).toBe('recorded');
    const streamed = await h2post(s, '/v1/chat/completions', chat('stream over h2 please', { stream: true }));
    expect(streamed.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(streamed.body.toString()).toMatch(/data: \[DONE\]\n\n$/);
    s.close();
    await rec.close();
    await up.close();
    // The upstream's authority must not leak into the request as a header (HTTP/2 pseudo-headers
    // are the request line): the upstream got plain HTTP/1.1 headers.
    expect(Object.keys(up.calls[0]!.headers).filter((k) => k.startsWith(':'))).toEqual([]);

    const play = await startProxy({ tape, mode: 'replay', port: 0, timing: 'recorded' });
    s = h2connect(play.url);
    const again = await h2post(s, '/v1/chat/completions', chat('hello over h2'));
    expect(again.status).toBe(200);
    expect(again.headers['x-tapedeck-match']).not.toBe('recorded');
    expect(again.body.equals(plain.body)).toBe(true);
    const replayed = await h2post(s, '/v1/chat/completions', chat('stream over h2 please', { stream: true }));
    expect(replayed.body.equals(streamed.body)).toBe(true);
    // Recorded timing: the events arrive spread over about as long as they took live.
    const span = (a: number[]) => a.at(-1)! - a[0]!;
    expect(replayed.at.length).toBeGreaterThan(3);
    expect(span(replayed.at)).toBeGreaterThan(span(streamed.at) * 0.5);
    const miss = await h2post(s, '/v1/chat/completions', chat('never recorded'));
    expect(miss.headers['x-tapedeck-match']).toBe('miss');
    expect(JSON.parse(miss.body.toString()).error.message).toMatch(/^tapedeck miss: /);
    s.close();
    await play.close();
  });

  it('the AWS SDK as shipped (HTTP/2) and switched to HTTP/1.1 (NodeHttpHandler) both get their answers', async () => {
    const fake = await startBedrock();
    const proxy = await startProxy({ upstream: fake.url, tape: tapePath(), mode: 'record', port: 0 });
    for (const http1 of [false, true]) {
      const client = awsClient(proxy.url, { http1 });
      const out = await client.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: `via ${http1 ? 'h1' : 'h2'}` }] }] }));
      expect(out.output?.message?.content?.[0]?.text).toMatch(new RegExp(`: via ${http1 ? 'h1' : 'h2'}$`));
      client.destroy();
    }
    await proxy.close();
    await fake.close();
  });

  it('HTTP/1.1 and HTTP/2 clients at once on one port, each answered in its own protocol', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    const s = h2connect(proxy.url);
    const jobs: Promise<string>[] = [];
    for (let i = 0; i < 20; i++) {
      jobs.push(h2post(s, '/v1/chat/completions', chat(`h2 ${i}`)).then((r) => JSON.parse(r.body.toString()).choices[0].message.content));
      jobs.push(
        fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat(`h1 ${i}`) })
          .then((r) => r.json() as Promise<{ choices: { message: { content: string } }[] }>)
          .then((j) => j.choices[0]!.message.content),
      );
    }
    const answers = await Promise.all(jobs);
    for (let i = 0; i < 20; i++) {
      expect(answers[2 * i]).toMatch(new RegExp(`: h2 ${i}$`));
      expect(answers[2 * i + 1]).toMatch(new RegExp(`: h1 ${i}$`));
    }
    s.close();
    await proxy.close();
    await up.close();
  });

  it('a preface that arrives a byte at a time, and an HTTP/1.1 request that does, are both told apart', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    // HTTP/1.1, one byte per write, starting with the same "P" as the preface.
    const h1 = await new Promise<string>((resolve, reject) => {
      const sock = tcpConnect(proxy.port, '127.0.0.1');
      sock.setNoDelay(true);
      const body = chat('byte by byte');
      const text = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
      let out = '';
      sock.on('data', (c) => (out += c));
      sock.on('end', () => resolve(out));
      sock.on('error', reject);
      (async () => {
        for (const ch of text.slice(0, 40)) {
          sock.write(ch);
          await new Promise((r) => setTimeout(r, 2));
        }
        sock.write(text.slice(40));
      })();
    });
    expect(h1).toMatch(/^HTTP\/1\.1 200 /);
    expect(h1).toMatch(/Echo \d+: byte by byte/);
    // HTTP/2 over a socket that delivers the preface in 1-byte writes.
    const sock = tcpConnect(proxy.port, '127.0.0.1');
    sock.setNoDelay(true);
    await new Promise((r) => sock.once('connect', r));
    const realWrite = sock.write.bind(sock);
    let first = true;
    (sock as unknown as { write: typeof sock.write }).write = ((chunk: Buffer, ...rest: never[]) => {
      if (!first) return realWrite(chunk, ...rest);
      first = false;
      const b = Buffer.from(chunk);
      for (let i = 0; i < b.length; i++) realWrite(b.subarray(i, i + 1));
      return true;
    }) as typeof sock.write;
    const s = h2connect(proxy.url, { createConnection: () => sock });
    const r = await h2post(s, '/v1/chat/completions', chat('split preface'));
    expect(JSON.parse(r.body.toString()).choices[0].message.content).toMatch(/: split preface$/);
    s.close();
    await proxy.close();
    await up.close();
  });

  it('close() lets an HTTP/2 stream in flight finish, and is not held up by a silent connection', async () => {
    const tape = tapePath();
    const up = await startUpstream();
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    const silent = tcpConnect(proxy.port, '127.0.0.1');
    await new Promise((r) => silent.once('connect', r));
    const s = h2connect(proxy.url);
    const pending = h2post(s, '/v1/chat/completions', chat('slow answer while closing', { stream: true }));
    await new Promise((r) => setTimeout(r, 30));
    const t0 = performance.now();
    await proxy.close();
    const r = await pending;
    expect(r.status).toBe(200);
    expect(r.body.toString()).toMatch(/data: \[DONE\]\n\n$/);
    expect(performance.now() - t0).toBeLessThan(1900);
    // The silent connection was cut by close(), not left to the client.
    if (!silent.closed) await new Promise((r) => silent.once('close', r));
    s.destroy();
    await up.close();
  });

  // Failed before: an HTTP/2 compatibility response has no `destroyed`, so a stream the client
  // cancelled read as open: the next write waited for a 'close' that had fired already. The
  // answer being recorded was never read to its end (nothing recorded, the request in flight for
  // ever, shutdown cut it after its timeout); a replay's paced stream stayed in flight too.
  it('a stream the client cancels mid-answer: recorded whole when recording, and never left in flight', async () => {
    const tape = tapePath();
    const up = await startUpstream({ gapMs: 40 });
    const inFlightEnds = async (p: { handler: { stats(): { inFlight: number } } }) => {
      for (let i = 0; i < 100 && p.handler.stats().inFlight > 0; i++) await new Promise((r) => setTimeout(r, 50));
      return p.handler.stats().inFlight;
    };
    const cancelAfterFirstData = (url: string) =>
      new Promise<number>((resolve, reject) => {
        const s = h2connect(url);
        const req = s.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', authorization: 'Bearer sk-test-h2' });
        let got = 0;
        req.on('data', (c: Buffer) => {
          got += c.length;
          req.close(h2constants.NGHTTP2_CANCEL);
        });
        req.on('close', () => {
          s.close();
          resolve(got);
        });
        req.on('error', reject);
        req.end(chat('cancel me mid-stream over h2', { stream: true }));
      });
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, onWarning: () => {} });
    expect(await cancelAfterFirstData(rec.url)).toBeGreaterThan(0);
    expect(await inFlightEnds(rec)).toBe(0);
    await rec.close();
    const records = (await readTape(tape)).records;
    expect(records).toHaveLength(1);
    const play = await startProxy({ tape, mode: 'replay', port: 0, timing: 'recorded', onWarning: () => {} });
    expect(await cancelAfterFirstData(play.url)).toBeGreaterThan(0);
    expect(await inFlightEnds(play)).toBe(0);
    await play.close();
    await up.close();
  });
});
