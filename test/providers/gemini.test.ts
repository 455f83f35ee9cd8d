// The Gemini module and the provider registry: one conversation keys to the same message and
// path hashes in Gemini, OpenAI chat and Anthropic shape (a property over generated
// conversations), streams assemble and are judged whole or cut, errors take Google's shape, and
// routes give the model and keep Gemini bodies off the chat-only raw-bytes walk.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { backend } from '../../src/index.ts';
import { requestDigests, requestKeys } from '../../src/match/matcher.ts';
import { rawPathCounts } from '../../src/match/raw-keys.ts';
import { assembleAnswer, errorModuleOf, normalizeRequest, rawKeysAllowed, responseComplete, routeOf } from '../../src/providers/index.ts';
import { gemini } from '../../src/providers/gemini.ts';
import { normalizeExchange } from '../../src/tree/response.ts';

type Turn =
  | { kind: 'user'; text: string; image?: Uint8Array }
  | { kind: 'calls'; text: string; calls: { name: string; args: Record<string, string | number> }[] }
  | { kind: 'results'; results: string[] };

const word = fc.stringMatching(/^[a-z][a-z ]{0,12}$/);
const turns = fc.array(
  fc.oneof(
    fc.record({ kind: fc.constant('user' as const), text: word, image: fc.option(fc.uint8Array({ minLength: 1, maxLength: 24 }), { nil: undefined }) }),
    fc.record({
      kind: fc.constant('calls' as const),
      text: fc.oneof(fc.constant(''), word),
      calls: fc.array(fc.record({ name: fc.constantFrom('get_weather', 'get_time', 'lookup'), args: fc.dictionary(fc.constantFrom('city', 'zone', 'n'), fc.oneof(word, fc.integer())) }), { minLength: 1, maxLength: 3 }),
    }),
  ),
  { minLength: 1, maxLength: 6 },
);

/** The turns as a well-formed conversation: every call turn is followed by its results. */
function conversation(ts: Turn[]): Turn[] {
  const out: Turn[] = [];
  for (const t of ts) {
    out.push(t);
    if (t.kind === 'calls') out.push({ kind: 'results', results: t.calls.map((c, i) => `result ${i} of ${c.name}`) });
  }
  return out;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

function asGemini(system: string, ts: Turn[]) {
  const contents = ts.map((t) => {
    if (t.kind === 'user') return { role: 'user', parts: [{ text: t.text }, ...(t.image ? [{ inlineData: { mimeType: 'image/png', data: b64(t.image) } }] : [])] };
    if (t.kind === 'calls') return { role: 'model', parts: [...(t.text ? [{ text: t.text }] : []), ...t.calls.map((c, i) => ({ functionCall: { name: c.name, args: c.args }, thoughtSignature: `sig${i}` }))] };
    const prev = ts[ts.indexOf(t) - 1] as Extract<Turn, { kind: 'calls' }>;
    return { role: 'user', parts: t.results.map((r, i) => ({ functionResponse: { name: prev.calls[i]!.name, response: { output: r } } })) };
  });
  return { systemInstruction: { parts: [{ text: system }] }, contents };
}

function asOpenAI(system: string, ts: Turn[]) {
  const messages: unknown[] = [{ role: 'system', content: system }];
  let k = 0;
  let ids: string[] = [];
  for (const t of ts) {
    if (t.kind === 'user') {
      messages.push({ role: 'user', content: [{ type: 'text', text: t.text }, ...(t.image ? [{ type: 'image_url', image_url: { url: `data:image/png;base64,${b64(t.image)}` } }] : [])] });
    } else if (t.kind === 'calls') {
      ids = t.calls.map(() => `call_${Math.random().toString(36).slice(2)}${k++}`);
      messages.push({ role: 'assistant', content: t.text || null, tool_calls: t.calls.map((c, i) => ({ id: ids[i], type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })) });
    } else {
      t.results.forEach((r, i) => messages.push({ role: 'tool', tool_call_id: ids[i], content: r }));
    }
  }
  return { model: 'gpt-4o', messages };
}

function asAnthropic(system: string, ts: Turn[]) {
  let ids: string[] = [];
  const messages = ts.map((t, j) => {
    if (t.kind === 'user') {
      return { role: 'user', content: [{ type: 'text', text: t.text }, ...(t.image ? [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(t.image) } }] : [])] };
    }
    if (t.kind === 'calls') {
      ids = t.calls.map((_, i) => `toolu_${j}_${i}`);
      return { role: 'assistant', content: [...(t.text ? [{ type: 'text', text: t.text }] : []), ...t.calls.map((c, i) => ({ type: 'tool_use', id: ids[i], name: c.name, input: c.args }))] };
    }
    return { role: 'user', content: t.results.map((r, i) => ({ type: 'tool_result', tool_use_id: ids[i], content: r })) };
  });
  return { model: 'claude-sonnet-4-5', system, max_tokens: 100, messages };
}

const ENDPOINT = { method: 'POST', url: '/v1beta/models/gemini-2.5-flash:generateContent' };

describe('one conversation in Gemini, OpenAI and Anthropic shape', () => {
  it('has the same message and path hashes (text, images by digest, tool calls and results)', () => {
    fc.assert(
      fc.property(word, turns, (system, ts) => {
        const conv = conversation(ts as Turn[]);
        const g = requestKeys(asGemini(system, conv), { endpoint: ENDPOINT });
        const o = requestKeys(asOpenAI(system, conv));
        const a = requestKeys(asAnthropic(system, conv));
        expect(g.provider).toBe('gemini');
        expect(g.messageHashes).toEqual(o.messageHashes);
        expect(g.pathHashes).toEqual(o.pathHashes);
        expect(g.pathHashes).toEqual(a.pathHashes);
      }),
      { numRuns: 150 },
    );
  });

  it('and differs when a call answers another call (pairing by name, not position)', () => {
    const conv = conversation([{ kind: 'calls', text: '', calls: [{ name: 'a', args: {} }, { name: 'b', args: {} }] }]);
    const body = asGemini('s', conv);
    const swapped = structuredClone(body);
    (swapped.contents[1]!.parts as unknown[]).reverse();
    const k1 = requestKeys(body, { endpoint: ENDPOINT });
    const k2 = requestKeys(swapped, { endpoint: ENDPOINT });
    // Results sent in the other order: each still answers its own call (same ids), so only the
    // order of the tool messages differs.
    expect(k2.messageHashes.slice(0, 2)).toEqual(k1.messageHashes.slice(0, 2));
    expect(new Set(k2.messageHashes.slice(2))).toEqual(new Set(k1.messageHashes.slice(2)));
    expect(k2.key).not.toBe(k1.key);
  });
});

describe('routes', () => {
  it('name the model and operation; Vertex AI paths and escapes too', () => {
    const r = routeOf({ method: 'POST', url: '/v1/projects/p/locations/us-central1/publishers/google/models/gemini%2D2.5-pro:streamGenerateContent?alt=sse' })!;
    expect([r.provider.name, r.route.operation, r.model, r.query.get('alt')]).toEqual(['gemini', 'streamGenerateContent', 'gemini-2.5-pro', 'sse']);
    expect(routeOf({ method: 'GET', url: '/v1beta/models/gemini-2.5-flash:generateContent' })).toBeUndefined();
    expect(routeOf({ method: 'POST', url: '/v1/chat/completions' })?.provider.name).toBe('openai');
  });

  it('keep Gemini bodies off the chat-only raw-bytes walk, with the same digests', () => {
    expect(rawKeysAllowed({ endpoint: ENDPOINT })).toBe(false);
    expect(rawKeysAllowed({ endpoint: { method: 'POST', url: '/v1/chat/completions' } })).toBe(true);
    const body = JSON.stringify(asGemini('s', [{ kind: 'user', text: 'hi' }]));
    const { messages: _m, view: _v, ...full } = requestKeys(JSON.parse(body), { endpoint: ENDPOINT });
    expect(requestDigests(Buffer.from(body), { endpoint: ENDPOINT })).toEqual(full);
    expect(full.provider).toBe('gemini');
    expect(normalizeRequest(JSON.parse(body), { endpoint: ENDPOINT }).view.model).toBe('gemini-2.5-flash');
  });

  it('rawKeysAllowed answers an endpoint as its route says (uncached), however endpoints alternate and repeat', () => {
    const endpoints = [
      ENDPOINT,
      { method: 'POST', url: '/v1/chat/completions' },
      { method: 'POST', url: '/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse' },
      { method: 'POST', url: '/api/chat' },
      { method: 'post', url: ENDPOINT.url },
      { method: 'POST', url: `${ENDPOINT.url}?alt=sse` },
      { method: 'POST', url: '/v1/messages' },
      { url: ENDPOINT.url },
      { method: 'GET', url: ENDPOINT.url },
    ];
    let allowed = 0;
    for (let i = 0; i < 64; i++) {
      const e = endpoints[(i * 5 + (i >> 3)) % endpoints.length]!;
      const r = routeOf(e);
      const want = r?.route.shape === undefined || r.provider.rawKeys;
      expect(rawKeysAllowed({ endpoint: { ...e } })).toBe(want);
      if (want) allowed++;
    }
    expect(allowed).toBeGreaterThan(8);
    expect(allowed).toBeLessThan(56);
  });

  it('raw bytes on a Gemini route: the same digests for any spelling, the same errors for any fault', () => {
    const body = asGemini('s', conversation([{ kind: 'calls', text: 'x', calls: [{ name: 'f', args: { n: 1.5 } }] }, { kind: 'user', text: 'y', image: new Uint8Array([1, 2, 3]) }]));
    const want = requestKeys(body, { endpoint: ENDPOINT });
    for (const text of [JSON.stringify(body), JSON.stringify(body, null, 2).replace(/1\.5/, '15e-1'), JSON.stringify(body).replace(/"text"/, '"t\\u0065xt"')]) {
      const got = requestDigests(Buffer.from(text), { endpoint: ENDPOINT });
      expect(got.key).toBe(want.key);
      expect(got.pathHashes).toEqual(want.pathHashes);
    }
    const codeOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as TapedeckError).code;
      }
      return 'none';
    };
    for (const bad of [
      '{"contents":[{"role":"user","parts":[{"text":"a","text":"b"}]}]}',
      '{"contents":[{"role":"user","parts":[{"text":"\\ud800"}]}]}',
      '{"contents":[],"generationConfig":{"seed":1e400}}',
      '{"contents":[], "labels": {"a":1,"a":2}}',
      '{"contents":"hi"}',
      '{"contents":[',
    ]) {
      const code = codeOf(() => requestKeys(Buffer.from(bad), { endpoint: ENDPOINT }));
      expect(code, bad).not.toBe('none');
      expect(codeOf(() => requestDigests(Buffer.from(bad), { endpoint: ENDPOINT })), bad).toBe(code);
    }
  });

  it('raw bytes of generated Gemini bodies, in any member order and spelling, give the digests of the parsed body (mostly by the walk over the index)', () => {
    const shuffle = (v: unknown, r: number): unknown => {
      if (Array.isArray(v)) return v.map((x, i) => shuffle(x, r + i));
      if (v === null || typeof v !== 'object') return v;
      const e = Object.entries(v).map(([k, x], i) => [k, shuffle(x, r * 7 + i)] as const);
      return Object.fromEntries(r % 2 === 0 ? e.reverse() : e);
    };
    const before = rawPathCounts.gemini;
    let runs = 0;
    fc.assert(
      fc.property(word, turns, fc.nat(), fc.constantFrom('', '?alt=sse'), (system, ts, r, alt) => {
        const conv = conversation(ts as Turn[]);
        const body = {
          ...asGemini(system, conv),
          tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'w', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, { name: 'lookup' }] }],
          generationConfig: { temperature: r % 3 === 0 ? 0 : 0.5, maxOutputTokens: 100 + (r % 5) },
          ...(r % 4 === 0 ? { safetySettings: [{ category: 'B', threshold: 'x' }, { category: 'A', threshold: 'y' }], labels: { run: String(r) } } : {}),
        };
        const endpoint = { method: 'POST', url: `/v1beta/models/gemini-2.5-flash:${alt ? 'streamGenerateContent' : 'generateContent'}${alt}` };
        const { messages: _m, view: _v, ...want } = requestKeys(body, { endpoint });
        const text = JSON.stringify(shuffle(body, r), null, r % 3);
        expect(requestDigests(Buffer.from(text), { endpoint })).toEqual(want);
        runs++;
      }),
      { numRuns: 150 },
    );
    // inlineData parts and thought signatures included: the walk answers nearly all of them (on
    // the wasm backends: the TypeScript engine has no index to walk).
    if (backend() === 'js') expect(rawPathCounts.gemini - before).toBe(0);
    else expect(rawPathCounts.gemini - before).toBeGreaterThanOrEqual(runs * 0.9);
  });

  it('the walk declines what it does not handle, and the parse path keys it the same', () => {
    const endpoint = ENDPOINT;
    const bodies = [
      { contents: [{ role: 'user', parts: [{ text: 'a', video_metadata: { x: 1 } }] }] },
      { contents: [{ role: 'user', parts: [{ text: 'a', functionCall: { name: 'f' } }] }] },
      { contents: [{ role: 'function', parts: [{ functionResponse: { name: 'f', response: { output: 'x' }, willContinue: true } }] }] },
      { contents: [{ role: 'model', parts: [{ executableCode: { code: 'x' } }, { thought: true }] }], tools: [{ googleSearch: {} }] },
      { system_instruction: { parts: [{ text: 's' }] }, contents: [] },
      { contents: [{ role: 'user', parts: [{ fileData: { fileUri: 'gs://b/x', mimeType: 'image/png', displayName: 'x' } }] }] },
      // Handled by the walk: empty texts, empty turns, results between texts, a system prompt of no parts.
      { systemInstruction: { parts: [{ text: '' }] }, contents: [{ role: 'user', parts: [{ text: '' }] }, { parts: [] }, { role: 'model' }] },
      { contents: [{ role: 'model', parts: [{ functionCall: { name: 'f' } }, { functionCall: { name: 'f', id: 'x' } }] }, { role: 'user', parts: [{ text: '' }, { functionResponse: { name: 'f', response: { output: '' } } }, { text: 'mid' }, { functionResponse: { name: 'f', id: 'x', response: { result: [] } } }, { text: '' }] }] },
      { contents: [{ role: 'user', parts: [{ functionResponse: { name: 'nobody', response: { name: 'nobody', content: { a: [1, 2.50] } } } }, { text: 'hmm', thought: true }, { text: '', thought: true }] }] },
    ];
    const before = rawPathCounts.gemini;
    for (const body of bodies) {
      const { messages: _m, view: _v, ...want } = requestKeys(body, { endpoint });
      expect(requestDigests(Buffer.from(JSON.stringify(body)), { endpoint }), JSON.stringify(body)).toEqual(want);
    }
    expect(rawPathCounts.gemini - before).toBe(backend() === 'js' ? 0 : 3);
  });

  it('choose the error shape by path or by the SDK headers', () => {
    expect(errorModuleOf('/v1beta/models/x:countTokens', {}).name).toBe('gemini');
    expect(errorModuleOf('/somewhere', { 'x-goog-api-client': 'google-genai-sdk/1' }).name).toBe('gemini');
    expect(errorModuleOf('/v1/messages', {}).name).toBe('anthropic');
    expect(errorModuleOf('/v1/chat/completions', {}).name).toBe('openai');
    const body = JSON.parse(gemini.errorAnswer(new TapedeckError('E_MISS', 'message 0 (user) text differs'), 404).body);
    expect(body).toEqual({
      error: { code: 404, message: 'tapedeck miss: message 0 (user) text differs', status: 'NOT_FOUND', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'E_MISS', domain: 'tapedeck' }] },
    });
    expect(JSON.parse(gemini.errorAnswer(new TapedeckError('E_JSON', 'bad'), 400).body).error.status).toBe('INVALID_ARGUMENT');
  });
});

describe('streams', () => {
  const chunk = (parts: unknown[], finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) }], modelVersion: 'gemini-2.5-flash' });
  const chunks = [chunk([{ text: 'Hel' }]), chunk([{ text: 'lo' }]), chunk([{ functionCall: { name: 'f', args: {} }, thoughtSignature: 's' }]), chunk([{ text: '!' }], 'STOP')];
  const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join('');
  const array = `[${chunks.map((c) => JSON.stringify(c, null, 2)).join(',\r\n')}]`;
  const stream = { method: 'POST', url: '/v1beta/models/gemini-2.5-flash:streamGenerateContent' };
  const sseRoute = { ...stream, url: `${stream.url}?alt=sse` };

  it('assemble into the answer a plain call gives, from events or the JSON array', () => {
    const want = { candidates: [{ content: { role: 'model', parts: [{ text: 'Hello' }, { functionCall: { name: 'f', args: {} }, thoughtSignature: 's' }, { text: '!' }] }, index: 0, finishReason: 'STOP' }], modelVersion: 'gemini-2.5-flash' };
    expect(assembleAnswer(sseRoute, 'text/event-stream', sse)).toEqual(want);
    expect(assembleAnswer(stream, 'application/json; charset=UTF-8', array)).toEqual(want);
  });

  it('are whole only with a final finishReason (or a blocked prompt), never cut or with an error', () => {
    expect(responseComplete(sseRoute, 'text/event-stream', sse)).toBe(true);
    expect(responseComplete(stream, 'application/json', array)).toBe(true);
    const cut = chunks.slice(0, 3);
    expect(responseComplete(sseRoute, 'text/event-stream', cut.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join(''))).toBe(false);
    expect(responseComplete(stream, 'application/json', array.slice(0, -1))).toBe(false);
    expect(responseComplete(stream, 'application/json', `[${JSON.stringify(chunks[0])}]`)).toBe(false);
    expect(responseComplete(stream, 'application/json', `[${JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' } })}]`)).toBe(true);
    expect(responseComplete(sseRoute, 'text/event-stream', `data: ${JSON.stringify(chunks[3])}\r\n\r\ndata: {"error":{"code":500}}\r\n\r\n`)).toBe(false);
    // An error answer on a stream route is one JSON object: judged by its status, not as a stream.
    expect(responseComplete(stream, 'application/json', '{"error":{"code":400,"message":"x","status":"INVALID_ARGUMENT"}}')).toBe(true);
  });
});

describe('the conversation tree', () => {
  it('continues a Gemini answer where the next request continues it', () => {
    const ask = { contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }], tools: [{ functionDeclarations: [{ name: 'get_weather' }] }] };
    const answer = { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'x1' }] }, finishReason: 'STOP' }] };
    const x = normalizeExchange(ask, answer);
    const next = { ...ask, contents: [...ask.contents, answer.candidates[0]!.content, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: '21C' } } }] }] };
    const n = normalizeRequest(next);
    expect(x.responses[0]).toEqual(n.messages.slice(1, 2));
    expect(n.messages[2]).toEqual({ role: 'tool', content: [{ type: 'tool_result', id: 'call_0', content: [{ type: 'text', text: '21C' }] }] });
  });
});
