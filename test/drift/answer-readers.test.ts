// The provider modules' answer readers (src/providers, readAnswer) against the readers drift/,
// tree/ and the stats had before (./old-readers.ts, kept as they were): wherever an old reader
// knew an answer's shape, the new one reads the same text, tool calls, finish reasons, refusal,
// envelope, usage and follow-up messages. Answers come from real recordings: the SDKs' calls of
// the drift tests in every variant, and one recording of every provider in its own framing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerOf } from '../../src/drift/answer.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { responseMessages } from '../../src/tree/response.ts';
import { readAnswer } from '../../src/providers/index.ts';
import { VARIANTS } from './drift-upstream.ts';
import { oldContentOf, oldResponseMessages, oldShapeOf, oldUsageOf } from './old-readers.ts';
import { recordEveryProvider } from './provider-answers.ts';
import { recordVariant } from './record.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-readers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const records: unknown[] = [];

beforeAll(async () => {
  for (const v of VARIANTS) {
    const tape = join(dir, `${v}.tape`);
    await recordVariant(tape, v);
    records.push(...(await readTape(tape)).records.map((r) => r.value));
  }
  records.push(...(await recordEveryProvider(join(dir, 'every.tape'))));
  // ReplayCache values (no route): read by their shape alone.
  const values = records.map((r) => answerOf(r)?.body).filter((b) => b !== null && typeof b === 'object' && !(b instanceof Uint8Array));
  records.push(...values.map((value, i) => ({ v: 1, key: `k${i}`, request: {}, value, recordedAt: '2026-01-01T00:00:00.000Z' })));
  // Bodies written by hand: several choices, a bare `choices` list, a message object, a string.
  for (const value of [
    { object: 'chat.completion', created: 1, choices: [{ message: { content: 'a' }, finish_reason: 'stop' }, { message: { role: 'assistant', content: 'b', refusal: 'no' }, finish_reason: 'content_filter' }] },
    { choices: [{ message: { role: 'assistant', content: 'bare' } }] },
    { role: 'assistant', content: 'a message', model: 'm' },
    { content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn', type: 'message', usage: { input_tokens: 1, cache_read_input_tokens: 4, output_tokens: 2 } },
    'plain text',
  ]) {
    records.push({ v: 1, key: 'hand', request: {}, value, recordedAt: '2026-01-01T00:00:00.000Z' });
  }
}, 120_000);

/**
 * What the tree makes of an answer: the old reader's messages, except for a value the old reader
 * kept whole as the content of a made-up assistant message. That one is now the text its
 * provider module reads (Ollama's /api/generate), or not read at all: `E_TREE`, which the tree
 * lists in its warnings instead of showing the value as an answer.
 */
function expectTreeMessages(value: unknown, endpoint: { method: string; url: string } | undefined, where: string): 'read' | 'unread' {
  const old = oldResponseMessages(value);
  const keptWhole = typeof value !== 'string' && old.length === 1 && old[0]!.length === 1 && (old[0]![0] as { content?: unknown }).content === value;
  if (!keptWhole) {
    expect(responseMessages(value, endpoint), where).toEqual(old);
    return 'read';
  }
  const read = readAnswer(endpoint, value);
  if (read && read.texts.length > 0 && read.toolCalls.length === 0) {
    expect(responseMessages(value, endpoint), where).toEqual(read.texts.map((text) => [{ role: 'assistant', content: text }]));
    return 'read';
  }
  expect(() => responseMessages(value, endpoint), where).toThrow(expect.objectContaining({ code: 'E_TREE' }));
  return 'unread';
}

/** Billed tokens the classifier's old usage left out: Gemini's thinking, Bedrock's cached input. */
function billedExtras(body: Record<string, any>): { input: number; output: number } {
  const n = (v: unknown) => (typeof v === 'number' ? v : 0);
  return { input: n(body.usage?.cacheReadInputTokens) + n(body.usage?.cacheWriteInputTokens), output: n(body.usageMetadata?.thoughtsTokenCount) };
}

describe('answer readers: the provider modules agree with the readers drift, tree and stats had', () => {
  it('reads every answer an old reader knew the same way', () => {
    let known = 0;
    const shapes = new Set<string>();
    for (const rec of records) {
      const a = answerOf(rec);
      if (!a) continue;
      const old = oldShapeOf(a.body);
      if (typeof a.body === 'string' || a.body === undefined || a.body instanceof Uint8Array) continue;
      if (old === 'json') {
        // Where the old readers knew no shape, the classifier still compares plain JSON.
        expect(['json', 'bedrock-llama', 'bedrock-titan', 'bedrock-mistral']).toContain(a.shape);
        continue;
      }
      known++;
      shapes.add(old);
      const where = `${isHttpRecord(rec) ? rec.route : 'cache'} (${old})`;
      expect(a.shape, where).toBe(old);
      const before = oldContentOf(old, a.body)!;
      const r = a.read!;
      expect({ texts: r.texts, calls: r.toolCalls, finish: r.finish, refusal: r.refusal, rest: r.rest }, where).toEqual({ texts: before.texts, calls: before.calls, finish: before.finish, refusal: before.refusal, rest: before.rest });
      // The stats read OpenAI's and Anthropic's usage; the classifier the rest, without the
      // billed extras (cached input, thinking tokens) it never compared.
      const u = oldUsageOf(a.body);
      if (u) expect(r.usage, where).toEqual(u);
      else if (before.usage) {
        const x = billedExtras(a.body as Record<string, any>);
        expect({ input: r.usage?.input, output: r.usage?.output }, where).toEqual({ input: (before.usage.input ?? 0) + x.input, output: (before.usage.output ?? 0) + x.output });
      }
      const endpoint = isHttpRecord(rec) ? { method: rec.request.method, url: rec.request.url } : undefined;
      expectTreeMessages(a.body, endpoint, where);
    }
    expect([...shapes].sort()).toEqual(['anthropic', 'bedrock-converse', 'gemini', 'ollama', 'openai-chat', 'openai-responses']);
    expect(known).toBeGreaterThan(100);
  });

  it('the tree continues through message objects and text as before, and lists plain values instead of showing them', () => {
    let unread = 0;
    for (const rec of records) {
      const value = (rec as { value?: unknown }).value;
      if (isHttpRecord(rec) || value === undefined) continue;
      if (expectTreeMessages(value, undefined, 'cache') === 'unread') unread++;
    }
    // The plain JSON API's answers (and the error bodies) are among the cached values.
    expect(unread).toBeGreaterThan(0);
  });
});
