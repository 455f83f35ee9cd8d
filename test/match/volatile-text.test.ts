// volatileText: a date, UUID or timestamp inside a prompt does not split recordings. The raw
// bytes path and the object path give the same digests with it, as they do without it.
import { describe, expect, it } from 'vitest';
import { createMatcher, requestDigests, requestKeys } from '../../src/match/matcher.ts';
import { VOLATILE_MARK, VOLATILE_PATTERNS } from '../../src/providers/volatile-text.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { MemoryBackend } from '../../src/store/backends/memory.ts';
import { errorOf, rejectionOf } from '../helpers.ts';

const enc = new TextEncoder();
const dated = (day: string, question = 'What is on today?') => ({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: `You are a helpful assistant. Today is ${day}. Session 1f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c1${day.at(-1)}.` },
    { role: 'user', content: [{ type: 'text', text: question }] },
  ],
});
const patterns = [VOLATILE_PATTERNS.date, VOLATILE_PATTERNS.uuid];

describe('volatileText', () => {
  it('two days of the same prompt share one key; without the option they do not', () => {
    const a = dated('2026-11-25');
    const b = dated('2026-11-26');
    expect(requestKeys(a).key).not.toBe(requestKeys(b).key);
    expect(requestKeys(a, { volatileText: patterns }).key).toBe(requestKeys(b, { volatileText: patterns }).key);
    // Other text still decides the key.
    expect(requestKeys(dated('2026-11-25', 'Other?'), { volatileText: patterns }).key).not.toBe(requestKeys(a, { volatileText: patterns }).key);
    const view = requestKeys(a, { volatileText: patterns }).view as { messages: { content: { text: string }[] }[] };
    expect(view.messages[0]!.content[0]!.text).toBe(`You are a helpful assistant. Today is ${VOLATILE_MARK}. Session ${VOLATILE_MARK}.`);
  });

  it('raw bytes and objects give the same digests, in every request shape', () => {
    const bodies: unknown[] = [
      dated('2026-01-02'),
      { model: 'claude-sonnet-4-5', max_tokens: 10, system: 'Now: 2026-11-25T21:48:59Z', messages: [{ role: 'user', content: 'hi 2026-11-25' }] },
      { model: 'gpt-4o', instructions: 'Date 2026-11-25.', input: 'id 1f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c13' },
      { model: 'gpt-4o', messages: [{ role: 'user', content: 'no dates at all' }] },
      {
        model: 'gpt-4o',
        messages: [
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'now', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'It is 2026-11-25T10:00:00+01:00' },
        ],
      },
    ];
    for (const opts of [{ volatileText: [VOLATILE_PATTERNS.isoTimestamp, ...patterns] }, { volatileText: ['\\d+'] }, {}]) {
      for (const body of bodies) {
        const fromObject = requestKeys(body, opts);
        const fromBytes = requestDigests(enc.encode(JSON.stringify(body)), opts);
        const fromText = requestDigests(JSON.stringify(body), opts);
        expect(fromBytes.key).toBe(fromObject.key);
        expect(fromText.key).toBe(fromObject.key);
        expect(fromBytes.pathHashes).toEqual(fromObject.pathHashes);
      }
    }
    // The tool result's text is message text too.
    const withTool = bodies[4]!;
    expect(requestKeys(withTool, { volatileText: patterns }).key).toBe(
      requestKeys(JSON.parse(JSON.stringify(withTool).replace('2026-11-25', '2027-01-01')), { volatileText: patterns }).key,
    );
  });

  it('a matcher answers tomorrow from today\'s recording; a miss shows the replaced spans', () => {
    const m = createMatcher({ mode: 'exact', recordings: [{ request: dated('2026-11-25'), response: 'ok' }], volatileText: patterns, allowRepeats: true });
    expect(m.match(enc.encode(JSON.stringify(dated('2026-11-26')))).recording.response).toBe('ok');
    expect(m.match(dated('2026-12-31')).recording.response).toBe('ok');
    const miss = errorOf(() => m.match(dated('2026-11-27', 'Something else?')));
    expect(miss.code).toBe('E_MISS');
    expect(miss.message).toContain('volatile text replaced before keying: "2026-11-27" (message 0), "1f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c17" (message 0)');
    expect(miss.details.volatileText).toEqual([
      { text: '2026-11-27', message: 0, pattern: VOLATILE_PATTERNS.date.source },
      { text: '1f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c17', message: 0, pattern: VOLATILE_PATTERNS.uuid.source },
    ]);
  });

  it('ReplayCache: a recording put on one day is served on the next; one made before the option was set too', async () => {
    const backend = new MemoryBackend();
    const before = await ReplayCache.open(backend, { mode: 'record' });
    await before.put(dated('2026-11-20', 'Old question?'), 'old answer');
    await before.close();
    const rec = await ReplayCache.open(backend, { mode: 'update', volatileText: patterns });
    await rec.put(dated('2026-11-25'), 'answer');
    await rec.close();
    const play = await ReplayCache.open(backend, { mode: 'replay', volatileText: patterns });
    expect(await play.get(dated('2026-11-26'))).toBe('answer');
    expect(await play.get(dated('2026-11-27', 'Old question?'))).toBe('old answer');
    const miss = await rejectionOf(play.get(dated('2026-11-26', 'New?')));
    expect(miss.message).toContain('volatile text replaced before keying: "2026-11-26"');
    await play.close();
  });

  it('bad patterns are E_ARG with a fix', () => {
    expect(errorOf(() => requestKeys(dated('x'), { volatileText: ['('] })).code).toBe('E_ARG');
    const empty = errorOf(() => requestKeys(dated('x'), { volatileText: [/\d*/] }));
    expect(empty.code).toBe('E_ARG');
    expect(empty.message).toContain('matches the empty string');
    expect(errorOf(() => requestKeys(dated('x'), { volatileText: 'date' as never })).code).toBe('E_ARG');
  });
});

// Gemini and Bedrock bodies are keyed by their own normalizers, which passed only ignoreArgs and
// volatileKeys on: volatileText replaced nothing there, so yesterday's recordings missed.
describe('volatileText for the providers keyed by their endpoint', () => {
  const cases = [
    {
      name: 'Gemini generateContent',
      endpoint: { method: 'POST', url: '/v1beta/models/gemini-2.5-flash:generateContent' },
      body: (day: string) => ({ systemInstruction: { parts: [{ text: `Today is ${day}.` }] }, contents: [{ role: 'user', parts: [{ text: `What day follows ${day}?` }] }] }),
    },
    {
      name: 'Gemini streamGenerateContent',
      endpoint: { method: 'POST', url: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse' },
      body: (day: string) => ({ contents: [{ role: 'user', parts: [{ text: `Today is ${day}.` }] }, { role: 'model', parts: [{ text: 'Noted.' }] }, { role: 'user', parts: [{ text: `And after ${day}?` }] }] }),
    },
    {
      name: 'Bedrock Converse',
      endpoint: { method: 'POST', url: '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse' },
      body: (day: string) => ({ system: [{ text: `Today is ${day}.` }], messages: [{ role: 'user', content: [{ text: `What day follows ${day}?` }] }] }),
    },
    {
      name: 'Bedrock InvokeModel (Anthropic body)',
      endpoint: { method: 'POST', url: '/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke' },
      body: (day: string) => ({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 10, system: `Today is ${day}.`, messages: [{ role: 'user', content: 'hi' }] }),
    },
  ];
  for (const c of cases) {
    it(`${c.name}: two days share one key, and other text still differs`, () => {
      const opts = { volatileText: patterns, endpoint: c.endpoint };
      const a = requestKeys(c.body('2026-11-25'), opts);
      expect(requestKeys(c.body('2026-11-26'), opts).key).toBe(a.key);
      expect(requestKeys(c.body('2026-11-25'), { endpoint: c.endpoint }).key).not.toBe(requestKeys(c.body('2026-11-26'), { endpoint: c.endpoint }).key);
      expect(JSON.stringify(a.view)).toContain(VOLATILE_MARK);
      expect(requestKeys(JSON.parse(JSON.stringify(c.body('2026-11-25')).replace('Today', 'Tomorrow')), opts).key).not.toBe(a.key);
      // The raw bytes give the same key as the object.
      expect(requestDigests(enc.encode(JSON.stringify(c.body('2026-11-26'))), opts).key).toBe(a.key);
    });
  }
});
