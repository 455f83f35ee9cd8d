// The Bedrock module through the registry, on streams the loopback Bedrock frames: whole streams
// are complete and assemble into the answer the non-streamed operation gives; a stream cut at any
// frame, with one bad bit, or carrying an exception is not complete; errors carry the exception
// name the AWS SDK maps to its classes; the model comes from the path, percent-decoded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
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
});
