// A JSON body labelled as a form (`curl -d '{…}'` without a content type) is taken for JSON on
// Ollama's routes, which read every body as JSON. Not on OpenAI's: OpenAI's API reads a body by
// its content type (its Responses endpoint takes real forms), so it reads such a body as a form
// and refuses the call (400 "you must provide a model parameter"). Keyed as JSON, the refused
// call and the SDK's answered one would be one request, and a replay would answer the curl call
// with an answer the API never gives it. Each keeps its own recording.
// The fake server answers as OpenAI's does; the JSON call is made with the real OpenAI SDK.
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { tapeSuite } from '../store/setup.ts';

const { fresh } = tapeSuite('openai-form-labelled-json');
const URL_ = 'https://api.openai.com/v1/chat/completions';
const ASK = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hi' }] };

/** OpenAI's server, as to the body: JSON when labelled JSON, a form when labelled a form. */
const openai = (async (input: string | URL | Request, init?: RequestInit) => {
  const req = new Request(input, init);
  const type = req.headers.get('content-type') ?? '';
  const text = await req.text();
  const body = type.startsWith('application/json') ? (JSON.parse(text) as { model?: string }) : Object.fromEntries(new URLSearchParams(text));
  if (typeof body.model !== 'string') {
    return new Response(JSON.stringify({ error: { message: 'you must provide a model parameter', type: 'invalid_request_error', param: null, code: null } }), { status: 400, headers: { 'content-type': 'application/json' } });
  }
  return new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: 'Hello!' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } });
}) as typeof fetch;

/** The request curl sends for `curl URL -H 'Authorization: …' -d '<json>'`. */
const curl = (f: typeof fetch) => f(URL_, { method: 'POST', headers: { authorization: 'Bearer sk-test', 'content-type': 'application/x-www-form-urlencoded' }, body: JSON.stringify(ASK) });

describe('a JSON body labelled as a form on OpenAI\u2019s route', () => {
  it('is not the SDK\u2019s JSON request: each replays the answer the API gave it', async () => {
    const tape = fresh();
    const rec = createFetch({ tape, mode: 'record', fetch: openai, recordErrors: true, onWarning: () => {}, summary: false });
    try {
      const sdk = new OpenAI({ apiKey: 'sk-test', baseURL: 'https://api.openai.com/v1', fetch: rec, maxRetries: 0 });
      expect((await sdk.chat.completions.create(ASK)).choices[0]!.message.content).toBe('Hello!');
      expect((await curl(rec)).status).toBe(400);
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay', onWarning: () => {}, summary: false });
    try {
      const refused = await curl(play);
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('you must provide a model parameter');
      const sdk = new OpenAI({ apiKey: 'sk-test', baseURL: 'https://api.openai.com/v1', fetch: play, maxRetries: 0 });
      expect((await sdk.chat.completions.create(ASK)).choices[0]!.message.content).toBe('Hello!');
    } finally {
      await play.close();
    }
  });
});
