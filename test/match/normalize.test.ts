// Request normalization: detection, what enters the view, what never does, and the invariances
// the request key promises (docs/matching.md).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backend, hashValue, pathHashes, TapedeckError } from '../../src/index.ts';
import { DROPPED_ARGS, detectProvider, normalizeRequest, type Provider } from '../../src/providers/normalize.ts';
import { rng } from '../reference.ts';
import { errorOf } from '../helpers.ts';
import { respell } from './respell.ts';

type Obj = Record<string, any>;

const FIXTURES = ['openai-chat', 'openai-responses', 'anthropic', 'generic'] as const;
const load = (name: string): Obj => JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/requests', `${name}.json`), 'utf8'));
const fixtures = Object.fromEntries(FIXTURES.map((f) => [f, load(f)])) as Record<(typeof FIXTURES)[number], Obj>;
const clone = <T>(v: T): T => structuredClone(v);

const key = (body: unknown, opts?: Parameters<typeof normalizeRequest>[1]) => hashValue(normalizeRequest(body, opts).view);

// The PNG embedded (base64) in every fixture, and its SHA-256 computed independently.
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFElEQVR4nGP4z8DAAMIM/////w8AH+4F+7C4l8kAAAAASUVORK5CYII=';
const PNG = Buffer.from(PNG_B64, 'base64');
const sha = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');


function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}


describe(`request normalization (${backend()})`, () => {
  describe('detection', () => {
    it('detects each fixture', () => {
      const want: Record<string, Provider> = {
        'openai-chat': 'openai-chat',
        'openai-responses': 'openai-responses',
        anthropic: 'anthropic',
        generic: 'generic',
      };
      for (const f of FIXTURES) {
        expect(detectProvider(fixtures[f]), f).toBe(want[f]);
        expect(normalizeRequest(fixtures[f]).provider, f).toBe(want[f]);
      }
    });

    it('small bodies', () => {
      const user = { role: 'user', content: 'hi' };
      expect(detectProvider({ model: 'gpt-4o', messages: [user] })).toBe('openai-chat');
      expect(detectProvider({ model: 'gpt-4o', messages: [] })).toBe('openai-chat');
      expect(detectProvider({ model: 'gpt-4o', input: 'hi' })).toBe('openai-responses');
      expect(detectProvider({ model: 'gpt-4o', previous_response_id: 'resp_1', input: [] })).toBe('openai-responses');
      expect(detectProvider({ model: 'claude', system: 'x', messages: [user] })).toBe('anthropic');
      expect(detectProvider({ model: 'claude', max_tokens: 10, stop_sequences: ['x'], messages: [user] })).toBe('anthropic');
      expect(detectProvider({ messages: [user], tools: [{ name: 't', input_schema: {} }] })).toBe('anthropic');
      expect(detectProvider({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'ok' }] }] })).toBe(
        'anthropic',
      );
      expect(detectProvider({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }] })).toBe(
        'openai-chat',
      );
      expect(detectProvider({ messages: [user], tools: [{ type: 'function', function: { name: 't' } }] })).toBe('openai-chat');
      expect(detectProvider({ messages: [{ role: 'model', parts: [{ text: 'hi' }] }] })).toBe('generic');
      expect(detectProvider({ messages: [user], context: {} })).toBe('generic');
      expect(detectProvider({ messages: [user], options: { temperature: 0 } })).toBe('generic');
    });

    it('an unrecognizable body is E_REQUEST, saying what was expected', () => {
      for (const body of [null, undefined, 42, 'hello', [], [{ role: 'user', content: 'hi' }], {}, { model: 'gpt-4o' }]) {
        const e = errorOf(() => normalizeRequest(body));
        expect(e.code, JSON.stringify(body)).toBe('E_REQUEST');
        expect(e.message).toMatch(/messages|input/);
        expect(e.message).toMatch(/OpenAI chat/);
        expect(errorOf(() => detectProvider(body)).code).toBe('E_REQUEST');
      }
      const notArray = errorOf(() => normalizeRequest({ messages: 'hi' }));
      expect([notArray.code, notArray.path]).toEqual(['E_REQUEST', '$.messages']);
      const badMessage = errorOf(() => normalizeRequest({ messages: [{ role: 'user', content: 'a' }, 'b'] }));
      expect([badMessage.code, badMessage.path]).toEqual(['E_REQUEST', '$.messages[1]']);
      const badInput = errorOf(() => normalizeRequest({ input: 7 }));
      expect([badInput.code, badInput.path]).toEqual(['E_REQUEST', '$.input']);
      const badTools = errorOf(() => normalizeRequest({ messages: [], tools: 'x' }));
      expect([badTools.code, badTools.path]).toEqual(['E_REQUEST', '$.tools']);
      expect(errorOf(() => normalizeRequest({ messages: [] }, { provider: 'gemini' as Provider })).code).toBe('E_ARG');
      expect(errorOf(() => normalizeRequest({ messages: [] }, { ignoreArgs: 'temperature' as never })).code).toBe('E_ARG');
    });

    it('a forced provider skips detection', () => {
      const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], instructions: 'be brief' };
      expect(normalizeRequest(body, { provider: 'anthropic' }).provider).toBe('anthropic');
      expect(normalizeRequest(body).view.options).toEqual({ instructions: 'be brief' });
      expect(normalizeRequest({ ...body, input: 'yo' }, { provider: 'openai-responses' }).view).toMatchObject({
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'be brief' }] },
          { role: 'user', content: [{ type: 'text', text: 'yo' }] },
        ],
      });
    });
  });

  describe('view contents', () => {
    it('OpenAI chat', () => {
      const r = normalizeRequest(fixtures['openai-chat']);
      const v = r.view as Obj;
      expect(Object.keys(v).sort()).toEqual(['messages', 'model', 'options', 'tools']);
      expect(v.model).toBe('gpt-4o-2024-08-06');
      expect(v.messages).toHaveLength(7);
      expect(v.messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: fixtures['openai-chat'].messages[0].content }] });
      expect(v.messages[1].content.slice(1)).toEqual([
        { type: 'image', image: { url: 'https://images.example.com/uploads/2025/05/harbor.jpg' }, detail: 'high' },
        { type: 'image', image: { sha256: sha(PNG), mediaType: 'image/png' }, detail: 'low' },
      ]);
      expect(v.messages[2]).toEqual({
        role: 'assistant',
        content: [
          { type: 'tool_call', id: 'call_0', name: 'identify_landmark', arguments: { image_index: 0, hint: 'harbor' } },
          { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Valletta', unit: 'celsius' } },
        ],
      });
      expect(v.messages[3].content[0]).toMatchObject({ type: 'tool_result', id: 'call_0' });
      expect(v.messages[4].content[0]).toEqual({
        type: 'tool_result',
        id: 'call_1',
        content: [{ type: 'text', text: '{"temp_c":24,"conditions":"sunny","wind_kph":14}' }],
      });
      expect(v.tools.map((t: Obj) => t.name)).toEqual(['get_weather', 'identify_landmark']);
      expect(v.tools[0]).toMatchObject({ description: 'Current weather for a city.', strict: true, parameters: { required: ['city'] } });
      // Streaming decides the shape of the answer: it is in the key.
      expect(v.options).toEqual({
        tool_choice: 'auto', parallel_tool_calls: true, temperature: 0, max_completion_tokens: 400, seed: 1234, stream: true, stream_options: { include_usage: true },
      });
      expect(r.toolNames).toEqual(['get_weather', 'identify_landmark']);
      expect(r.contextKeys).toEqual([]);
      expect(r.messages).toEqual(v.messages);
      const text = JSON.stringify(v);
      for (const gone of ['call_Xk2', 'call_7Hg', 'user_8f14', 'trace_id', 'service_tier', 'refusal']) {
        expect(text).not.toContain(gone);
      }
    });

    it('OpenAI Responses', () => {
      const r = normalizeRequest(fixtures['openai-responses']);
      const v = r.view as Obj;
      // `instructions` became the leading system message, and the path covers exactly the view's messages.
      expect(v.messages[0]).toEqual({ role: 'system', content: [{ type: 'text', text: fixtures['openai-responses'].instructions }] });
      expect(r.messages).toEqual(v.messages);
      const m = v.messages.slice(1);
      expect(m[0].content[1]).toEqual({ type: 'image', image: { sha256: sha(PNG), mediaType: 'image/png' }, detail: 'auto' });
      expect(m[1]).toEqual({ type: 'reasoning', summary: fixtures['openai-responses'].input[1].summary });
      expect(m[2]).toEqual({
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'call_0', name: 'lookup_order', arguments: { order_id: '1042' } }],
      });
      expect(m[3]).toMatchObject({ role: 'tool', content: [{ type: 'tool_result', id: 'call_0' }] });
      expect(m[4]).toEqual({ role: 'assistant', content: [{ type: 'text', text: fixtures['openai-responses'].input[4].content[0].text }] });
      expect(m[5]).toEqual({ role: 'user', content: [{ type: 'text', text: 'Yes please, same address.' }] });
      expect(v.options).toEqual({ tool_choice: 'auto', reasoning: { effort: 'low', summary: 'auto' }, max_output_tokens: 800, text: { verbosity: 'low' }, stream: true });
      expect(r.toolNames).toEqual(['create_replacement', 'lookup_order']);
      const text = JSON.stringify(v);
      for (const gone of ['rs_68a', 'fc_68a', 'msg_68a', 'call_q8W', 'completed', 'ZD-88213', 'support-agent', 'u_5d41']) expect(text).not.toContain(gone);
    });

    it('Anthropic', () => {
      const r = normalizeRequest(fixtures.anthropic);
      const v = r.view as Obj;
      const system = [
        { type: 'text', text: 'You are a meticulous lab assistant. Cite the instrument readings you use.' },
        { type: 'text', text: 'Lab safety manual (excerpt): never heat sealed containers.' },
      ];
      expect(v.messages[0]).toEqual({ role: 'system', content: system });
      const m = v.messages.slice(1);
      expect(m[0].content.slice(1)).toEqual([
        { type: 'image', image: { sha256: sha(PNG), mediaType: 'image/png' } },
        { type: 'image', image: { url: 'https://lims.example.org/reference/plate-ref-07.jpg' } },
      ]);
      expect(m[1].content[1]).toEqual({
        type: 'tool_call',
        id: 'call_0',
        name: 'read_instrument',
        arguments: { instrument: 'incubator-3', metric: 'temperature', window_hours: 12 },
      });
      expect(m[2].content).toEqual([
        { type: 'tool_result', id: 'call_0', content: [{ type: 'text', text: 'mean 37.1 C, min 36.8 C, max 37.4 C' }] },
      ]);
      expect(m[4].content).toEqual([{ type: 'tool_result', id: 'call_1', content: [{ type: 'text', text: '212 colonies' }] }]);
      expect(v.tools[0]).toEqual({
        name: 'count_colonies',
        description: 'Count bacterial colonies on a plate image.',
        parameters: fixtures.anthropic.tools[1].input_schema,
      });
      // temperature 0.7 is sampling: not in the key.
      expect(v.options).toEqual({ max_tokens: 1024, tool_choice: { type: 'auto' }, top_k: 40, stop_sequences: ['</report>'], stream: true });
      expect(r.messages).toHaveLength(6);
      expect(r.messages).toEqual(v.messages);
      expect(JSON.stringify(v)).not.toMatch(/toolu_|cache_control|lab-tech|is_error/);
    });

    it('generic (JSON recordings directory shape)', () => {
      const r = normalizeRequest(fixtures.generic);
      const v = r.view as Obj;
      expect(r.toolNames).toEqual(['transition_to_pathA', 'transition_to_pathB']);
      expect(r.contextKeys).toEqual(['attributes', 'currentNode', 'visitedNodes']);
      expect(v.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: fixtures.generic.messages[0].content }] }]);
      expect(v.options).toEqual({ maxTokens: 1024, temperature: 0 });
      expect(v.tools.map((t: Obj) => t.name)).toEqual(['transition_to_pathA', 'transition_to_pathB']);
      expect(v).not.toHaveProperty('context');
      // Context values are not in the key; the keys are the signature's business.
      const other = clone(fixtures.generic);
      other.context.currentNode = 'pathA';
      expect(key(other)).toBe(key(fixtures.generic));
      delete other.context.attributes;
      expect(normalizeRequest(other).contextKeys).toEqual(['currentNode', 'visitedNodes']);
    });

    it('context keys come from the request, so recording and playback agree', () => {
      const recorded = clone(fixtures.generic);
      const replayed = JSON.parse(JSON.stringify(fixtures.generic));
      expect(normalizeRequest(replayed).contextKeys).toEqual(normalizeRequest(recorded).contextKeys);
      expect(normalizeRequest({ messages: [], context: 'not an object' }, { provider: 'generic' }).contextKeys).toEqual([]);
      expect(normalizeRequest({ ...fixtures['openai-chat'], context: { b: 1, a: 2 } }).contextKeys).toEqual(['a', 'b']);
    });

    it('content spellings that mean the same thing', () => {
      const a = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
      const b = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
      const c = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'text', text: '' }] }] };
      expect(key(b)).toBe(key(a));
      expect(key(c)).toBe(key(a));
      const calls = [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x": 1}' } }];
      const nullContent = { model: 'm', messages: [{ role: 'assistant', content: null, tool_calls: calls }] };
      const emptyContent = { model: 'm', messages: [{ role: 'assistant', content: '', tool_calls: calls, refusal: null }] };
      expect(key(emptyContent)).toBe(key(nullContent));
      const spaced = clone(nullContent);
      spaced.messages[0]!.tool_calls[0]!.function.arguments = '{ "x" : 1.0 }';
      expect(key(spaced)).toBe(key(nullContent));
      expect(key({ model: 'm', messages: [], stop: 'END' })).toBe(key({ model: 'm', messages: [], stop: ['END'] }));
      expect(key({ model: 'm', messages: [], seed: null })).toBe(key({ model: 'm', messages: [] }));
      const system = { model: 'm', system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] };
      expect(key({ ...system, system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }] })).toBe(key(system));
    });

    it('tool arguments that are not JSON are kept as text', () => {
      const body = {
        model: 'm',
        messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"x": 1' } }] }],
      };
      expect((normalizeRequest(body).view as Obj).messages[0].content[0]).toEqual({
        type: 'tool_call',
        id: 'call_0',
        name: 'f',
        argumentsText: '{"x": 1',
      });
    });

    it('legacy functions and function_call stay distinct from tools', () => {
      const fn = { name: 'f', description: 'd', parameters: { type: 'object' } };
      const legacy = { model: 'm', messages: [{ role: 'user', content: 'x' }], functions: [fn] };
      const tools = { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: fn }] };
      expect((normalizeRequest(legacy).view as Obj).tools).toEqual([{ ...fn, legacy: true }]);
      expect(normalizeRequest(legacy).toolNames).toEqual(['f']);
      expect(key(legacy)).not.toBe(key(tools));
      const call = normalizeRequest({
        model: 'm',
        messages: [
          { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{"a":[1,2]}' } },
          { role: 'function', name: 'f', content: 'done' },
        ],
      }).view as Obj;
      expect(call.messages).toEqual([
        { role: 'assistant', content: [{ type: 'function_call', name: 'f', arguments: { a: [1, 2] } }] },
        { role: 'function', name: 'f', content: [{ type: 'text', text: 'done' }] },
      ]);
    });

    it('tools are sorted by name, whatever order the request lists them in', () => {
      const body = clone(fixtures['openai-chat']);
      const reversed = { ...body, tools: [...body.tools].reverse() };
      expect(key(reversed)).toBe(key(body));
      const builtins = normalizeRequest({ model: 'm', input: 'x', tools: [{ type: 'web_search' }, { type: 'function', name: 'a' }, { type: 'file_search', vector_store_ids: ['vs_1'] }] });
      expect((builtins.view as Obj).tools).toEqual([{ type: 'file_search', vector_store_ids: ['vs_1'] }, { type: 'web_search' }, { name: 'a' }]);
      expect(builtins.toolNames).toEqual(['a']);
    });
  });

  describe('call ids', () => {
    // Gives every call id in a fixture a fresh value, as a re-recording would.
    function rerecord(body: Obj, suffix: string): Obj {
      const ids = new Map<string, string>();
      const fresh = (id: string) => (ids.has(id) ? ids.get(id)! : (ids.set(id, `${id.slice(0, 5)}${suffix}${ids.size}`), ids.get(id)!));
      return JSON.parse(JSON.stringify(body), function (k, v) {
        if (typeof v === 'string' && ['id', 'tool_call_id', 'tool_use_id', 'call_id'].includes(k)) return fresh(v);
        return v;
      });
    }

    it('re-recorded ids do not change the key or the path hashes', () => {
      for (const f of ['openai-chat', 'openai-responses', 'anthropic'] as const) {
        const again = rerecord(fixtures[f], 'ZZZ');
        expect(JSON.stringify(again)).not.toBe(JSON.stringify(fixtures[f]));
        expect(key(again), f).toBe(key(fixtures[f]));
        expect(pathHashes(normalizeRequest(again).messages), f).toEqual(pathHashes(normalizeRequest(fixtures[f]).messages));
      }
    });

    it('which call a result answers still matters', () => {
      const body = clone(fixtures['openai-chat']);
      [body.messages[3].tool_call_id, body.messages[4].tool_call_id] = [body.messages[4].tool_call_id, body.messages[3].tool_call_id];
      expect(key(body)).not.toBe(key(fixtures['openai-chat']));
      const a = clone(fixtures.anthropic);
      a.messages[4].content[0].tool_use_id = a.messages[2].content[0].tool_use_id;
      expect(key(a)).not.toBe(key(fixtures.anthropic));
    });

    it('a prefix of a conversation is numbered as it is inside the whole one', () => {
      for (const f of ['openai-chat', 'anthropic'] as const) {
        const full = normalizeRequest(fixtures[f]).messages;
        const fullHashes = pathHashes(full).pathHashes;
        for (let n = 1; n <= fixtures[f].messages.length; n++) {
          const prefix = { ...fixtures[f], messages: fixtures[f].messages.slice(0, n) };
          const ph = pathHashes(normalizeRequest(prefix).messages).pathHashes;
          expect(ph, `${f} prefix ${n}`).toEqual(fullHashes.slice(0, ph.length));
        }
      }
    });

    it('an id seen only in a result (dangling) is kept as given, and still counts for the numbering', () => {
      const v = normalizeRequest({
        model: 'm',
        messages: [
          { role: 'tool', tool_call_id: 'orphan', content: 'x' },
          { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'a', content: 'y' },
        ],
      }).view as Obj;
      expect(v.messages.map((m: Obj) => m.content[0].id)).toEqual(['orphan', 'call_1', 'call_1']);
    });
  });

  describe('the key', () => {
    it('user, metadata and the other dropped arguments never change it; neither does a shape-deciding argument at its default', () => {
      for (const f of FIXTURES) {
        const base = key(fixtures[f]);
        const stripped = clone(fixtures[f]);
        for (const k of DROPPED_ARGS) delete stripped[k];
        expect(key(stripped), f).toBe(base);
        for (const k of DROPPED_ARGS) {
          for (const value of [true, 'other', { nested: 1 }, null]) {
            expect(key({ ...fixtures[f], [k]: value }), `${f} ${k}`).toBe(base);
          }
        }
        const plain = clone(fixtures[f]);
        delete plain.stream;
        delete plain.stream_options;
        expect(key({ ...plain, stream: false, stream_options: { include_usage: false }, n: 1, logprobs: false }), f).toBe(key(plain));
        if (fixtures[f].stream) expect(key(plain), f).not.toBe(base);
      }
    });

    it('message text, a tool name, the model and deciding options change it', () => {
      const chat = fixtures['openai-chat'];
      const base = key(chat);
      const changes: [string, (b: Obj) => void][] = [
        ['system text', (b) => (b.messages[0].content += '!')],
        ['user text part', (b) => (b.messages[1].content[0].text = 'Where is this?')],
        ['assistant text', (b) => (b.messages[5].content = 'It is Valletta.')],
        ['tool result', (b) => (b.messages[3].content = '{"landmark":"Mdina"}')],
        ['tool call arguments', (b) => (b.messages[2].tool_calls[1].function.arguments = '{"city":"Mdina","unit":"celsius"}')],
        ['tool call name', (b) => (b.messages[2].tool_calls[1].function.name = 'get_forecast')],
        ['tool name', (b) => (b.tools[0].function.name = 'get_current_weather')],
        ['tool description', (b) => (b.tools[0].function.description = 'Weather.')],
        ['tool parameters', (b) => (b.tools[0].function.parameters.required = [])],
        ['image url', (b) => (b.messages[1].content[1].image_url.url += '?v=2')],
        ['image detail', (b) => (b.messages[1].content[1].image_url.detail = 'low')],
        ['model', (b) => (b.model = 'gpt-4o-mini')],
        ['temperature 0 -> 0.7', (b) => (b.temperature = 0.7)],
        ['max_completion_tokens', (b) => (b.max_completion_tokens = 401)],
        ['max_tokens', (b) => (b.max_tokens = 400)],
        ['seed', (b) => (b.seed = 1)],
        ['top_p', (b) => (b.top_p = 0.9)],
        ['stop', (b) => (b.stop = ['\n\n'])],
        ['response_format', (b) => (b.response_format = { type: 'json_object' })],
        ['tool_choice', (b) => (b.tool_choice = 'required')],
        ['parallel_tool_calls', (b) => (b.parallel_tool_calls = false)],
        ['reasoning_effort', (b) => (b.reasoning_effort = 'high')],
        ['n', (b) => (b.n = 2)],
        ['logit_bias', (b) => (b.logit_bias = { '50256': -100 })],
        ['presence_penalty', (b) => (b.presence_penalty = 0.5)],
        ['frequency_penalty', (b) => (b.frequency_penalty = 0.5)],
        ['an argument we do not know', (b) => (b.verbosity = 'high')],
        ['one more message', (b) => b.messages.push({ role: 'assistant', content: 'Probably not.' })],
        ['message order', (b) => b.messages.splice(5, 2, b.messages[6], b.messages[5])],
      ];
      const seen = new Set([base]);
      for (const [what, change] of changes) {
        const b = clone(chat);
        change(b);
        const k = key(b);
        expect(k, what).not.toBe(base);
        seen.add(k);
      }
      expect(seen.size).toBe(changes.length + 1);
      const anthropic = clone(fixtures.anthropic);
      anthropic.max_tokens = 2048;
      expect(key(anthropic)).not.toBe(key(fixtures.anthropic));
      const responses = clone(fixtures['openai-responses']);
      responses.max_output_tokens = 100;
      expect(key(responses)).not.toBe(key(fixtures['openai-responses']));
    });

    it('temperature: only 0 is in the key', () => {
      const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
      const sampled = [undefined, 0.2, 0.7, 1, 1.5, 2].map((t) => key({ ...body, temperature: t }));
      expect(new Set(sampled).size).toBe(1);
      expect(key({ ...body, temperature: 0 })).not.toBe(sampled[0]);
      expect(key({ ...body, temperature: -0 })).toBe(key({ ...body, temperature: 0 }));
      expect(key({ messages: [], options: { temperature: 0.9 } })).toBe(key({ messages: [], options: {} }));
    });

    it('ignored arguments never change it', () => {
      const ignoreArgs = ['temperature', 'max_completion_tokens', 'seed', 'tool_choice'];
      const chat = fixtures['openai-chat'];
      const base = key(chat, { ignoreArgs });
      expect(base).not.toBe(key(chat));
      for (const change of [{ temperature: 0.3 }, { temperature: undefined }, { max_completion_tokens: 9 }, { seed: 7 }, { tool_choice: 'none' }]) {
        expect(key({ ...chat, ...change }, { ignoreArgs })).toBe(base);
      }
      expect(key({ ...chat, top_p: 0.5 }, { ignoreArgs })).not.toBe(base);
      // For the generic shape, members of `options` too.
      const g = fixtures.generic;
      expect(key({ ...g, options: { ...g.options, maxTokens: 5 } }, { ignoreArgs: ['maxTokens'] })).toBe(key(g, { ignoreArgs: ['maxTokens'] }));
      // Ignoring a structural argument removes its normalized form as well.
      const noTools = normalizeRequest(chat, { ignoreArgs: ['tools'] });
      expect([(noTools.view as Obj).tools, noTools.toolNames]).toEqual([[], []]);
      expect(normalizeRequest(fixtures['openai-responses'], { ignoreArgs: ['instructions'] }).view).not.toHaveProperty('system');
      expect(normalizeRequest(g, { ignoreArgs: ['context'] }).contextKeys).toEqual([]);
    });

    it('volatile keys are dropped at any depth inside messages and tools', () => {
      const body = (stamp: string, ms: number) => ({
        model: 'm',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi', meta: { timestamp: stamp } }] },
          { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: JSON.stringify({ q: 1, nonce: ms }) } }] },
        ],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', nonce: ms } } }],
        nonce: 1,
      });
      const opts = { volatileKeys: ['timestamp', 'nonce'] };
      expect(key(body('2025-01-01', 1), opts)).toBe(key(body('2026-02-02', 2), opts));
      expect(key(body('2025-01-01', 1))).not.toBe(key(body('2026-02-02', 2)));
      // Top-level arguments are ignoreArgs' business, not volatileKeys'.
      expect((normalizeRequest(body('x', 1), opts).view as Obj).options).toEqual({ nonce: 1 });
      // Message-level ids and timestamps are always dropped.
      const withIds = { model: 'm', messages: [{ id: 'msg_1', role: 'user', content: 'hi', created_at: 1 }] };
      expect(key(withIds)).toBe(key({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
    });

    it('key order, whitespace, number spelling and escapes of the raw JSON never change it', () => {
      const r = rng(8785);
      for (const f of FIXTURES) {
        const base = key(fixtures[f]);
        const text = JSON.stringify(fixtures[f]);
        for (let i = 0; i < 20; i++) {
          const respelled = respell(fixtures[f], r);
          expect(respelled).not.toBe(text);
          expect(key(JSON.parse(respelled)), `${f}: ${respelled.slice(0, 200)}`).toBe(base);
        }
      }
    });
  });

  describe('attachments', () => {
    const anthropicImage = (data: string, media_type = 'image/png') => ({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type, data } }] }],
    });
    const chatImage = (url: string) => ({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }],
    });
    const attachmentOf = (body: unknown) => (normalizeRequest(body).view as Obj).messages[0].content[0].image;

    it('base64 bytes and a data: URL of the same bytes hash alike', () => {
      const want = { sha256: sha(PNG), mediaType: 'image/png' };
      expect(attachmentOf(anthropicImage(PNG_B64))).toEqual(want);
      expect(attachmentOf(chatImage(`data:image/png;base64,${PNG_B64}`))).toEqual(want);
      expect(attachmentOf(chatImage(`DATA:Image/PNG;BASE64,${PNG_B64}`))).toEqual(want);
      expect(attachmentOf({ model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: `data:image/png;base64,${PNG_B64}` }] }] })).toEqual(want);
      // Line-wrapped, unpadded and URL-safe spellings are the same bytes.
      const wrapped = PNG_B64.replace(/.{20}/g, '$&\n');
      const urlSafe = PNG_B64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
      expect(attachmentOf(anthropicImage(wrapped))).toEqual(want);
      expect(attachmentOf(anthropicImage(urlSafe))).toEqual(want);
      // The fixtures carry the same PNG in three shapes.
      const inFixtures = [
        (normalizeRequest(fixtures['openai-chat']).view as Obj).messages[1].content[2].image,
        (normalizeRequest(fixtures['openai-responses']).view as Obj).messages[1].content[1].image,
        (normalizeRequest(fixtures.anthropic).view as Obj).messages[1].content[1].image,
      ];
      for (const a of inFixtures) expect(a).toEqual(want);
    });

    it('a changed byte changes the hash and the key', () => {
      const bytes = Buffer.from(PNG);
      bytes[40] = bytes[40]! ^ 1;
      const other = bytes.toString('base64');
      expect(attachmentOf(anthropicImage(other))).toEqual({ sha256: sha(bytes), mediaType: 'image/png' });
      expect(key(anthropicImage(other))).not.toBe(key(anthropicImage(PNG_B64)));
      expect(key(chatImage(`data:image/png;base64,${other}`))).not.toBe(key(chatImage(`data:image/png;base64,${PNG_B64}`)));
      expect(key(anthropicImage(PNG_B64, 'image/jpeg'))).not.toBe(key(anthropicImage(PNG_B64)));
    });

    it('URLs, paths, file ids, text and non-base64 data', () => {
      expect(attachmentOf(chatImage('https://example.com/a.png'))).toEqual({ url: 'https://example.com/a.png' });
      expect(attachmentOf({ messages: [{ role: 'user', content: [{ type: 'image', path: './cat.png' }] }] })).toEqual({ path: './cat.png' });
      expect(attachmentOf(chatImage('data:text/plain,a%20b'))).toEqual({ sha256: sha('a b'), mediaType: 'text/plain' });
      expect(attachmentOf(chatImage('data:,hi'))).toEqual({ sha256: sha('hi'), mediaType: 'text/plain' });
      expect(attachmentOf(anthropicImage('not base64!'))).toEqual({ textSha256: sha('not base64!'), mediaType: 'image/png' });
      const doc = normalizeRequest({
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The grass is green.' }, title: 'Facts' },
              { type: 'document', source: { type: 'file', file_id: 'file_011' } },
            ],
          },
        ],
      }).view as Obj;
      expect(doc.messages[0].content).toEqual([
        { type: 'file', file: { sha256: sha('The grass is green.'), mediaType: 'text/plain' }, title: 'Facts' },
        { type: 'file', file: { fileId: 'file_011' } },
      ]);
      const pdf = 'JVBERi0xLjQKMSAwIG9iajw8L1R5cGUvQ2F0YWxvZz4+ZW5kb2JqCnRyYWlsZXI8PC9Sb290IDEgMCBSPj4KJSVFT0YK';
      const chatFile = normalizeRequest({
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: `data:application/pdf;base64,${pdf}` } }] }],
      }).view as Obj;
      const anthropicDoc = normalizeRequest({
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }] }],
      }).view as Obj;
      expect(chatFile.messages[0].content[0]).toEqual({ type: 'file', file: { sha256: sha(Buffer.from(pdf, 'base64')), mediaType: 'application/pdf' }, filename: 'a.pdf' });
      expect(anthropicDoc.messages[0].content[0].file).toEqual(chatFile.messages[0].content[0].file);
      const audio = normalizeRequest({
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: PNG_B64, format: 'mp3' } }] }],
      }).view as Obj;
      expect(audio.messages[0].content[0]).toEqual({ type: 'audio', audio: { sha256: sha(PNG), mediaType: 'audio/mpeg' } });
    });
  });

  describe('guarantees', () => {
    it('idempotent: a view normalized as a generic request is itself', () => {
      for (const f of FIXTURES) {
        const r = normalizeRequest(fixtures[f]);
        const again = normalizeRequest(r.view);
        expect(again.provider, f).toBe('generic');
        expect(again.view, f).toEqual(r.view);
        expect(again.messages, f).toEqual(r.messages);
        expect(again.toolNames, f).toEqual(r.toolNames);
        expect(normalizeRequest(r.view, { provider: 'generic' }).view).toEqual(r.view);
      }
    });

    it('deterministic, and the input is never mutated or shared', () => {
      for (const f of FIXTURES) {
        const frozen = deepFreeze(clone(fixtures[f]));
        const r1 = normalizeRequest(frozen, { volatileKeys: ['x'] });
        const r2 = normalizeRequest(frozen);
        expect(frozen).toEqual(fixtures[f]);
        expect(r1.view).toEqual(r2.view);
        expect(hashValue(r1.view)).toBe(hashValue(r2.view));
        // Mutating the view leaves the request alone.
        const body = clone(fixtures[f]);
        const snapshot = JSON.stringify(body);
        const v = normalizeRequest(body).view as Obj;
        const scrub = (x: unknown): void => {
          if (x && typeof x === 'object') for (const [k, y] of Object.entries(x)) {
            scrub(y);
            if (!Array.isArray(x)) (x as Obj)[k] = 'scrubbed';
          }
        };
        scrub(v);
        expect(JSON.stringify(body)).toBe(snapshot);
      }
    });

    it('the same conversation in OpenAI chat and Anthropic shapes has the same path hashes', () => {
      const turns = [
        { role: 'user', content: 'Capital of France?' },
        { role: 'assistant', content: 'Paris' },
        { role: 'user', content: 'Germany?' },
      ];
      const chat = normalizeRequest({ model: 'gpt-4o', messages: [{ role: 'system', content: 'You are helpful' }, ...turns] });
      const claude = normalizeRequest({ model: 'claude', system: 'You are helpful', max_tokens: 100, messages: turns });
      expect([chat.provider, claude.provider]).toEqual(['openai-chat', 'anthropic']);
      expect(pathHashes(claude.messages)).toEqual(pathHashes(chat.messages));
    });

    it('the doc comment examples hold', () => {
      expect(detectProvider({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })).toBe('openai-chat');
      expect(detectProvider({ model: 'gpt-4o', input: 'hi' })).toBe('openai-responses');
      expect(detectProvider({ model: 'claude-sonnet-4-5', system: 'Be brief.', max_tokens: 256, messages: [] })).toBe('anthropic');
      expect(detectProvider({ messages: [], tools: [], context: { currentNode: 'start' } })).toBe('generic');
      const a = normalizeRequest({ model: 'gpt-4o', user: 'u-1', temperature: 0.7, messages: [{ role: 'user', content: 'hi' }] });
      const b = normalizeRequest({ messages: [{ content: [{ type: 'text', text: 'hi' }], role: 'user' }], model: 'gpt-4o' });
      expect(hashValue(a.view)).toBe(hashValue(b.view));
      expect(a.view).toEqual({ model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], options: {} });
    });

    it('cycles are E_DEPTH, not a stack overflow', () => {
      const result: Obj = { type: 'tool_result', tool_use_id: 'x', content: [] };
      result.content.push(result);
      expect(errorOf(() => normalizeRequest({ messages: [{ role: 'user', content: [result] }] })).code).toBe('E_DEPTH');
      const args: Obj = { a: 1 };
      args.self = args;
      const body = { messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'x', name: 'f', input: args }] }] };
      expect(errorOf(() => normalizeRequest(body)).code).toBe('E_DEPTH');
    });

    it('a member named __proto__ stays data', () => {
      const args = '{"__proto__": {"polluted": true}, "a": 1}';
      const v = normalizeRequest({
        model: 'm',
        messages: [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] }],
      }).view as Obj;
      const a = v.messages[0].content[0].arguments;
      expect(Object.keys(a)).toEqual(['__proto__', 'a']);
      expect(({} as Obj).polluted).toBeUndefined();
      expect(hashValue(a)).toBe(hashValue(JSON.parse(args)));
    });
  });

  describe('properties', () => {
    const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 });
    const part = fc.oneof(
      fc.record({ type: fc.constant('text'), text }),
      fc.record({ type: fc.constant('image_url'), image_url: fc.record({ url: fc.webUrl(), detail: fc.constantFrom('low', 'high') }) }),
    );
    // Every message has text first, so "change a message's text" always has a target.
    const content = fc.oneof(text, fc.tuple(fc.record({ type: fc.constant('text'), text }), fc.array(part, { maxLength: 2 })).map(([t, ps]) => [t, ...ps]));
    const toolCall = fc.record({
      id: fc.string({ minLength: 1, maxLength: 8 }),
      type: fc.constant('function'),
      function: fc.record({ name: fc.constantFrom('search', 'fetch', 'sum'), arguments: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) }),
    });
    const message = fc.oneof(
      fc.record({ role: fc.constantFrom('system', 'developer', 'user', 'assistant'), content }),
      fc.record({ role: fc.constant('assistant'), content, tool_calls: fc.array(toolCall, { minLength: 1, maxLength: 2 }) }),
      fc.record({ role: fc.constant('tool'), tool_call_id: fc.string({ minLength: 1, maxLength: 8 }), content }),
    );
    const tool = fc.record({
      type: fc.constant('function'),
      function: fc.record({ name: fc.string({ minLength: 1, maxLength: 6 }), description: text, parameters: fc.jsonValue({ maxDepth: 2 }) }),
    });
    const body = fc.record(
      {
        model: fc.constantFrom('gpt-4o', 'gpt-4o-mini'),
        messages: fc.array(message, { minLength: 1, maxLength: 6 }),
        tools: fc.array(tool, { maxLength: 3 }),
        temperature: fc.oneof(fc.constant(0), fc.double({ min: 0, max: 2, noNaN: true })),
        max_tokens: fc.nat(4096),
        stream: fc.boolean(),
        user: fc.string(),
      },
      { requiredKeys: ['model', 'messages'] },
    );

    it('key order permutation (and respelling) never changes the key', () => {
      fc.assert(
        fc.property(body, fc.integer(), (b, seed) => {
          const respelled = JSON.parse(respell(b, rng(seed)));
          expect(key(respelled)).toBe(key(b));
        }),
        { numRuns: 200 },
      );
    });

    it('normalizing is idempotent', () => {
      fc.assert(
        fc.property(body, (b) => {
          const r = normalizeRequest(b);
          expect(normalizeRequest(r.view).view).toEqual(r.view);
        }),
        { numRuns: 100 },
      );
    });

    it("changing a random message's text changes the key and the path hashes from that message on", () => {
      fc.assert(
        fc.property(body, fc.nat(), text, (b, pick, extra) => {
          const i = pick % b.messages.length;
          const changed = clone(b) as Obj;
          const m = changed.messages[i];
          if (typeof m.content === 'string') m.content += extra;
          else m.content[0].text += extra;
          expect(key(changed)).not.toBe(key(b));
          const before = pathHashes(normalizeRequest(b).messages).pathHashes;
          const after = pathHashes(normalizeRequest(changed).messages).pathHashes;
          expect(after.slice(0, i)).toEqual(before.slice(0, i));
          for (let j = i; j < after.length; j++) expect(after[j]).not.toBe(before[j]);
        }),
        { numRuns: 200 },
      );
    });
  });
});

describe('the provider option', () => {
  it('an unknown provider names every shape the package keys, and each of them is taken', async () => {
    const { requestKeys } = await import('../../src/index.ts');
    const { PROVIDER_MODULES } = await import('../../src/providers/index.ts');
    const e = errorOf(() => requestKeys({ messages: [] }, { provider: 'nope' as Provider }));
    expect(e.code).toBe('E_ARG');
    const shapes = PROVIDER_MODULES.flatMap((m) => m.shapes);
    for (const s of shapes) expect(e.hint, s).toContain(s);
    expect(shapes).toEqual(expect.arrayContaining(['gemini', 'ollama-chat', 'azure-chat', 'bedrock-converse', 'openai-chat', 'anthropic']));
  });
});
