// A recording that decodes (its frame's checksum holds) but whose fields are not an HTTP
// record's is not damage: `tapedeck verify` finds none, and re-recording because the tape is
// "damaged" sends the user looking for what is not there. The call it answers is told what the
// record holds instead. The record here is what a tapedeck that ran under jsdom once wrote: the
// response body as a map of numbers.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { createReplayFetch, loadTape } from '../../src/browser/index.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

let upstream: Server;
let url: string;
let dir: string;
let tape: string;
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] });
const ask = (f: typeof fetch) => f(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1/chat/completions`;
  dir = mkdtempSync(join(tmpdir(), 'tapedeck-malformed-'));
  const recorded = join(dir, 'recorded.tape');
  const rec = createFetch({ tape: recorded, mode: 'record', summary: false });
  expect((await ask(rec)).status).toBe(200);
  await rec.close();
  // The same record, its body bytes turned into a map of numbers, on a tape of its own.
  const [value] = (await readTape(recorded)).records.map((r) => r.value as { response: { body: unknown } });
  value!.response.body = Object.fromEntries([...(value!.response.body as Uint8Array)].map((b, i) => [String(i), b]));
  tape = join(dir, 'malformed.tape');
  await createTape(tape);
  await appendRecords(tape, [value]);
});

afterAll(() => {
  upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a recording that decodes but is not an HTTP record', () => {
  it.each(['createFetch', 'llm-tapedeck/browser'] as const)('answers its call through %s saying what it holds, not that the tape is damaged', async (entry) => {
    const warnings: string[] = [];
    const f =
      entry === 'createFetch'
        ? createFetch({ tape, mode: 'replay', summary: false, onWarning: (m) => warnings.push(m) })
        : createReplayFetch({ tape: await loadTape(readFileSync(tape)), onWarning: (m: string) => warnings.push(m) });
    try {
      const res = await ask(f);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(res.status).toBe(400);
      expect(error.code).toBe('E_TAPE_CORRUPT');
      expect(error.message).toContain('HTTP exchange record at');
      expect(error.message).toContain('is malformed (its response.body is object, not bytes)');
      expect(error.message).toContain('Record the call again');
      expect(error.message).not.toContain('damaged');
    } finally {
      await f.close();
    }
  });
});
