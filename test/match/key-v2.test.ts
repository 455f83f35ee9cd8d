// Request key spec version 2: the defects an independent implementation of the docs found in
// version 1, the shapes popular clients hand to a cache (embeddings, Vercel AI SDK call options,
// LangChain messages), the same path hashes across providers with tools, and property tests
// over every shape (docs/hash-spec.md, "Request key").
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backend, hashValue, pathHashes } from '../../src/index.ts';
import { requestKeys } from '../../src/match/matcher.ts';
import { normalizeRequest, SHAPE_DEFAULTS } from '../../src/providers/normalize.ts';
import { rng } from '../reference.ts';
import { errorOf } from '../helpers.ts';
import { respell } from './respell.ts';

type Obj = Record<string, any>;
const key = (body: unknown, opts?: Parameters<typeof normalizeRequest>[1]) => hashValue(normalizeRequest(body, opts).view);
const call = (args: string) => ({
  model: 'gpt-4o',
  messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: args } }] }],
});
const argsOf = (body: unknown) => (normalizeRequest(body).view as Obj).messages[0].content[0];

describe(`request key v2 defects (${backend()})`, () => {
  it('tool-call arguments that are not I-JSON key as text, and distinctly', () => {
    // Lone surrogate escapes, a literal that overflows a double, duplicate names.
    for (const args of ['{"a":"\\ud800"}', '{"a":1e400}', '{"a":1,"a":2}', '[-1e999]']) {
      expect(argsOf(call(args)), args).toEqual({ type: 'tool_call', id: 'call_0', name: 'f', argumentsText: args });
      expect(requestKeys(call(args)).key).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(key(call('{"a":1,"a":2}'))).not.toBe(key(call('{"a":2}')));
    expect(key(call('{"a":"\\ud800"}'))).not.toBe(key(call('{"a":"\\ud801"}')));
    expect(key(call('{"a":1e400}'))).not.toBe(key(call('{"a":2e400}')));
    // I-JSON text still compares as a value: spelling does not matter.
    expect(key(call('{"b": 1.0, "a": [1E2]}'))).toBe(key(call('{"a":[100],"b":1}')));
  });

  it('a body given as JSON text must be I-JSON: duplicate names are E_DUPLICATE_KEY, not last-wins', () => {
    const text = '{"model":"a","model":"b","messages":[]}';
    expect(errorOf(() => requestKeys(text)).code).toBe('E_DUPLICATE_KEY');
    expect(errorOf(() => requestKeys(new TextEncoder().encode(text))).code).toBe('E_DUPLICATE_KEY');
    expect(errorOf(() => requestKeys('{"model":"a","messages":[{"role":"user","content":"\\ud800"}]}')).code).toBe('E_LONE_SURROGATE');
    // Invalid UTF-8 where a token is expected is E_JSON; inside a string it is E_UTF8.
    expect(errorOf(() => requestKeys(Uint8Array.from([0x7b, 0xff, 0x7d]))).code).toBe('E_JSON');
    expect(errorOf(() => requestKeys(Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]))).code).toBe('E_UTF8');
  });

  it('media types drop their parameters everywhere (Anthropic, generic and data URLs alike)', () => {
    const b64 = Buffer.from('hello').toString('base64');
    const doc = (source: Obj) => ({ model: 'm', messages: [{ role: 'user', content: [{ type: 'document', source }] }] });
    const plain = key(doc({ type: 'base64', media_type: 'text/plain', data: b64 }));
    expect(key(doc({ type: 'base64', media_type: 'text/plain; charset=utf-8', data: b64 }))).toBe(plain);
    expect(key(doc({ type: 'base64', media_type: 'Text/Plain;Charset=UTF-8', data: b64 }))).toBe(plain);
    expect(key(doc({ type: 'url', url: `data:text/plain;charset=utf-8;base64,${b64}` }))).toBe(plain);
    const generic = (mediaType: string) => key({ messages: [{ role: 'user', content: [{ type: 'image', data: b64, mediaType }] }], context: {} });
    expect(generic('image/png; q=1')).toBe(generic('image/png'));
  });

  it('a tool with type: null keys like the same tool without type, and stays idempotent', () => {
    const tool = { name: 'f', description: 'd', input_schema: { type: 'object' } };
    const body = (t: Obj) => ({ model: 'm', system: 's', messages: [{ role: 'user', content: 'x' }], tools: [t] });
    expect(key(body({ ...tool, type: null }))).toBe(key(body(tool)));
    const r = normalizeRequest(body({ ...tool, type: null }));
    expect(normalizeRequest(r.view).view).toEqual(r.view);
    expect((r.view as Obj).tools).toEqual([{ name: 'f', description: 'd', parameters: { type: 'object' } }]);
  });

  it('role: null and text: null are dropped like every null member', () => {
    const v = normalizeRequest({ messages: [{ role: null, content: [{ type: 'text', text: null }, { type: 'text', text: 'a' }] }], context: {} }).view as Obj;
    expect(v.messages).toEqual([{ content: [{ type: 'text', text: 'a' }] }]);
    expect(key({ messages: [{ role: 'user', content: [{ type: 'text', text: null }] }], context: {} })).toBe(
      key({ messages: [{ role: 'user', content: [] }], context: {} }),
    );
  });

  it("volatileKeys apply to the system message's own members too", () => {
    const body = { model: 'm', system: 'Be brief.', messages: [{ role: 'user', content: 'x' }] };
    const r = normalizeRequest(body, { volatileKeys: ['role'] });
    expect((r.view as Obj).messages).toEqual([{ content: [{ type: 'text', text: 'Be brief.' }] }, { content: [{ type: 'text', text: 'x' }] }]);
    expect(normalizeRequest(r.view, { volatileKeys: ['role'] }).view).toEqual(r.view);
  });

  it('embeddings: array input is keyed per the embeddings shape; the SDK user id never changes the key', () => {
    const body = { model: 'text-embedding-3-small', input: ['hello', 'world'], encoding_format: 'float' };
    const r = requestKeys({ ...body, user: 'user-1' });
    expect(r.provider).toBe('openai-embeddings');
    expect(r.view).toEqual({ model: 'text-embedding-3-small', input: ['hello', 'world'], options: {} });
    expect(r.key).toBe(requestKeys({ ...body, user: 'user-2' }).key);
    expect(r.key).toBe(requestKeys({ model: 'text-embedding-3-small', input: ['hello', 'world'] }).key);
    expect(r.key).not.toBe(requestKeys({ ...body, input: ['world', 'hello'] }).key);
    expect(requestKeys({ ...body, dimensions: 64, seed: 1 }, { ignoreArgs: ['seed'] }).key).toBe(requestKeys({ ...body, dimensions: 64 }).key);
    // One input is a batch of one, whether a string or a token list.
    expect(requestKeys({ model: 'text-embedding-3-small', input: 'hi' }).key).toBe(requestKeys({ model: 'text-embedding-3-small', input: ['hi'] }).key);
    expect(requestKeys({ model: 'text-embedding-3-small', input: [1, 2] }).key).toBe(requestKeys({ model: 'text-embedding-3-small', input: [[1, 2]] }).key);
    expect(r.messageHashes).toEqual(pathHashes(['hello', 'world']).messageHashes);
  });

  it('Vercel AI SDK call options { model, prompt } and { model, system, prompt } key like the chat request', () => {
    const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    expect(requestKeys({ model: 'gpt-4o', prompt: 'hi' }).key).toBe(requestKeys(chat).key);
    expect(requestKeys({ model: 'gpt-4o', system: 'Be brief.', prompt: 'hi' }).key).toBe(
      requestKeys({ model: 'gpt-4o', messages: [{ role: 'system', content: 'Be brief.' }, ...chat.messages] }).key,
    );
    // A model object is keyed by its modelId; a language-model prompt (AI SDK 5 parts) too.
    expect(requestKeys({ model: { modelId: 'gpt-4o', provider: 'openai.chat', doGenerate() {} }, prompt: 'hi' }).key).toBe(requestKeys(chat).key);
    const v2 = {
      model: 'gpt-4o',
      prompt: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'x1', toolName: 'weather', input: { city: 'Paris' } }] },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'x1', toolName: 'weather', output: { type: 'text', value: '21C' } }] },
      ],
      tools: [{ type: 'function', name: 'weather', inputSchema: { type: 'object' } }],
    };
    const openai = {
      model: 'gpt-4o',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_9', content: '21C' },
      ],
      tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
    };
    expect(requestKeys(v2).key).toBe(requestKeys(openai).key);
  });

  it('LangChain messages (instances and their serialized form) key like the OpenAI messages they stand for', () => {
    class Msg {
      lc_namespace = ['langchain_core', 'messages'];
      additional_kwargs = {};
      response_metadata = { tokenUsage: 1 };
      id = 'run-123';
      constructor(
        private readonly kind: string,
        public content: unknown,
        extra: Obj = {},
      ) {
        Object.assign(this, extra);
      }
      _getType() {
        return this.kind;
      }
    }
    const lc = [
      new Msg('system', 'Be brief.'),
      new Msg('human', 'Weather?'),
      new Msg('ai', '', { tool_calls: [{ name: 'weather', args: { city: 'Paris' }, id: 'call_x', type: 'tool_call' }] }),
      new Msg('tool', '21C', { tool_call_id: 'call_x' }),
    ];
    const serialized = JSON.parse(JSON.stringify(lc.map((m) => ({ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', `${m._getType() === 'human' ? 'Human' : m._getType() === 'ai' ? 'AI' : m._getType() === 'tool' ? 'Tool' : 'System'}Message`], kwargs: { ...m } }))));
    const openai = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'c', content: '21C' },
      ],
    };
    expect(requestKeys({ model: 'gpt-4o', messages: lc }).key).toBe(requestKeys(openai).key);
    expect(requestKeys({ model: 'gpt-4o', messages: serialized }).key).toBe(requestKeys(openai).key);
  });

  it('the same conversation with tools has the same path hashes in OpenAI chat, Anthropic, Responses and the AI SDK', () => {
    const openai = {
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '21C' },
        { role: 'tool', tool_call_id: 'call_b', content: '25C' },
        { role: 'user', content: 'Thanks. Tomorrow?' },
      ],
    };
    const anthropic = {
      model: 'm',
      max_tokens: 10,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_2', name: 'weather', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: '21C' },
            { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '25C' }] },
            { type: 'text', text: 'Thanks. Tomorrow?' },
          ],
        },
      ],
    };
    const responses = {
      model: 'm',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_1', output: '21C' },
        { type: 'function_call_output', call_id: 'call_2', output: '25C' },
        { role: 'user', content: [{ type: 'input_text', text: 'Thanks. Tomorrow?' }] },
      ],
    };
    const paths = (b: unknown) => requestKeys(b).pathHashes;
    expect(paths(anthropic)).toEqual(paths(openai));
    expect(paths(responses)).toEqual(paths(openai));
    // system, user, assistant (text and both calls), tool, tool, user.
    expect(paths(openai)).toHaveLength(6);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties, for every shape.


const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 });
const id = fc.string({ minLength: 1, maxLength: 6 });
const args = fc.dictionary(fc.constantFrom('city', 'n', 'q'), fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })), { maxKeys: 3 });

const anthropicBody = fc.record(
  {
    model: fc.constantFrom('claude-a', 'claude-b'),
    max_tokens: fc.integer({ min: 1, max: 4096 }),
    system: text,
    messages: fc.array(
      fc.oneof(
        fc.record({ role: fc.constant('user'), content: text }),
        fc.record({ role: fc.constant('assistant'), content: fc.tuple(id, args).map(([i, a]) => [{ type: 'tool_use', id: i, name: 'f', input: a }]) }),
        fc.record({ role: fc.constant('user'), content: fc.tuple(id, text).map(([i, t]) => [{ type: 'tool_result', tool_use_id: i, content: t }, { type: 'text', text: t }]) }),
      ),
      { minLength: 1, maxLength: 5 },
    ),
    tools: fc.array(fc.record({ name: fc.constantFrom('f', 'g'), input_schema: fc.constant({ type: 'object' }), type: fc.constantFrom(null, undefined) }), { maxLength: 2 }),
    stream: fc.boolean(),
  },
  { requiredKeys: ['model', 'messages', 'system'] },
);
const responsesBody = fc.record(
  {
    model: fc.constantFrom('gpt-a', 'gpt-b'),
    instructions: text,
    input: fc.array(
      fc.oneof(
        fc.record({ role: fc.constant('user'), content: text }),
        fc.record({ type: fc.constant('function_call'), call_id: id, name: fc.constant('f'), arguments: args.map((a) => JSON.stringify(a)) }),
        fc.record({ type: fc.constant('function_call_output'), call_id: id, output: text }),
      ),
      { minLength: 1, maxLength: 5 },
    ),
    max_output_tokens: fc.nat(1000),
    stream: fc.boolean(),
  },
  { requiredKeys: ['model', 'input'] },
);
const embeddingsBody = fc.record(
  {
    model: fc.constantFrom('text-embedding-3-small', 'text-embedding-3-large'),
    input: fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 4 }), fc.array(fc.nat(50000), { minLength: 1, maxLength: 5 })),
    dimensions: fc.integer({ min: 1, max: 3072 }),
    user: fc.string(),
  },
  { requiredKeys: ['model', 'input'] },
);
const vercelBody = fc.record(
  { model: fc.constantFrom('gpt-a', 'gpt-b'), system: text, prompt: text, maxOutputTokens: fc.nat(1000), temperature: fc.constant(0) },
  { requiredKeys: ['model', 'prompt'] },
);
const genericBody = fc.record(
  {
    messages: fc.array(fc.record({ role: fc.constantFrom('user', 'assistant', 'narrator'), content: text, timestamp: fc.nat() }), { minLength: 1, maxLength: 4 }),
    tools: fc.array(fc.record({ name: fc.constantFrom('go', 'stop'), description: text }), { maxLength: 2 }),
    context: fc.dictionary(fc.constantFrom('node', 'user'), text),
    options: fc.record({ max_tokens: fc.nat(100), stream: fc.boolean() }, { requiredKeys: [] }),
  },
  { requiredKeys: ['messages', 'context'] },
);
const SHAPE_BODIES = { anthropic: anthropicBody, responses: responsesBody, embeddings: embeddingsBody, vercel: vercelBody, generic: genericBody } as const;

describe(`request key properties, every shape (${backend()})`, () => {
  for (const [shape, body] of Object.entries(SHAPE_BODIES)) {
    it(`${shape}: normalization is idempotent`, () => {
      fc.assert(
        fc.property(body, (b) => {
          const r = normalizeRequest(b);
          expect(normalizeRequest(r.view).view).toEqual(r.view);
        }),
        { numRuns: 80 },
      );
    });

    it(`${shape}: key order, whitespace and number spelling never change the key`, () => {
      fc.assert(
        fc.property(body, fc.integer(), (b, seed) => {
          expect(key(JSON.parse(respell(b, rng(seed))))).toBe(key(b));
        }),
        { numRuns: 80 },
      );
    });

    it(`${shape}: every shape-deciding argument, away from its default, changes the key`, () => {
      const values: Obj = {
        stream: true, background: true, n: 2, logprobs: true, encoding_format: 'base64', response_format: { type: 'json_object' },
        stream_options: { include_usage: true }, top_logprobs: 3, dimensions: 7, text: { format: { type: 'json_object' } }, include: ['x'],
        modalities: ['audio'], audio: { voice: 'alloy' }, output_format: { type: 'json_schema' },
      };
      expect(Object.keys(SHAPE_DEFAULTS).every((k) => k in values)).toBe(true);
      fc.assert(
        fc.property(body, fc.constantFrom(...Object.keys(values)), (b, name) => {
          const base = { ...(b as Obj) };
          delete base[name];
          if (isObj(base.options)) delete base.options[name];
          const withIt = { ...base, [name]: values[name] };
          expect(key(withIt), name).not.toBe(key(base));
          // encoding_format and dimensions are also embeddings evidence: on another shape they
          // change the detected shape, so only embeddings bodies compare them with their default.
          const evidence = name === 'encoding_format' && shape !== 'embeddings';
          if (name in SHAPE_DEFAULTS && !evidence) expect(key({ ...base, [name]: SHAPE_DEFAULTS[name] }), name).toBe(key(base));
        }),
        { numRuns: 80 },
      );
    });
  }
});

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
