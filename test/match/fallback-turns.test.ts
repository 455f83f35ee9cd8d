// A fallback takes no turn of another request: the k-th ask of a key gets its k-th recording
// whatever fallbacks served before (docs/modes.md rule 1), and a request whose own recordings
// exist is answered by them or misses as used up, never by a fallback (docs/matching.md,
// "Fallbacks"). test/proxy/fallback-turns.test.ts holds it through the SDKs.
import { describe, expect, it } from 'vitest';
import { createMatcher, MatchIndex, type Recording } from '../../src/match/index.ts';
import { errorOf } from '../helpers.ts';

type Body = Record<string, unknown>;
const chat = (text: string, extra: Body = {}): Body => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...extra });
const rec = (request: Body, answer: string): Recording => ({ request, response: answer });
// "Hello" recorded twice, and "Goodbye", all of one signature and shape.
const tape = () => [rec(chat('Hello'), 'hello 1'), rec(chat('Hello'), 'hello 2'), rec(chat('Goodbye'), 'goodbye')];
const how = (m: ReturnType<typeof createMatcher>, body: Body) => {
  const r = m.match(body);
  return `${r.matchedBy} ${String(r.recording.response)}`;
};

describe.each(['hybrid', 'signature'] as const)('mode %s', (mode) => {
  it.each([false, true])('allowRepeats %s: fallbacks do not move the turns of "Hello"', (allowRepeats) => {
    const m = createMatcher({ mode, allowRepeats, recordings: tape() });
    expect(how(m, chat('Hi'))).toBe('signature hello 1');
    // Before: `exact hello 2` (hybrid), its second recording at its first ask.
    expect(how(m, chat('Hello'))).toBe('exact hello 1');
    expect(how(m, chat('Hi'))).toBe('signature hello 2');
    expect(how(m, chat('Hello'))).toBe('exact hello 2');
    expect(how(m, chat('Hi'))).toBe('signature goodbye');
    expect(how(m, chat('Goodbye'))).toBe('exact goodbye');
    expect(m.unused()).toEqual([]);
  });

  it('without repeats, "Hello" past its recordings misses as used up; it never falls back to "Goodbye"', () => {
    const m = createMatcher({ mode, recordings: tape() });
    expect(how(m, chat('Hello'))).toBe('exact hello 1');
    expect(how(m, chat('Hello'))).toBe('exact hello 2');
    const e = errorOf(() => m.match(chat('Hello')));
    expect([e.code, e.details.kind]).toEqual(['E_MISS', 'used-up']);
    expect(e.message).toContain('the 2 recordings of this request are already used');
    // "Goodbye" is still there for a request with no recording of its own.
    expect(how(m, chat('Hi'))).toBe('signature goodbye');
  });

  it('with repeats, "Hello" past its recordings gets its last one again', () => {
    const m = createMatcher({ mode, allowRepeats: true, recordings: tape() });
    expect([how(m, chat('Hello')), how(m, chat('Hello')), how(m, chat('Hello'))]).toEqual(['exact hello 1', 'exact hello 2', 'exact hello 2']);
  });
});

describe('signature mode: own recordings are those of the key and the signature', () => {
  it('a recording of the same key with other context keys is not the request\'s own', () => {
    const withContext = (keys: Body) => ({ messages: [{ role: 'user', content: 'a' }], context: keys });
    const m = createMatcher({ mode: 'signature', recordings: [rec(withContext({ node: 'start' }), 'start'), rec(withContext({ node: 'start', visited: [] }), 'visited')] });
    // Context values and keys are not in the key: both recordings share it.
    expect(how(m, withContext({ node: 'x', visited: ['y'] }))).toBe('exact visited');
    expect(how(m, withContext({ node: 'x' }))).toBe('exact start');
  });
});

describe('MatchIndex', () => {
  it('keeps a served recording out of fallbacks, and its turn for its own key', () => {
    const index = new MatchIndex();
    index.add('hello', 'sig');
    index.add('hello', 'sig');
    index.add('bye', 'sig', '{"stream":true}');
    expect(index.bySignatureDigest('sig')).toBe(0);
    index.markFallback(0);
    expect(index.isUsed(0)).toBe(true);
    expect(index.bySignatureDigest('sig')).toBe(1);
    expect(index.byRequestKey('hello')).toBe(0);
    index.markUsed(0);
    expect(index.byRequestKey('hello')).toBe(1);
    // The streamed recording is its shape's only candidate, and no plain one's.
    expect(index.bySignatureDigest('sig', '{"stream":true}')).toBe(2);
    expect(index.next('{"stream":true}')).toBe(2);
    expect(index.next()).toBe(1);
    expect([...index.usedFlags()]).toEqual([1, 0, 0]);
  });
});
