// Recording `ollama.pull({ stream: true })` through createFetch with the real ollama client: the
// client stops reading at the `{"status":"success"}` line and never reads the body's end, so
// tapedeck reads the rest itself (when the answer is stored, or at close()). Both ways end the
// same answer: a whole answer is recorded once, with no warning and a summary that agrees.
import { Ollama } from 'ollama';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { listenLoopback } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ollama-pull-'));
const PROGRESS = [
  { status: 'pulling manifest' },
  { status: 'pulling a80c4f17acd5', digest: 'sha256:a80c', total: 100, completed: 50 },
  { status: 'pulling a80c4f17acd5', digest: 'sha256:a80c', total: 100, completed: 100 },
  { status: 'verifying sha256 digest' },
  { status: 'writing manifest' },
  { status: 'success' },
];

// Ollama's /api/pull: progress lines as NDJSON when streamed, else the last line as JSON.
const server = createServer((req, res) => {
  let raw = '';
  req.on('data', (c) => (raw += c));
  req.on('end', async () => {
    const body = JSON.parse(raw) as { stream?: boolean };
    if (body.stream === false) {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      return res.end(JSON.stringify({ status: 'success' }));
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    for (const l of PROGRESS) {
      res.write(`${JSON.stringify(l)}\n`);
      await new Promise((r) => setTimeout(r, 1));
    }
    res.end();
  });
});
let up: Awaited<ReturnType<typeof listenLoopback>>;
beforeAll(async () => {
  up = await listenLoopback(server);
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ollama pull (streamed) recorded through createFetch', () => {
  it('is recorded whole, with no warning, however the client leaves the body', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const summaries: string[] = [];
    for (let run = 0; run < 40; run++) {
      const tape = join(dir, `pull-${run}.tape`);
      const fetch = createFetch({ tape, mode: 'record', summary: (t: string) => summaries.push(t) });
      const ollama = new Ollama({ host: up.url, fetch });
      const statuses: string[] = [];
      for await (const p of await ollama.pull({ model: 'llama3.2', stream: true })) statuses.push(p.status);
      expect(statuses).toEqual(PROGRESS.map((p) => p.status));
      // The rest of the body is read by whichever comes first: tapedeck storing the answer, or
      // close() (after a varying pause, so both orders happen).
      await new Promise((r) => setTimeout(r, run % 4));
      if (run % 2 === 0) expect((await ollama.pull({ model: 'llama3.2' })).status).toBe('success');
      await fetch.close();

      const play = createFetch({ tape, mode: 'replay', summary: () => {} });
      const again: string[] = [];
      for await (const p of await new Ollama({ host: up.url, fetch: play }).pull({ model: 'llama3.2', stream: true })) again.push(p.status);
      await play.close();
      expect(again).toEqual(statuses);
    }
    await new Promise((r) => setImmediate(r));
    process.off('warning', onWarning);
    expect(warnings).toEqual([]);
    expect(summaries.filter((s) => /not recorded/.test(s))).toEqual([]);
  });
});
