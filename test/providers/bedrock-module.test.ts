// The Bedrock module through the registry, on streams the loopback Bedrock frames: whole streams
// are complete and assemble into the answer the non-streamed operation gives; a stream cut at any
// frame, with one bad bit, or carrying an exception is not complete; errors carry the exception
// name the AWS SDK maps to its classes; the model comes from the path, percent-decoded.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { backend } from '../../src/index.ts';
import { requestDigests, requestKeys } from '../../src/match/matcher.ts';
import { rawPathCounts } from '../../src/match/raw-keys.ts';
import { assembleAnswer, errorAnswerFor, responseComplete, routeOf } from '../../src/providers/index.ts';
import { encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';
import { MODEL, MODEL_ARN } from './bedrock-clients.ts';
import { startBedrock, type FakeBedrock } from './fake-bedrock.ts';

let fake: FakeBedrock;
beforeAll(async () => {
  fake = await startBedrock({ gapMs: 0 });
});
afterAll(() => fake.close());

const ES = 'application/vnd.amazon.eventstream';
const path = (op: string, model = MODEL) => `/model/${encodeURIComponent(model)}/${op}`;

async function call(op: string, body: unknown): Promise<{ type: string; bytes: Uint8Array }> {
  const res = await fetch(fake.url + path(op), { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer test' }, body: JSON.stringify(body) });
  return { type: res.headers.get('content-type') ?? '', bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** The byte offsets where each frame of an event stream ends. */
function frameEnds(bytes: Uint8Array): number[] {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ends: number[] = [];
  for (let at = 0; at < bytes.length; at += v.getUint32(at)) ends.push(at + v.getUint32(at));
  return ends;
}

const weather = { toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object' } } } };
const weatherSpec = { toolSpec: { name: 'get_weather', description: 'Weather for a city', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } } };

describe('Bedrock module', () => {
  it('takes the model from the path, percent-decoded (inference profiles, ARNs), for every operation', () => {
    for (const op of ['converse', 'converse-stream', 'invoke', 'invoke-with-response-stream']) {
      expect(routeOf({ method: 'POST', url: path(op, MODEL_ARN) })).toMatchObject({ model: MODEL_ARN, provider: { name: 'bedrock' } });
    }
    expect(routeOf({ method: 'POST', url: '/model/x/converse/more' })).toBeUndefined();
  });

  for (const tools of [false, true]) {
    it(`a ConverseStream ${tools ? 'tool call' : 'text answer'} assembles into the Converse answer; cut at any frame it is incomplete`, async () => {
      const body = { messages: [{ role: 'user', content: [{ text: 'assemble me' }] }], ...(tools ? { toolConfig: { tools: [weather] } } : {}) };
      const plain = JSON.parse(new TextDecoder().decode((await call('converse', body)).bytes));
      const s = await call('converse-stream', body);
      const req = { method: 'POST', url: path('converse-stream') };
      expect(responseComplete(req, s.type, s.bytes)).toBe(true);
      const got = assembleAnswer(req, s.type, s.bytes) as typeof plain;
      // The stand-in numbers its answers; the rest is the same answer.
      const renumber = (x: unknown) => JSON.parse(JSON.stringify(x).replace(/(Echo |tooluse_)\d+/g, '$1N'));
      if (!tools) got.output.message.content[0].text = got.output.message.content[0].text.trimEnd();
      expect(renumber(got)).toEqual(renumber(plain));
      const ends = frameEnds(s.bytes);
      for (const end of ends.slice(0, -1)) expect(responseComplete(req, s.type, s.bytes.subarray(0, end)), `cut after byte ${end}`).toBe(false);
      // Cut inside a frame, and one bad bit in the last frame's payload.
      expect(responseComplete(req, s.type, s.bytes.subarray(0, s.bytes.length - 3))).toBe(false);
      const bad = s.bytes.slice();
      bad[bad.length - 10]! ^= 1;
      expect(responseComplete(req, s.type, bad)).toBe(false);
    });
  }

  it('an invoke stream is whole with message_stop and assembles into the Anthropic message', async () => {
    const body = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 10, messages: [{ role: 'user', content: 'invoke assemble' }] };
    const plain = JSON.parse(new TextDecoder().decode((await call('invoke', body)).bytes));
    const s = await call('invoke-with-response-stream', body);
    const req = { method: 'POST', url: path('invoke-with-response-stream') };
    expect(responseComplete(req, s.type, s.bytes)).toBe(true);
    const got = assembleAnswer(req, s.type, s.bytes) as { content: { text: string }[]; stop_reason: string };
    expect(got.content[0]!.text.trimEnd().replace(/\d+/, 'N')).toBe(plain.content[0].text.replace(/\d+/, 'N'));
    expect(got.stop_reason).toBe('end_turn');
    const ends = frameEnds(s.bytes);
    expect(responseComplete(req, s.type, s.bytes.subarray(0, ends.at(-2)!))).toBe(false);
  });

  it('a stream carrying an exception message is incomplete; a JSON answer is for the chat rules to judge', () => {
    const req = { method: 'POST', url: path('converse-stream') };
    const exception = encodeEventStreamMessage({
      headers: [
        { name: ':exception-type', type: 'string', value: 'throttlingException' },
        { name: ':content-type', type: 'string', value: 'application/json' },
        { name: ':message-type', type: 'string', value: 'exception' },
      ],
      body: new TextEncoder().encode('{"message":"slow down"}'),
    });
    expect(responseComplete(req, ES, exception)).toBe(false);
    expect(responseComplete({ method: 'POST', url: path('converse') }, 'application/json', '{"output":{}}')).toBe(true);
  });

  it('errors name the exception the AWS SDK raises, by status, with tapedeck\'s message', () => {
    const e = new TapedeckError('E_MISS', 'the last user message differs');
    for (const [status, name] of [[400, 'ValidationException'], [404, 'ResourceNotFoundException'], [429, 'ThrottlingException'], [500, 'InternalServerException'], [502, 'ServiceUnavailableException'], [413, 'ValidationException']] as const) {
      const a = errorAnswerFor(path('converse'), {}, e, status);
      expect(a.headers?.['x-amzn-errortype']).toBe(name);
      expect(JSON.parse(a.body)).toMatchObject({ message: 'tapedeck miss: the last user message differs', tapedeck: { code: 'E_MISS' } });
    }
    // A SigV4-signed request to another path is answered in Bedrock's shape too.
    expect(errorAnswerFor('/other', { authorization: 'AWS4-HMAC-SHA256 Credential=x' }, e, 404).headers?.['x-amzn-errortype']).toBe('ResourceNotFoundException');
  });

  it('raw bytes of generated Converse bodies, in any member order and spelling, give the digests of the parsed body (mostly by the walk over the index)', () => {
    const word = fc.stringMatching(/^[a-z][a-z ]{0,12}$/);
    const block = fc.oneof(
      { weight: 5, arbitrary: fc.oneof(word, fc.constant('')).map((text) => ({ text })) },
      { weight: 1, arbitrary: fc.constant({ cachePoint: { type: 'default' } }) },
      { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 20 }).map((b) => ({ image: { format: 'png', source: { bytes: Buffer.from(b).toString('base64') } } })) },
      { weight: 1, arbitrary: word.map((t) => ({ reasoningContent: { reasoningText: { text: t, signature: 'sig' } } })) },
    );
    const turn = fc.oneof(
      fc.record({ kind: fc.constant('user' as const), blocks: fc.array(block, { maxLength: 3 }) }),
      fc.record({ kind: fc.constant('tools' as const), text: fc.oneof(fc.constant(''), word), calls: fc.array(fc.record({ name: fc.constantFrom('get_weather', 'lookup'), input: fc.dictionary(fc.constantFrom('city', 'n'), fc.oneof(word, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))) }), { minLength: 1, maxLength: 3 }), error: fc.boolean(), json: fc.boolean() }),
    );
    const shuffle = (v: unknown, r: number): unknown => {
      if (Array.isArray(v)) return v.map((x, i) => shuffle(x, r + i));
      if (v === null || typeof v !== 'object') return v;
      const e = Object.entries(v).map(([k, x], i) => [k, shuffle(x, r * 7 + i)] as const);
      return Object.fromEntries(r % 2 === 0 ? e.reverse() : e);
    };
    const before = rawPathCounts.converse;
    let runs = 0;
    fc.assert(
      fc.property(word, fc.array(turn, { maxLength: 6 }), fc.nat(), fc.boolean(), (system, turns, r, stream) => {
        let id = 0;
        const messages: unknown[] = [];
        for (const t of turns) {
          if (t.kind === 'user') {
            messages.push({ role: 'user', content: t.blocks });
            continue;
          }
          const ids = t.calls.map(() => `tooluse_${r}_${id++}`);
          messages.push({ role: 'assistant', content: [...(t.text ? [{ text: t.text }] : []), ...t.calls.map((c, i) => ({ toolUse: { toolUseId: ids[i], name: c.name, input: c.input } }))] });
          messages.push({
            role: 'user',
            content: [...ids.map((x) => ({ toolResult: { toolUseId: x, content: [t.json ? { json: { ok: true } } : { text: `result ${x}` }], ...(t.error ? { status: 'error' } : {}) } })), { text: 'go on' }],
          });
        }
        const body = {
          ...(system ? { system: [{ text: system }, { cachePoint: { type: 'default' } }] } : {}),
          messages,
          toolConfig: { tools: [weatherSpec, { toolSpec: { name: 'lookup', inputSchema: { json: { type: 'object' } } } }], ...(r % 3 === 0 ? { toolChoice: { auto: {} } } : {}) },
          inferenceConfig: { maxTokens: 100 + (r % 5), temperature: r % 2 === 0 ? 0 : 0.7 },
          ...(r % 4 === 0 ? { requestMetadata: { run: String(r) }, additionalModelRequestFields: { top_k: 5 } } : {}),
        };
        const endpoint = { method: 'POST', url: path(stream ? 'converse-stream' : 'converse', MODEL_ARN) };
        const { messages: _m, view: _v, ...want } = requestKeys(body, { endpoint });
        const text = JSON.stringify(shuffle(body, r), null, r % 3);
        expect(requestDigests(Buffer.from(text), { endpoint })).toEqual(want);
        runs++;
      }),
      { numRuns: 200 },
    );
    // The TypeScript backend has no index to walk: there the parse path answers all of them.
    if (backend() === 'js') expect(rawPathCounts.converse - before).toBe(0);
    else expect(rawPathCounts.converse - before).toBeGreaterThanOrEqual(runs * 0.9);
  });
});

