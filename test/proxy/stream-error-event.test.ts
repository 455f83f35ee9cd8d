// An API that fails after it has sent a 200 and the head of a stream says so inside the stream:
// Anthropic with an `event: error` ({"type":"error","error":{...}}), OpenAI with a data line
// {"error":{...}}. The SDKs raise it as an API error, as they raise a 5xx. Tapedeck did not record
// it (right: it is no whole answer) but counted it as an answer whose record failed: the run
// summary said "2 not recorded" where a 500 says "1 upstream error not recorded" and how to
// record it, the warning said the stream "ended before the answer was complete", and
// recordErrors, which records a 500 for a test of error handling, never recorded it. Now such a
// stream counts as an upstream error, as a non-2xx answer does: in the run summary, in the stats
// (passed through, not an error of the exchange), recorded with recordErrors and then counted
// among `tapedeck stats`' errors. Ollama's NDJSON streams say it with a last line
// {"error":"..."}, which the ollama client throws.
import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPrices } from '../../src/drift/prices.ts';
import { tapeStats } from '../../src/drift/stats.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { startFake, type FakeServer } from './loopback.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-stream-error-'));
let fake: FakeServer;

const OLLAMA_ERROR = 'an error was encountered while running the model: unexpected EOF';
const event = (name: string | undefined, data: unknown) => `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

beforeAll(async () => {
  fake = await startFake((req, res) => {
    if (req.url!.startsWith('/api/chat')) {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(JSON.stringify({ model: 'llama3.2', created_at: '2026-01-01T00:00:00Z', message: { role: 'assistant', content: 'Hel' }, done: false }) + '\n');
      res.end(JSON.stringify({ error: OLLAMA_ERROR }) + '\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    if (req.url!.startsWith('/v1/messages')) {
      res.write(event('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 9, output_tokens: 1 } } }));
      res.write(event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
      res.write(event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } }));
      res.end(event('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    } else {
      res.write(event(undefined, { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' }, finish_reason: null }] }));
      res.end(event(undefined, { error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } }));
    }
  });
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Streams from both APIs to the end; the errors the SDKs raised (undefined where none). */
async function bothStreams(f: typeof fetch, base = fake.url): Promise<unknown[]> {
  const anthropic = new Anthropic({ apiKey: 'k', baseURL: base, fetch: f, maxRetries: 0 });
  const openai = new OpenAI({ apiKey: 'k', baseURL: `${base}/v1`, fetch: f, maxRetries: 0 });
  const drain = async (s: Promise<AsyncIterable<unknown>>) => {
    try {
      for await (const _ of await s) {
        // read to the end
      }
      return undefined;
    } catch (e) {
      return e;
    }
  };
  return [
    await drain(anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }], stream: true })),
    await drain(openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true })),
  ];
}

const raisedTheApiErrors = (errors: unknown[]) => {
  expect(errors[0]).toBeInstanceOf(Anthropic.APIError);
  expect(String(errors[0])).toContain('overloaded_error');
  expect(errors[1]).toBeInstanceOf(OpenAI.APIError);
  expect(String(errors[1])).toContain('The server had an error');
};

async function summaryOf(name: string, extra: { recordErrors?: boolean } = {}): Promise<string> {
  const runDir = join(dir, `${name}-run`);
  const tape = openTestTape({ tape: join(dir, `${name}.tape`), mode: 'update', test: 'app > handles an overloaded stream', file: 'app.test.ts', runDir, ...extra });
  raisedTheApiErrors(await bothStreams(tape.fetch));
  await tape.close();
  return formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
}

describe('an error event inside a 200 stream, in update mode', () => {
  it('is an upstream error in the run summary, as a 4xx/5xx answer is, with how to record it', async () => {
    const text = await summaryOf('plain');
    expect(text).toContain('2 upstream errors not recorded');
    expect(text).toContain('tapedeckFixtures({ recordErrors: true })');
    // Not an answer whose record failed.
    expect(text).not.toContain('answers not recorded');
  });

  it('createFetch and the proxy count it as passed through, as a 4xx/5xx, and say it was an error event', async () => {
    const warnings: string[] = [];
    const f = createFetch({ tape: join(dir, 'fetch.tape'), mode: 'update', onWarning: (m) => warnings.push(m), summary: false });
    raisedTheApiErrors(await bothStreams(f));
    await f.close();
    expect(await f.stats()).toMatchObject({ errors: 0, recorded: 0, byMatch: { passthrough: 2 } });
    expect(warnings.join('\n')).toMatch(/POST \/v1\/messages: the upstream's event stream carried an error event \(overloaded_error: Overloaded\); not recorded \(recordErrors records it\)/);
    const proxy = await startProxy({ upstream: fake.url, tape: join(dir, 'proxy.tape'), mode: 'update', port: 0, onWarning: () => {} });
    try {
      raisedTheApiErrors(await bothStreams(globalThis.fetch, proxy.url));
      expect(proxy.handler.stats()).toMatchObject({ errors: 0, recorded: 0, byMatch: { passthrough: 2 } });
    } finally {
      await proxy.close();
    }
  });

  it('is recorded with recordErrors, replays as the same error and counts among the errors of tapedeck stats', async () => {
    const text = await summaryOf('recorded', { recordErrors: true });
    expect(text).toContain('2 recordings added');
    expect(text).not.toContain('not recorded');
    const play = createFetch({ tape: join(dir, 'recorded.tape'), mode: 'replay' });
    try {
      raisedTheApiErrors(await bothStreams(play, 'http://127.0.0.1:9'));
    } finally {
      await play.close();
    }
    const records = (await readTape(join(dir, 'recorded.tape'))).records.map((r) => r.value);
    expect(tapeStats([{ name: 'recorded.tape', records }], loadPrices(undefined)).total).toMatchObject({ calls: 2, errors: 2 });
  });
});

describe("Ollama's `{ error }` line inside a 200 NDJSON stream", () => {
  /** An Ollama chat streamed to the end; the error the ollama client raised (undefined where none). */
  async function ollamaStream(f: typeof fetch, host = fake.url): Promise<unknown> {
    const ollama = new Ollama({ host, fetch: f });
    try {
      for await (const _ of await ollama.chat({ model: 'llama3.2', messages: [{ role: 'user', content: 'Hi' }], stream: true })) {
        // read to the end
      }
      return undefined;
    } catch (e) {
      return e;
    }
  }

  it('is an upstream error, recorded with recordErrors, and replays as the same error', async () => {
    const warnings: string[] = [];
    const rec = createFetch({ tape: join(dir, 'ollama.tape'), mode: 'update', recordErrors: true, onWarning: (m) => warnings.push(m), summary: false });
    expect(String(await ollamaStream(rec))).toContain(OLLAMA_ERROR);
    await rec.close();
    expect(await rec.stats()).toMatchObject({ errors: 0, recorded: 1 });
    expect(warnings.join('\n')).not.toMatch(/ended before the answer was complete/);
    const play = createFetch({ tape: join(dir, 'ollama.tape'), mode: 'replay' });
    try {
      expect(String(await ollamaStream(play, 'http://127.0.0.1:9'))).toContain(OLLAMA_ERROR);
    } finally {
      await play.close();
    }
  });
});
