// The Ollama shapes: request keys against the vectors of an independent implementation
// (scripts/reference-key-ollama.py on top of scripts/reference-key.py), the same conversation in
// Ollama and OpenAI or Anthropic shape with the same message and path hashes, and NDJSON answers.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend, canonicalize, TapedeckError } from '../../src/index.ts';
import fc from 'fast-check';
import { requestDigests, requestKeys } from '../../src/match/matcher.ts';
import { rawPathCounts } from '../../src/match/raw-keys.ts';
import { assembleAnswer, errorAnswerFor, responseComplete } from '../../src/providers/index.ts';
import { ollamaAsOpenAI } from '../../src/providers/ollama.ts';
import type { NormalizeOptions } from '../../src/providers/types.ts';
import { hasPython, regenerate } from '../vectors/regenerate.ts';

interface Vector {
  name: string;
  endpoint: string;
  body: unknown;
  options?: NormalizeOptions;
  sameAs?: string;
  expect?: { provider: string; view: string; key: string; messageHashes: string[]; pathHashes: string[]; signature: unknown; signatureDigest: string };
  error?: string;
}

const root = join(import.meta.dirname, '../..');
const file = join(root, 'test/vectors/request-keys-ollama.json');
const doc = JSON.parse(readFileSync(file, 'utf8')) as { count: number; vectors: Vector[] };
const decoder = new TextDecoder();
const endpointOf = (ep: string) => (ep === 'openai' ? undefined : { method: 'POST', url: `/api/${ep}` });

describe(`Ollama request key vectors (${backend()})`, () => {
  it('every vector has an expectation, and every cross-shape pair has equal path hashes', () => {
    expect(doc.vectors.length).toBe(doc.count);
    const byName = new Map(doc.vectors.map((v) => [v.name, v]));
    let pairs = 0;
    for (const v of doc.vectors) {
      expect(v.expect !== undefined || v.error !== undefined, v.name).toBe(true);
      if (v.sameAs) {
        pairs++;
        expect(v.expect!.messageHashes, v.name).toEqual(byName.get(v.sameAs)!.expect!.messageHashes);
        expect(v.expect!.pathHashes, v.name).toEqual(byName.get(v.sameAs)!.expect!.pathHashes);
      }
    }
    expect(pairs).toBeGreaterThanOrEqual(4);
  });

  for (const v of doc.vectors) {
    it(v.name, () => {
      const endpoint = endpointOf(v.endpoint);
      const opts = { ...v.options, ...(endpoint ? { endpoint } : {}) };
      if (v.error !== undefined) {
        expect(() => requestKeys(v.body, opts)).toThrow(TapedeckError);
        return;
      }
      const r = requestKeys(v.body, opts);
      const e = v.expect!;
      expect(r.provider).toBe(e.provider);
      expect(decoder.decode(canonicalize(r.view))).toBe(e.view);
      expect(r.key).toBe(e.key);
      expect(r.messageHashes).toEqual(e.messageHashes);
      expect(r.pathHashes).toEqual(e.pathHashes);
      expect(r.signatureDigest).toBe(e.signatureDigest);
      // From raw bytes (the matcher's path on a proxy): the same digests.
      const d = requestDigests(new TextEncoder().encode(JSON.stringify(v.body)), opts);
      expect(d.key).toBe(e.key);
      expect(d.pathHashes).toEqual(e.pathHashes);
    });
  }

  it.skipIf(!hasPython)('the Python reference regenerates the committed vectors exactly (skipped where python3 is missing)', () => {
    const r = regenerate(join(root, 'scripts/reference-key-ollama.py'), file);
    expect(r.status, r.stderr).toBe(0);
    expect(r.same).toBe(true);
  });
});

describe('Ollama keying', () => {
  const chat = { model: 'llama3.2', messages: [{ role: 'user', content: 'hi' }] };
  const at = (ep: string) => ({ endpoint: { method: 'POST', url: `/api/${ep}` } });

  it('never mutates the body, and a __proto__ member stays data', () => {
    const body = JSON.parse('{"model":"m","messages":[{"role":"user","content":"x","__proto__":{"a":1}}],"options":{"__proto__":{"b":2},"seed":1},"__proto__":{"c":3}}') as Record<string, unknown>;
    const before = JSON.stringify(body);
    const out = ollamaAsOpenAI('chat', body) as Record<string, unknown>;
    expect(JSON.stringify(body)).toBe(before);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(requestKeys(body, at('chat')).key).not.toBe(requestKeys({ ...chat, model: 'm' }, at('chat')).key);
  });

  it('a body on an Ollama route is keyed as Ollama, the same body elsewhere by the chat rules', () => {
    const body = { ...chat, keep_alive: '5m', options: { seed: 1 } };
    expect(requestKeys(body, at('chat')).provider).toBe('ollama-chat');
    expect(requestKeys(body).provider).toBe('generic');
    // keep_alive and runner options are out of the Ollama key; seed is in.
    expect(requestKeys({ ...body, keep_alive: 0, options: { seed: 1, num_thread: 2 } }, at('chat')).key).toBe(requestKeys(body, at('chat')).key);
    expect(requestKeys({ ...body, options: { seed: 2 } }, at('chat')).key).not.toBe(requestKeys(body, at('chat')).key);
  });

  it('stream absent and stream true are one request; stream false another', () => {
    const a = requestKeys(chat, at('chat')).key;
    expect(requestKeys({ ...chat, stream: true }, at('chat')).key).toBe(a);
    expect(requestKeys({ ...chat, stream: false }, at('chat')).key).not.toBe(a);
  });
});

describe('Ollama answers', () => {
  const ep = { method: 'POST', url: '/api/chat' };
  const lines = [
    { model: 'qwen3', message: { role: 'assistant', content: '', thinking: 'Let me ' }, done: false },
    { model: 'qwen3', message: { role: 'assistant', content: '', thinking: 'see.' }, done: false },
    { model: 'qwen3', message: { role: 'assistant', content: 'Hel' }, done: false },
    { model: 'qwen3', message: { role: 'assistant', content: 'lo', tool_calls: [{ function: { name: 'f', arguments: { a: 1 } } }] }, done: false },
    { model: 'qwen3', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', eval_count: 9, total_duration: 5 },
  ];
  const ndjson = lines.map((l) => `${JSON.stringify(l)}\n`).join('');

  it('a streamed chat assembles into the answer stream: false gives', () => {
    expect(assembleAnswer(ep, 'application/x-ndjson', ndjson)).toEqual({
      model: 'qwen3',
      message: { role: 'assistant', content: 'Hello', thinking: 'Let me see.', tool_calls: [{ function: { name: 'f', arguments: { a: 1 } } }] },
      done: true,
      done_reason: 'stop',
      eval_count: 9,
      total_duration: 5,
    });
    const gen = '{"response":"A","done":false}\n{"response":"B","done":false}\n{"response":"","done":true,"context":[1],"done_reason":"stop"}\n';
    expect(assembleAnswer({ method: 'POST', url: '/api/generate' }, 'application/x-ndjson', gen)).toEqual({ response: 'AB', done: true, context: [1], done_reason: 'stop' });
  });

  it('a stream without its final done line, or with an error line, is not whole and assembles to nothing', () => {
    const cut = lines.slice(0, -1).map((l) => `${JSON.stringify(l)}\n`).join('');
    expect(responseComplete(ep, 'application/x-ndjson', ndjson)).toBe(true);
    expect(responseComplete(ep, 'application/x-ndjson', cut)).toBe(false);
    expect(responseComplete(ep, 'application/x-ndjson', `${cut}{"error":"an error was encountered while running the model"}\n`)).toBe(false);
    expect(assembleAnswer(ep, 'application/x-ndjson', cut)).toBeUndefined();
    // A JSON answer (stream: false) is judged by nothing here: whole.
    expect(responseComplete(ep, 'application/json', '{"done":true}')).toBe(true);
  });

  it('a miss is { error } with the one-line diagnosis, on every Ollama path', () => {
    const e = new TapedeckError('E_MISS', 'message 0 (user) text differs from the closest recording', { key: 'ab' });
    for (const path of ['/api/chat', '/api/embed', '/api/tags', '/api/show']) {
      const body = JSON.parse(errorAnswerFor(path, {}, e, 404).body) as { error: string; tapedeck: { code: string } };
      expect(body.error, path).toBe('tapedeck miss: message 0 (user) text differs from the closest recording');
      expect(body.tapedeck.code).toBe('E_MISS');
    }
  });
});

describe(`Ollama keys from raw bytes (${backend()})`, () => {
  const at = { endpoint: { method: 'POST', url: '/api/chat' } };
  const name = fc.constantFrom('get_weather', 'search', 'other');
  const call = fc.record({ function: fc.record({ name, arguments: fc.dictionary(fc.constantFrom('city', 'q', 'n'), fc.oneof(fc.string(), fc.integer())) }) }, { requiredKeys: ['function'] });
  const callWithId = fc.oneof(call, call.map((c) => ({ ...c, id: 'call_given' })));
  const message = fc.oneof(
    fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: fc.string() }),
    fc.record({ role: fc.constant('assistant'), content: fc.string(), tool_calls: fc.array(callWithId, { maxLength: 3 }) }),
    fc.record({ role: fc.constant('tool'), content: fc.string(), tool_name: fc.option(name, { nil: undefined }) }, { requiredKeys: ['role', 'content'] }),
    fc.record({ role: fc.constant('tool'), content: fc.string(), tool_call_id: fc.constantFrom('call_given', null), tool_name: name }),
    fc.record({ role: fc.constant('user'), content: fc.string(), tool_name: name, id: fc.string() }, { requiredKeys: ['role', 'content'] }),
    fc.record({ role: fc.constant('assistant'), content: fc.oneof(fc.string(), fc.constant([{ type: 'text', text: 'part' }])), thinking: fc.constantFrom('', null, 'hm', 7) }, { requiredKeys: ['role', 'thinking'] }),
    fc.record({ role: fc.constant('user'), content: fc.string(), images: fc.constantFrom([], null) }),
  );
  const body = fc.record(
    {
      model: fc.constant('llama3.2'),
      messages: fc.array(message, { maxLength: 8 }),
      stream: fc.constantFrom(true, false),
      keep_alive: fc.constantFrom('5m', 0),
      options: fc.record({ temperature: fc.constantFrom(0, 0.7), seed: fc.integer(), num_thread: fc.integer(), stop: fc.constantFrom('\n', ['a']) }, { requiredKeys: [] }),
      format: fc.constantFrom('json', { type: 'object' }),
      tools: fc.constant([{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }]),
      system: fc.constant('moved under ollama'),
      context: fc.constant([1, 2]),
      functions: fc.constant([{ name: 'legacy' }]),
    },
    { requiredKeys: ['model', 'messages'] },
  );

  it('the raw-bytes walk gives the reference digests for Ollama chat bodies, and answers most of them', () => {
    const before = rawPathCounts.ollama;
    const beforeCore = rawPathCounts.ollamaCore;
    let runs = 0;
    fc.assert(
      fc.property(body, fc.constantFrom(undefined, ['seed'], ['format', 'keep_alive']), (b, ignoreArgs) => {
        runs++;
        const opts = ignoreArgs ? { ...at, ignoreArgs } : at;
        const want = requestKeys(b, opts);
        const got = requestDigests(new TextEncoder().encode(JSON.stringify(b)), opts);
        expect(got.provider).toBe('ollama-chat');
        expect(got.key).toBe(want.key);
        expect(got.pathHashes).toEqual(want.pathHashes);
        expect(got.signatureDigest).toBe(want.signatureDigest);
      }),
      { numRuns: 300 },
    );
    // The TypeScript engine has no structural index: every body takes the reference there.
    // Elsewhere the walk declines only thinking text, a kept tool_name and non-empty images,
    // which the generator puts in most bodies of several messages.
    if (backend() !== 'js') expect(rawPathCounts.ollama - before).toBeGreaterThan(runs * 0.2);
    // The core writes those bodies' views itself; the walk takes only what it declines.
    if (backend() !== 'js') expect(rawPathCounts.ollamaCore - beforeCore).toBeGreaterThan(runs * 0.2);
  });

  it.skipIf(backend() === 'js')('conversations of text, thinking, tool calls and tool results are keyed from the bytes', () => {
    for (const name of ['chat: tool calls get positional ids, results link by tool_name', 'chat: thinking part first', 'chat: tool calls with ids (newer servers)']) {
      const v = doc.vectors.find((x) => x.name === name)!;
      const before = rawPathCounts.ollama;
      const beforeCore = rawPathCounts.ollamaCore;
      expect(requestDigests(new TextEncoder().encode(JSON.stringify(v.body)), at).key, name).toBe(v.expect!.key);
      expect(rawPathCounts.ollama, name).toBe(before + 1);
      expect(rawPathCounts.ollamaCore, name).toBe(beforeCore + 1);
    }
  });
});
