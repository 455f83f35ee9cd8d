// An answer that reaches createFetch in several pieces (a long one, or one the server flushes as
// it goes) is stored as one that came whole is: readable JSON in `tapedeck export --review`, not
// opaque base64, and the same bytes on replay.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON } from '../../src/store/export.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-chunked-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const answer = { id: 'chatcmpl-1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(4000) }, finish_reason: 'stop' }] };
const text = JSON.stringify(answer);

let server: http.Server;
let url: string;
beforeAll(async () => {
  // Three writes with pauses between them: the client reads three pieces.
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const third = Math.floor(text.length / 3);
      res.write(text.slice(0, third));
      setTimeout(() => res.write(text.slice(third, 2 * third)), 20);
      setTimeout(() => res.end(text.slice(2 * third)), 40);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const ask = (f: typeof fetch) => f(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'long' }] }) }).then((r) => r.text());

describe('an answer that came in pieces', () => {
  it('is stored as readable JSON and replays byte for byte', async () => {
    const tape = join(dir, 'chunked.tape');
    const rec = createFetch({ tape, mode: 'record', onWarning: () => {} });
    try {
      expect(await ask(rec)).toBe(text);
    } finally {
      await rec.close();
    }
    const doc = JSON.parse(await exportTapeJSON(tape, { review: true })) as { records: { response: { body: unknown; chunks?: unknown } }[] };
    const r = doc.records[0]!.response;
    // It did come in pieces (their marks are kept for paced replay).
    expect(r.chunks).toBeDefined();
    expect(r.body).toMatchObject({ $type: 'bytes', json: answer });
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await ask(play)).toBe(text);
    } finally {
      await play.close();
    }
  });
});
