// `tapedeck inspect` rows of Google and Bedrock recordings: a Gemini stream recorded as its
// JSON array (no `alt=sse`) is listed as a stream, as the server-sent one is; an embeddings
// request lists its first input (Gemini's batchEmbedContents, Bedrock Titan's `inputText`), and
// Titan's row names the model its URL names.
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { tapeCommand } from '../../src/cli/tape.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startGemini } from '../proxy/fake-gemini.ts';
import { listenLoopback } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-inspect-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Bedrock's Titan text embeddings: InvokeModel with `inputText`, answered with the vector.
const titan = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const out = JSON.stringify({ embedding: [0.1, 0.2, 0.3], inputTextTokenCount: 1 });
    res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'r1', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});

/** tapedeck inspect's rows, as objects by column. */
async function inspect(tape: string): Promise<Record<string, string>[]> {
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  try {
    await tapeCommand('inspect', tape, undefined, { force: false, har: false, skipBad: false, review: false, textconv: false });
  } finally {
    spy.mockRestore();
  }
  const [head, ...rows] = out.trim().split('\n').filter((l) => l.includes('\t'));
  const cols = head!.split('\t');
  return rows.map((r) => Object.fromEntries(r.split('\t').map((c, i) => [cols[i]!, c])));
}

describe('tapedeck inspect on Gemini and Bedrock tapes', () => {
  it('lists the JSON-array stream as a stream, and embeddings by their first input', async () => {
    const g = await startGemini();
    const t = await listenLoopback(titan);
    const tape = join(dir, 'rows.tape');
    const f = createFetch({ tape, mode: 'record', summary: () => {} });
    const post = async (url: string, body: object) => (await f(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k', authorization: 'Bearer ABSKfake' }, body: JSON.stringify(body) })).text();
    try {
      await post(`${g.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`, { contents: [{ role: 'user', parts: [{ text: 'stream as events' }] }] });
      await post(`${g.url}/v1beta/models/gemini-2.5-flash:streamGenerateContent`, { contents: [{ role: 'user', parts: [{ text: 'stream as an array' }] }] });
      await post(`${g.url}/v1beta/models/gemini-embedding-001:batchEmbedContents`, { requests: ['alpha', 'beta'].map((text) => ({ model: 'models/gemini-embedding-001', content: { parts: [{ text }] } })) });
      await post(`${t.url}/model/amazon.titan-embed-text-v2%3A0/invoke`, { inputText: 'gamma', dimensions: 256 });
    } finally {
      await f.close();
      await g.close();
      await t.close();
    }
    const rows = await inspect(tape);
    expect(rows.map((r) => [r.stream, r.model, r['first user message']])).toEqual([
      ['sse', 'gemini-2.5-flash', 'stream as events'],
      ['json-array', 'gemini-2.5-flash', 'stream as an array'],
      ['-', 'gemini-embedding-001', 'alpha (+1 more)'],
      ['-', 'amazon.titan-embed-text-v2:0', 'gamma'],
    ]);
  });
});
