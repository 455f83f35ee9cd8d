// The matcher's memo ids a request's text by the SHA-256 of its UTF-8, where a lone surrogate is
// hashed as U+FFFD: a text holding a raw lone surrogate (no key: E_LONE_SURROGATE) was served the
// recording of the text with U+FFFD in its place. The answer (or the error) must not depend on
// whether the memo is on.
import { describe, expect, it } from 'vitest';
import { backend, createMatcher } from '../../src/index.ts';
import { errorOf } from '../helpers.ts';

const recText = '{"model":"gpt-4o","messages":[{"role":"user","content":"a\uFFFDb"}]}';
const badText = '{"model":"gpt-4o","messages":[{"role":"user","content":"a\uD800b"}]}';

describe(`matcher memo and lone surrogates (${backend()})`, () => {
  it.each([1024, 0])('memo %i: a text with a lone surrogate is E_LONE_SURROGATE, not the U+FFFD recording', (memo) => {
    const m = createMatcher({ mode: 'exact', memo, allowRepeats: true, recordings: [{ request: recText, response: 'answer' }] });
    expect(errorOf(() => m.match(badText)).code).toBe('E_LONE_SURROGATE');
    // Asked twice (the memo would hold it now if it had kept it), and the well-formed text still matches.
    expect(errorOf(() => m.match(badText)).code).toBe('E_LONE_SURROGATE');
    expect(m.match(recText).recording.response).toBe('answer');
    expect(m.match(new TextEncoder().encode(recText)).recording.response).toBe('answer');
  });
});
