// A request whose route has no recordings while the same method and path were recorded with
// another query: the miss says what in the query differs. A Gemini call recorded with its key in
// the query (a page's fetch, curl, a HAR import: `?key=` kept as `key=[REDACTED]` in the route)
// and replayed through @google/genai, which sends the key in `x-goog-api-key`, is told to send
// the key the way it was recorded, not "no recording ... re-record" (which would send the user
// to the live API).
import { ApiError, GoogleGenAI } from '@google/genai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startGemini, type FakeGemini } from './fake-gemini.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-query-miss-'));
const KEY = 'AIza' + 'SyQu3ry-Ab3dEf6hIj9kLm2nOp5qRs8tUv1';
let gemini: FakeGemini;
let upstream: Upstream;
beforeAll(async () => {
  gemini = await startGemini();
  upstream = await startUpstream();
});
afterAll(async () => {
  await gemini.close();
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

const missOf = async (p: Promise<unknown>): Promise<string> => {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeDefined();
  return (e as Error).message;
};

it('a Gemini call recorded with ?key= and replayed through @google/genai (x-goog-api-key): send the key the way it was recorded', async () => {
  const tape = join(dir, 'gemini-key.tape');
  const url = `${gemini.url}/v1beta/models/gemini-2.5-flash:generateContent`;
  const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hello Gemini' }] }] });
  const rec = createFetch({ tape, mode: 'record' });
  const live = await rec(`${url}?key=${KEY}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  expect(live.status).toBe(200);
  await rec.close();

  const play = createFetch({ tape, mode: 'replay', onWarning: () => {} });
  try {
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: gemini.url, fetch: play } as never });
    const message = await missOf(ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hello Gemini' }));
    expect(message).toContain('recorded with the key in the query (?key=), sent without it');
    expect(message).not.toContain('no recording for');
    // The same call with the key in the query again replays.
    const again = await play(`${url}?key=${KEY}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(again.status).toBe(200);
  } finally {
    await play.close().catch(() => {});
  }
  void ApiError;
});

it('another query value or name: the names and values that differ', async () => {
  const tape = join(dir, 'query.tape');
  const rec = createFetch({ tape, mode: 'record' });
  expect((await rec(`${upstream.url}/v1/models?limit=10&order=asc`)).status).toBeLessThan(500);
  await rec.close();
  const play = createFetch({ tape, mode: 'replay', onWarning: () => {} });
  try {
    const r = await play(`${upstream.url}/v1/models?limit=20&order=asc&after=x`);
    const text = await r.text();
    expect(text).toContain('query differs: limit=20 vs limit=10 in the recordings, after=x sent (recorded without it) for GET /v1/models');
  } finally {
    await play.close().catch(() => {});
  }
});

// The route the request came on had recordings of its own (another question, sent with the key
// in the header): the miss said "message 0 (user) text differs" against that one, sending the
// user after a prompt change, while the tape holds this very request with the key in the query.
it('the same call recorded with ?key= beside another call recorded with the header: says how the key was sent, not that the text differs', async () => {
  const tape = join(dir, 'gemini-key-both.tape');
  const url = `${gemini.url}/v1beta/models/gemini-2.5-flash:generateContent`;
  const asked = (text: string) => JSON.stringify({ contents: [{ role: 'user', parts: [{ text }] }] });
  const rec = createFetch({ tape, mode: 'record' });
  expect((await rec(`${url}?key=${KEY}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: asked('question A') })).status).toBe(200);
  expect((await rec(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': KEY }, body: asked('question B') })).status).toBe(200);
  await rec.close();

  const play = createFetch({ tape, mode: 'replay', onWarning: () => {} });
  try {
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: gemini.url, fetch: play } as never });
    const message = await missOf(ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'question A' }));
    expect(message).toContain('recorded with the key in the query (?key=), sent without it');
    expect(message).not.toContain('text differs');
    // Question B, recorded as the SDK sends it, replays.
    const b = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'question B' });
    expect(b.text).toBeTruthy();
  } finally {
    await play.close().catch(() => {});
  }
});
