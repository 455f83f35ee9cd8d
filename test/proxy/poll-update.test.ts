// A status polled in update mode (the default of a local test run): the first run sent the first
// GET to the API and answered every later one with that recording, so a loop polling a batch
// until it completed saw `in_progress` forever (or until its cap) and recorded nothing more. A
// GET or HEAD asked past its recordings now goes to the API in update mode, and each answer is
// recorded; the replay polls through the same states. With the real openai SDK.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/index.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { listenLoopback } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-poll-'));
let api: { url: string; close(): Promise<void> };
let gets = 0;
let chats = 0;
let sameGets = 0;
beforeAll(async () => {
  // A batch that is in progress for two polls, then completed; a chat that echoes its call count.
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const json = (v: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(v));
      // batch_2 answers the same bytes while its state is the same (no poll counter in it).
      if (req.method === 'GET' && req.url === '/v1/batches/batch_2') {
        sameGets++;
        return json({ id: 'batch_2', object: 'batch', status: sameGets <= 2 ? 'in_progress' : 'completed' });
      }
      if (req.method === 'GET' && req.url === '/v1/batches/batch_1') {
        gets++;
        return json({ id: 'batch_1', object: 'batch', status: gets <= 2 ? 'in_progress' : 'completed', poll: gets });
      }
      chats++;
      json({ id: `c${chats}`, object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `answer ${chats}`, refusal: null }, finish_reason: 'stop', logprobs: null }] });
    });
  });
  api = await listenLoopback(server);
});
afterAll(async () => {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Polls a batch until it completes (at most 10 polls) through `fetch`: the statuses seen. */
async function poll(fetch: typeof globalThis.fetch, batch = 'batch_1'): Promise<string[]> {
  const client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: 'sk-test', fetch, maxRetries: 0 });
  const seen: string[] = [];
  for (let i = 0; i < 10; i++) {
    const b = await client.batches.retrieve(batch);
    seen.push(b.status);
    if (b.status === 'completed') break;
  }
  return seen;
}

/** Polls batch_1 until it completes with a fetch of its own: the statuses seen. */
async function pollRun(tape: string, mode: 'update' | 'replay', batch = 'batch_1', strictOrder = false): Promise<string[]> {
  const fetch = createFetch({ tape, mode, ...(strictOrder ? { strictOrder } : {}) });
  try {
    return await poll(fetch, batch);
  } finally {
    await fetch.close();
  }
}

describe('update mode, a status polled until it changes', () => {
  it('sends each poll past the recordings to the API and records it; the replay polls through the same states', async () => {
    const tape = join(dir, 'poll.tape');
    expect(await pollRun(tape, 'update')).toEqual(['in_progress', 'in_progress', 'completed']);
    expect(gets).toBe(3);
    expect((await readTape(tape)).records).toHaveLength(3);
    expect(await pollRun(tape, 'replay')).toEqual(['in_progress', 'in_progress', 'completed']);
    // Update again: every poll has its recording, nothing is sent or added.
    expect(await pollRun(tape, 'update')).toEqual(['in_progress', 'in_progress', 'completed']);
    expect(gets).toBe(3);
    expect((await readTape(tape)).records).toHaveLength(3);
  });

  it('an LLM call asked again in the run that records it still replays the answer recorded first', async () => {
    const tape = join(dir, 'chat.tape');
    const fetch = createFetch({ tape, mode: 'update' });
    try {
      const client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: 'sk-test', fetch, maxRetries: 0 });
      const ask = async () => (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })).choices[0]!.message.content;
      const first = await ask();
      expect(await ask()).toBe(first);
    } finally {
      await fetch.close();
    }
    expect((await readTape(tape)).records).toHaveLength(1);
  });

  // Failed before: each poll past the recordings was recorded, the same answer too, so one
  // long-running update fetch (or a shared `tapedeck serve --mode update`) that run after run
  // polls grew by a recording each time (here 3, then 4, 5, 6).
  it('records a poll past the recordings only when its answer differs from the last recording, so a shared update deck does not grow', async () => {
    const tape = join(dir, 'same.tape');
    sameGets = 0;
    const fetch = createFetch({ tape, mode: 'update' });
    try {
      // The second in_progress is the last recording again: not stored.
      expect(await poll(fetch, 'batch_2')).toEqual(['in_progress', 'in_progress', 'completed']);
      expect(sameGets).toBe(3);
      // The next run on the same deck: each poll past the end goes to the API, answered completed.
      expect(await poll(fetch, 'batch_2')).toEqual(['completed']);
      expect(await poll(fetch, 'batch_2')).toEqual(['completed']);
      expect(sameGets).toBe(5);
    } finally {
      await fetch.close();
    }
    const records = (await readTape(tape)).records;
    expect(records.map((r) => JSON.parse(new TextDecoder().decode((r.value as { response: { body: Uint8Array } }).response.body)).status)).toEqual(['in_progress', 'completed']);
    // The replay polls through the states recorded; past the end it is served the last again.
    expect(await pollRun(tape, 'replay', 'batch_2')).toEqual(['in_progress', 'completed']);
  });

  it('with strictOrder every poll keeps its recording (a call past the end is a miss there)', async () => {
    const tape = join(dir, 'strict.tape');
    sameGets = 0;
    expect(await pollRun(tape, 'update', 'batch_2', true)).toEqual(['in_progress', 'in_progress', 'completed']);
    expect((await readTape(tape)).records).toHaveLength(3);
    expect(await pollRun(tape, 'replay', 'batch_2', true)).toEqual(['in_progress', 'in_progress', 'completed']);
  });
});
