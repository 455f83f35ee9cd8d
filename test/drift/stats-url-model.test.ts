// `tapedeck stats` names the model of a call whose URL names it (Gemini's
// `/v1beta/models/<model>:embedContent`, Bedrock's `/model/<id>/...`) when neither the request
// body nor the answer does: a user trial found Gemini's embedContent and countTokens calls
// listed under model "-".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPrices } from '../../src/drift/prices.ts';
import { callStats, tapeStats } from '../../src/drift/stats.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-stats-url-model-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GEMINI = 'https://generativelanguage.googleapis.com/v1beta/models';
const content = { parts: [{ text: 'embed me' }] };

describe('stats takes the model from the URL when the body and the answer name none', () => {
  it("Gemini embedContent / countTokens / batchEmbedContents, and a Bedrock call's error answer", async () => {
    const tape = join(dir, 'url-model.tape');
    await addRecordings({ tape }, [
      { request: { url: `${GEMINI}/gemini-embedding-001:embedContent`, body: { content } }, response: { body: { embedding: { values: [0.1, 0.2] } } } },
      { request: { url: `${GEMINI}/gemini-embedding-001:batchEmbedContents`, body: { requests: [{ model: 'models/gemini-embedding-001', content }] } }, response: { body: { embeddings: [{ values: [0.1] }] } } },
      { request: { url: `${GEMINI}/gemini-2.5-flash:countTokens`, body: { contents: [{ role: 'user', parts: [{ text: 'count' }] }] } }, response: { body: { totalTokens: 1 } } },
      {
        request: { url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse', body: { messages: [{ role: 'user', content: [{ text: 'Hi' }] }] } },
        response: { status: 429, body: { message: 'Too many requests' } },
      },
    ]);
    const { records } = await readTape(tape);
    const prices = loadPrices(undefined);
    expect(records.map((r) => callStats(r.value, prices)?.model)).toEqual(['gemini-embedding-001', 'gemini-embedding-001', 'gemini-2.5-flash', 'anthropic.claude-3-haiku-20240307-v1:0']);
    const s = tapeStats([{ name: 'url-model.tape', records: records.map((r) => r.value) }], prices);
    expect(s.rows.map((r) => [r.provider, r.model, r.calls])).toEqual([
      ['bedrock', 'anthropic.claude-3-haiku-20240307-v1:0', 1],
      ['gemini', 'gemini-2.5-flash', 1],
      ['gemini', 'gemini-embedding-001', 2],
    ]);
  });
});
