// Dangling call ids: a result whose call is not in the request. In a Responses tool loop with
// `previous_response_id` the calls live on the server and turn 2 sends only the outputs, so
// renumbering the outputs' call ids by first appearance threw away which call each output
// answers: outputs attached to the wrong calls replayed the recording made with the right ones.
// Such ids are now kept as given (they come from the recorded turn-1 answer, so they are stable
// in replay); every other request keys as before (docs/hash-spec.md, "Call ids").
import { describe, expect, it } from 'vitest';
import { canonicalize } from '../../src/core/index.ts';
import { backend, requestDigests, requestKeys, TapedeckError } from '../../src/index.ts';
import { createMatcher } from '../../src/match/index.ts';
import { rawPathCounts } from '../../src/match/raw-keys.ts';
import { normalizeRequest } from '../../src/providers/normalize.ts';

type Obj = Record<string, any>;

const tools = [
  { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
  { type: 'function', name: 'get_time', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false },
];
const output = (call_id: string, text: string): Obj => ({ type: 'function_call_output', call_id, output: text });
const turn2 = (...input: Obj[]): Obj => ({ model: 'gpt-4.1', previous_response_id: 'resp_1', tools, input });

// Turn 1 returned get_weather as call_PARIS and get_time as call_ROME.
const right = turn2(output('call_PARIS', 'sunny, 25C'), output('call_ROME', '10:00'));
const swapped = turn2(output('call_ROME', 'sunny, 25C'), output('call_PARIS', '10:00'));

const encoder = new TextEncoder();
const bytesOf = (b: unknown): Uint8Array => encoder.encode(JSON.stringify(b));
const key = (b: unknown): string => requestKeys(b).key;

describe(`dangling call ids (${backend()})`, () => {
  it('outputs attached to the wrong calls do not key as the right ones (the user trial)', () => {
    expect(key(swapped)).not.toBe(key(right));
    expect(key(turn2(output('call_PARIS', 'rainy')))).not.toBe(key(turn2(output('call_ROME', 'rainy'))));
    // The raw-bytes path (what the proxy and createFetch key) agrees.
    expect(requestDigests(bytesOf(swapped)).key).toBe(key(swapped));
    expect(requestDigests(bytesOf(right)).key).toBe(key(right));
    expect(requestDigests(bytesOf(swapped)).key).not.toBe(requestDigests(bytesOf(right)).key);
  });

  it('a replay with swapped outputs misses the recording made with the right ones', () => {
    // allowRepeats: the first match must not use the recording up, or the miss would prove nothing.
    const m = createMatcher({ mode: 'exact', allowRepeats: true, recordings: [{ request: right, response: { text: 'Paris: sunny, 10:00' } }] });
    expect(m.match(structuredClone(right)).recording.response).toEqual({ text: 'Paris: sunny, 10:00' });
    let err: unknown;
    try {
      m.match(swapped);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_MISS');
  });

  it('the same request keys the same twice, from objects, text and bytes, and the view keeps the ids as given', () => {
    const a = requestKeys(right);
    const b = requestKeys(structuredClone(right));
    expect(b.key).toBe(a.key);
    expect(requestKeys(JSON.stringify(right)).key).toBe(a.key);
    expect(requestDigests(bytesOf(right))).toEqual(requestDigests(bytesOf(right)));
    expect(requestDigests(bytesOf(right)).pathHashes).toEqual(a.pathHashes);
    expect((a.view as Obj).messages.map((msg: Obj) => msg.content[0].id)).toEqual(['call_PARIS', 'call_ROME']);
  });

  it('is idempotent: the view normalized as a generic request is itself', () => {
    for (const body of [right, turn2(output('ct', 'x'), { type: 'custom_tool_call_output', call_id: 'cc', output: '1' }, { role: 'tool', tool_call_id: 7, content: 'n' })]) {
      const view = normalizeRequest(body).view;
      expect(new TextDecoder().decode(canonicalize(normalizeRequest(view, { provider: 'generic' }).view))).toBe(new TextDecoder().decode(canonicalize(view)));
    }
  });

  it('a dangling id still takes its number, so the ids whose call is in the request are named as before', () => {
    const v = requestKeys({
      model: 'gpt-4.1',
      previous_response_id: 'resp_1',
      input: [output('call_OLD', 'a'), { type: 'function_call', call_id: 'call_NEW', name: 'f', arguments: '{}' }, output('call_NEW', 'b')],
    }).view as Obj;
    expect(v.messages.map((msg: Obj) => msg.content[0].id)).toEqual(['call_OLD', 'call_1', 'call_1']);
  });

  it('a dangling id spelled like a positional name keeps that name (it could pass for another id)', () => {
    const body = {
      model: 'gpt-4o',
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ id: 'X', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'X', content: 'a' },
        { role: 'tool', tool_call_id: 'call_0', content: 'b' },
      ],
    };
    const ids = (requestKeys(body).view as Obj).messages.map((msg: Obj) => msg.content[0].id);
    // Kept as given it would read as X's name, as if both results answered X.
    expect(ids).toEqual(['call_0', 'call_0', 'call_1']);
    expect(requestDigests(bytesOf(body)).key).toBe(key(body));
  });

  it('output items of other tools (custom_tool_call_output, ...) and Anthropic or chat results without their call keep their ids too', () => {
    const custom = (id: string): Obj => ({ model: 'gpt-5', previous_response_id: 'resp_1', input: [{ type: 'custom_tool_call_output', call_id: id, output: '1' }] });
    expect(key(custom('call_A'))).not.toBe(key(custom('call_B')));
    const anthropic = (id: string): Obj => ({ model: 'claude', max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'r' }] }] });
    expect(key(anthropic('toolu_A'))).not.toBe(key(anthropic('toolu_B')));
    const chat = (id: string): Obj => ({ model: 'gpt-4o', messages: [{ role: 'tool', tool_call_id: id, content: 'r' }] });
    expect(key(chat('call_A'))).not.toBe(key(chat('call_B')));
    for (const b of [custom('call_A'), anthropic('toolu_A'), chat('call_A')]) expect(requestDigests(bytesOf(b)).key).toBe(key(b));
  });

  it('the raw paths leave a dangling request to the reference (it keys it in a second pass)', () => {
    const before = { answered: rawPathCounts.answered, declined: rawPathCounts.declined };
    requestDigests(bytesOf(swapped));
    expect(rawPathCounts.answered).toBe(before.answered);
    if (backend() !== 'js') expect(rawPathCounts.declined).toBe(before.declined + 1);
  });
});

// Keys computed by the code before this change (git HEAD 2026-12-06): requests whose every result
// has its call in the request must keep them, or existing tapes would stop replaying.
describe(`requests without dangling ids keep their keys (${backend()})`, () => {
  const pinned: [string, unknown, string][] = [
    [
      'Responses loop with its calls',
      {
        model: 'gpt-4.1',
        tools,
        input: [
          { role: 'user', content: 'Weather and time in Paris?' },
          { type: 'function_call', call_id: 'call_PARIS', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call', call_id: 'call_ROME', name: 'get_time', arguments: '{"city":"Paris"}' },
          output('call_PARIS', 'rainy'),
          output('call_ROME', '10:00'),
        ],
      },
      'b8a00e2694f7a458a597d0c23b86718d3ebda8cd0cf82db34178b6a91c56490c',
    ],
    [
      'chat tool loop',
      {
        model: 'gpt-4o',
        messages: [
          { role: 'user', content: 'Weather and time in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_a', content: 'rainy' },
          { role: 'tool', tool_call_id: 'call_b', content: '10:00' },
        ],
      },
      '0a0fdfbec4eb6d874c23a10491caf9cc93ef4952d666d9f359c4c793e90e4822',
    ],
    [
      'Anthropic tool loop',
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'rainy' }] },
        ],
      },
      '1e087822880c1258afe05a9ee768350b6b6ed5386854a87e8b1512dcc2ea1242',
    ],
    [
      'AI SDK tool loop',
      {
        model: 'gpt-4o',
        prompt: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'get_weather', input: { city: 'Paris' } }] },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'get_weather', output: { type: 'text', value: 'rainy' } }] },
        ],
      },
      '0bfa2dd333363f7b09a23506ce815ea32b11abef139d014f19e7d94d5f5ae7c2',
    ],
    [
      'custom tool loop',
      {
        model: 'gpt-5',
        input: [
          { role: 'user', content: 'run it' },
          { type: 'custom_tool_call', call_id: 'call_X', name: 'code_exec', input: 'print(1)' },
          { type: 'custom_tool_call_output', call_id: 'call_X', output: '1' },
        ],
      },
      '56aed6ced087f2c26971d00613ba11d1e8d06847d8ee6418e4ca510ed449d72f',
    ],
    [
      'a result before its call',
      {
        model: 'gpt-4o',
        messages: [
          { role: 'tool', tool_call_id: 'call_z', content: 'early' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_z', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        ],
      },
      'daa07820a6d51e44362c79b7cf00a29c118c816647fff4f1c7033e8137caa318',
    ],
    [
      'Anthropic server tool use and its result',
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        messages: [
          { role: 'user', content: 'search' },
          {
            role: 'assistant',
            content: [
              { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
              { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
            ],
          },
        ],
      },
      '1e10a99b6a027a2be515e05a755a3af6255d433d04b7ae54e95bebb06f9be3d4',
    ],
  ];
  for (const [name, body, expected] of pinned) {
    it(name, () => {
      expect(key(body)).toBe(expected);
      expect(requestDigests(bytesOf(body)).key).toBe(expected);
    });
  }
});
