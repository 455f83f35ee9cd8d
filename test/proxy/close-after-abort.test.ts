// The app aborted a streamed call midway and its upstream then went quiet; the answer is read on
// for its record (docs/modes.md rule 10), so close() waits for it up to its bound (a reasoning
// model's stream may be silent for many seconds and still end whole). When the bound cut it,
// close() warned "Wait for the answers before closing the fetch", though the app had abandoned
// that answer. When the bound cuts only such answers, the warning now says what they were, and
// nothing of them is recorded. The real OpenAI SDK, a local provider that stalls.
import OpenAI from 'openai';
import { createServer, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { listenLoopback } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-close-after-abort-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chunk = (delta: object) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;

/** A provider that sends two events of its answer and then nothing, holding the connection open. */
async function stalling() {
  const open: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: 'one ' }) + chunk({ content: 'two ' }));
      open.push(res);
    });
  });
  const up = await listenLoopback(server);
  return { ...up, close: async () => (open.forEach((r) => r.destroy()), up.close()) };
}

const ask = { model: 'gpt-4o-mini', stream: true as const, messages: [{ role: 'user' as const, content: 'Count slowly' }] };

describe('close() after the app aborted a stream whose upstream stalled', () => {
  it('at its bound, says the answer cut was one its caller had aborted, and records nothing', async () => {
    const up = await stalling();
    const tape = join(dir, 'aborted.tape');
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'record', summary: false, shutdownTimeoutMs: 1500, onWarning: (m) => warnings.push(m) });
    try {
      const client = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-x', fetch: f, maxRetries: 0 });
      const ac = new AbortController();
      const stream = await client.chat.completions.create(ask, { signal: ac.signal });
      let n = 0;
      for await (const _ of stream) if (++n === 2) ac.abort();
      await f.close();
      const said = warnings.join('\n');
      expect(said).toContain('still read an answer its caller had aborted');
      expect(said).toContain('not recorded');
      expect(said).not.toContain('Wait for the answers');
      expect(said).toContain('the upstream had not finished within the shutdown timeout (1500 ms)');
      // Nothing acknowledged: the tape holds no record of the cut answer.
      const records = await readTape(tape).then((t) => t.records.length, () => 0);
      expect(records).toBe(0);
    } finally {
      await up.close();
    }
  }, 30_000);
});
