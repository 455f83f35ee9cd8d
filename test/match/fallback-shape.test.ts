// No fallback crosses the answer's shape: signature matching, hybrid's signature and sequential
// steps and the sequential mode only serve a request recordings of the shape it asks for (a
// stream for a stream, a plain body for a plain request, the same n and format). A recording of
// another shape is an answer the client cannot read; with none of its shape, the request misses
// (docs/matching.md, "Fallbacks"). test/proxy/fallback-shape.test.ts holds it through the SDKs.
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/index.ts';
import { createMatcher, requestKeys, type Recording } from '../../src/match/index.ts';
import { errorOf } from '../helpers.ts';

type Body = Record<string, unknown>;
const chat = (text: string, extra: Body = {}): Body => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...extra });
const rec = (request: Body, answer: string): Recording => ({ request, response: answer });
const answer = (m: ReturnType<typeof createMatcher>, request: Body) => m.match(request).recording.response;

describe('the answer shape of a request', () => {
  it('is its shape-deciding arguments as the key holds them: defaults are no shape, the rest is', () => {
    expect(requestKeys(chat('a')).shape).toBe('');
    expect(requestKeys(chat('a', { stream: false, n: 1, response_format: { type: 'text' }, temperature: 0, max_tokens: 9 })).shape).toBe('');
    expect(requestKeys(chat('a', { stream: true })).shape).toBe('{"stream":true}');
    expect(requestKeys(chat('a', { n: 2, response_format: { type: 'json_object' } })).shape).toBe('{"n":2,"response_format":{"type":"json_object"}}');
    // Every API's streaming switch: Responses, Anthropic, Gemini's operation, Ollama (streamed unless told not to).
    expect(requestKeys({ model: 'gpt-4o-mini', input: 'a', stream: true }).shape).toBe('{"stream":true}');
    expect(requestKeys({ model: 'claude-sonnet-4-5', max_tokens: 9, system: 'x', stream: true, messages: [{ role: 'user', content: 'a' }] }).shape).toBe('{"stream":true}');
    const gemini = { contents: [{ role: 'user', parts: [{ text: 'a' }] }] };
    expect(requestKeys(gemini, { endpoint: { method: 'POST', url: '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse' } }).shape).toBe('{"alt":"sse","operation":"streamGenerateContent"}');
    expect(requestKeys(gemini, { endpoint: { method: 'POST', url: '/v1beta/models/gemini-2.5-pro:generateContent' } }).shape).toBe('');
    expect(requestKeys({ model: 'llama3.2', messages: [{ role: 'user', content: 'a' }] }, { endpoint: { method: 'POST', url: '/api/chat' } }).shape).toBe('{"stream":true}');
  });
});

describe.each(['signature', 'hybrid'] as const)('mode %s', (mode) => {
  it('a stream request gets a streamed recording of its signature, a plain one a plain recording', () => {
    const m = createMatcher({ mode, recordings: [rec(chat('Hello'), 'plain hello'), rec(chat('Hello'), 'plain hello 2'), rec(chat('Tell me a story', { stream: true }), 'streamed story')] });
    const joke = m.match(chat('Tell me a joke', { stream: true }));
    expect([joke.recording.response, joke.matchedBy]).toEqual(['streamed story', 'signature']);
    expect(answer(m, chat('Hi'))).toBe('plain hello');
    expect(answer(m, chat('Hi'))).toBe('plain hello 2');
    // Both plain recordings used, no repeats: the story is not a plain answer.
    expect(errorOf(() => m.match(chat('Hi'))).code).toBe('E_MISS');
  });

  it('n and the response format partition the candidates too', () => {
    const m = createMatcher({
      mode,
      allowRepeats: true,
      recordings: [rec(chat('a'), 'text'), rec(chat('b', { n: 2 }), 'two choices'), rec(chat('c', { response_format: { type: 'json_object' } }), 'json')],
    });
    expect(answer(m, chat('x', { response_format: { type: 'json_object' } }))).toBe('json');
    expect(answer(m, chat('x', { n: 2 }))).toBe('two choices');
    expect(answer(m, chat('x'))).toBe('text');
    expect(errorOf(() => m.match(chat('x', { n: 3 }))).code).toBe('E_MISS');
  });

  it('with no recording of its shape, a request misses, and the report says why its signature did not do', () => {
    const m = createMatcher({ mode, allowRepeats: true, recordings: [rec(chat('Hello'), 'plain hello')] });
    const e = errorOf(() => m.match(chat('Tell me a joke', { stream: true })));
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e.code).toBe('E_MISS');
    expect(e.details.report).toContain('1 recording has this signature but answers in another shape than this request\'s ({"stream":true}): no fallback serves one');
    expect(e.details.report).toContain('argument stream differs: true vs false');
    const plainOnly = createMatcher({ mode, recordings: [rec(chat('Story', { stream: true }), 'streamed')] });
    expect(errorOf(() => plainOnly.match(chat('Hi'))).details.report).toContain("answers in another shape than this request's (a plain answer)");
  });
});

describe('sequential steps', () => {
  // The signatures differ (one tool or none), so only the sequential step could answer.
  const tool = { type: 'function', function: { name: 'search', parameters: { type: 'object' } } };
  const recordings = () => [rec(chat('plain'), 'plain'), rec(chat('streamed', { stream: true }), 'streamed')];

  it("hybrid's sequential step takes the next recording of the request's shape", () => {
    const m = createMatcher({ mode: 'hybrid', recordings: recordings() });
    const r = m.match(chat('x', { stream: true, tools: [tool] }));
    expect([r.recording.response, r.matchedBy]).toEqual(['streamed', 'sequential']);
    expect(r.warnings[0]).toContain('fell back to the next recording in order of its answer shape ({"stream":true}), #1');
    expect(errorOf(() => m.match(chat('y', { stream: true, tools: [tool] }))).code).toBe('E_MISS');
    expect(answer(m, chat('z', { tools: [tool] }))).toBe('plain');
  });

  it('the sequential mode serves each shape in recorded order', () => {
    const m = createMatcher({ mode: 'sequential', recordings: recordings() });
    expect(answer(m, chat('x', { stream: true }))).toBe('streamed');
    expect(answer(m, chat('y'))).toBe('plain');
    expect(errorOf(() => m.match(chat('z', { stream: true }))).code).toBe('E_MISS');
  });
});
