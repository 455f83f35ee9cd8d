// A Gemini or Bedrock call recorded streamed (the URL says so: `:streamGenerateContent`,
// `converse-stream`) and replayed plain, or the other way round, missed with the closest
// recording's difference on its own route ("message 0 (user) role differs: user vs system") or
// "no recording for ...": the miss now says the call was recorded streamed (or not).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-stream-switch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GEMINI = 'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash';
const geminiAnswer = (text: string) => ({ candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }], modelVersion: 'gemini-2.5-flash' });
const ask = (text: string) => JSON.stringify({ contents: [{ role: 'user', parts: [{ text }] }] });

/** Gemini as it answers: JSON for generateContent, server-sent events for streamGenerateContent?alt=sse. */
const upstream = (async (input: RequestInfo | URL) => {
  const url = String(input instanceof Request ? input.url : input);
  if (url.includes(':streamGenerateContent')) {
    const evs = ['Once ', 'upon a time.'].map((t) => `data: ${JSON.stringify(geminiAnswer(t))}\r\n\r\n`).join('');
    return new Response(evs, { headers: { 'content-type': 'text/event-stream' } });
  }
  return new Response(JSON.stringify(geminiAnswer('Plain.')), { headers: { 'content-type': 'application/json' } });
}) as typeof fetch;

async function tape(name: string, calls: [string, string][]): Promise<string> {
  const path = join(dir, name);
  const f = createFetch({ tape: path, mode: 'record', fetch: upstream });
  for (const [op, text] of calls) await (await f(`${GEMINI}:${op}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'AIzaSyDUMMYdummyDUMMYdummyDUMMYdummy0' }, body: ask(text) })).text();
  await f.close();
  return path;
}

describe('a call recorded streamed, replayed plain (and back)', () => {
  it('says so, with another plain recording on the route or none', async () => {
    for (const calls of [
      [['streamGenerateContent?alt=sse', 'Tell me a story']],
      [['generateContent', 'Other question'], ['streamGenerateContent?alt=sse', 'Tell me a story']],
    ] as [string, string][][]) {
      const path = await tape(`switch-${calls.length}.tape`, calls);
      const f = createFetch({ tape: path, mode: 'replay' });
      try {
        const res = await f(`${GEMINI}:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask('Tell me a story') });
        const text = await res.text();
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(text).toContain('this request was recorded streamed (streamGenerateContent) and is sent not streamed (generateContent)');
        expect(text).toMatch(/call it as it was recorded/i);
        // Another prompt is not told as a switch.
        const other = await (await f(`${GEMINI}:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask('Never asked') })).text();
        expect(other).not.toContain('recorded streamed');
      } finally {
        await f.close();
      }
    }
  });

  it('the other way round', async () => {
    const path = await tape('plain.tape', [['generateContent', 'Tell me a story']]);
    const f = createFetch({ tape: path, mode: 'replay' });
    try {
      const text = await (await f(`${GEMINI}:streamGenerateContent?alt=sse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask('Tell me a story') })).text();
      expect(text).toContain('this request was recorded not streamed (generateContent) and is sent streamed (streamGenerateContent)');
    } finally {
      await f.close();
    }
  });
});
