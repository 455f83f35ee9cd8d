// nock's recorder stores a JSON answer as its parsed value, so an answer that is a JSON list is
// stored as an array: `[]`, `["cafe","beef"]`, or the objects of Gemini's non-streamed
// streamGenerateContent. It writes an array of hex chunks only for an answer with a
// content-encoding. The import took every array for hex chunks: `[]` replayed as an empty body,
// `["cafe","beef"]` as the bytes ca fe be ef, and a list of objects was refused. Recorded here
// with nock's own recorder against a local server, imported, and replayed with createFetch.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importRecordings } from '../../src/proxy/import.ts';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-nock-json-arrays-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** nock 15's recorder needs Promise.withResolvers (Node 22): added where it is missing. */
function withResolvers(): void {
  const P = Promise as unknown as { withResolvers?: () => unknown };
  P.withResolvers ??= () => {
    let resolve!: (v: unknown) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };
}

const GEMINI = JSON.stringify([
  { candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] } }] },
  { candidates: [{ content: { role: 'model', parts: [{ text: 'lo' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2 } },
]);

/** The answers of the local server, by path: JSON lists, and one gzip-encoded JSON list. */
const ANSWERS: Record<string, string> = {
  '/v1/empty-list': '[]',
  '/v1/tags': '["cafe","beef"]',
  '/v1beta/models/gemini-1.5-flash:streamGenerateContent': GEMINI,
  '/v1/gzipped-list': '["dead","beef"]',
};

async function record(): Promise<{ file: string; base: string; defs: { path: string; response: unknown }[] }> {
  withResolvers();
  const nock = (await import('nock')).default;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = ANSWERS[req.url ?? ''] ?? '{}';
      if (req.url === '/v1/gzipped-list') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(body));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  nock.recorder.rec({ output_objects: true, dont_print: true, enable_reqheaders_recording: true });
  let defs: { path: string; response: unknown }[];
  try {
    await (await fetch(`${base}/v1/empty-list`)).text();
    await (await fetch(`${base}/v1/tags`)).text();
    await (await fetch(`${base}/v1beta/models/gemini-1.5-flash:streamGenerateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) })).text();
    await (await fetch(`${base}/v1/gzipped-list`)).text();
    for (let i = 0; i < 100 && nock.recorder.play().length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    defs = nock.recorder.play() as { path: string; response: unknown }[];
  } finally {
    nock.recorder.clear();
    nock.restore();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  expect(defs).toHaveLength(4);
  const file = join(dir, 'lists.json');
  writeFileSync(file, JSON.stringify(defs, null, 2));
  return { file, base, defs };
}

describe('nock import of answers that are JSON lists', () => {
  it('replays a JSON list as that JSON, and a content-encoded answer from its hex chunks', async () => {
    const { file, base, defs } = await record();
    // What nock's recorder wrote: the lists as parsed JSON, the encoded one as hex chunks.
    const byPath = new Map(defs.map((d) => [d.path, d.response]));
    expect(byPath.get('/v1/empty-list')).toEqual([]);
    expect(byPath.get('/v1/tags')).toEqual(['cafe', 'beef']);
    expect((byPath.get('/v1/gzipped-list') as string[]).join('').startsWith('1f8b')).toBe(true);

    const tape = join(dir, 'lists.tape');
    const report = await importRecordings(file, tape, { onWarning: () => {} });
    expect(report.records).toBe(4);
    const f = createFetch({ tape, mode: 'replay' });
    try {
      for (const path of ['/v1/empty-list', '/v1/tags', '/v1/gzipped-list']) {
        const r = await f(`${base}${path}`);
        expect(r.status).toBe(200);
        expect(JSON.parse(await r.text())).toEqual(JSON.parse(ANSWERS[path]!));
      }
      const g = await f(`${base}/v1beta/models/gemini-1.5-flash:streamGenerateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) });
      expect(g.status).toBe(200);
      expect(JSON.parse(await g.text())).toEqual(JSON.parse(GEMINI));
    } finally {
      await f.close();
    }
    expect(readFileSync(tape).length).toBeGreaterThan(0);
  });

  it('still refuses an encoded answer whose chunks are not hex, saying why', async () => {
    const file = join(dir, 'bad-chunks.json');
    writeFileSync(file, JSON.stringify([{ scope: 'https://api.openai.com:443', method: 'GET', path: '/v1/models', status: 200, response: [{ a: 1 }], rawHeaders: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, reqheaders: {} }]));
    await expect(importRecordings(file, join(dir, 'bad.tape'))).rejects.toThrow(/response\[0\].*content-encoding/);
  });
});
