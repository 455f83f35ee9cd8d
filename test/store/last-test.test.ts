// lastTest (a pattern test that keeps its last answer) against the pattern's own test, for
// content types that repeat, alternate and change by one character, in random order.
import { describe, expect, it } from 'vitest';
import { lastTest } from '../../src/store/last-test.ts';
import { rng } from '../reference.ts';

describe('lastTest', () => {
  it("answers as the pattern's test does, whatever text came before", () => {
    const types = ['application/json', 'application/jsonx', 'text/event-stream', 'text/event-stream; charset=utf-8', 'application/vnd.api+json', 'Application/JSON', '', ' application/json'];
    for (const re of [/[/+]json\b/i, /^\s*text\/event-stream/i, /^application\/(?:[\w.+-]*\+)?json\s*(?:;|$)/i]) {
      const r = rng(20260505);
      const test = lastTest(re);
      for (let i = 0; i < 500; i++) {
        // Equal texts as other strings too (the answer is kept by content, not identity).
        const t = `${types[Math.floor(r() * types.length)]!}${r() < 0.5 ? '' : ' '}`;
        expect(test(t), `${re} on ${JSON.stringify(t)} (text ${i})`).toBe(re.test(t));
      }
    }
  });

  it('refuses a pattern whose test keeps state', () => {
    expect(() => lastTest(/json/g)).toThrow(TypeError);
    expect(() => lastTest(/json/y)).toThrow(TypeError);
  });
});
