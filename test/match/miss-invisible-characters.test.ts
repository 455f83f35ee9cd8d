// A prompt that differed from its recording only by a character that prints as nothing or as
// another (a no-break space, a zero-width space, a soft hyphen, a decomposed accent) got a miss
// whose two excerpt lines read the same: the user saw no change. Such excerpts are now written
// with every character outside printable ASCII escaped, so the difference shows; excerpts that
// differ visibly are left as they are.
import { describe, expect, it } from 'vitest';
import { createMatcher, type Recording } from '../../src/match/index.ts';
import { visibleExcerpts } from '../../src/match/visible-excerpts.ts';
import { errorOf } from '../helpers.ts';

const req = (text: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content: text }] });
const rec = (text: string): Recording => ({ request: req(text), response: { text: `answer to ${text}` } });

/** The miss's two excerpt lines, without their labels. */
function lines(asked: string, recorded: string): [string, string] {
  const m = createMatcher({ mode: 'exact', recordings: [rec(recorded)] });
  const msg = errorOf(() => m.match(req(asked))).message;
  const a = /request: {3}(.*)/.exec(msg)?.[1];
  const b = /recording: (.*)/.exec(msg)?.[1];
  expect(a, msg).toBeDefined();
  return [a!, b!];
}

describe('miss excerpts that would read the same', () => {
  it.each([
    ['a no-break space', 'Say hello\u00a0to José', 'Say hello to José', '\\u00a0'],
    ['a zero-width space', 'Say hel\u200blo to José', 'Say hello to José', '\\u200b'],
    ['a soft hyphen', 'Say hel\u00adlo', 'Say hello', '\\u00ad'],
    ['a decomposed accent', 'Say hello to Jose\u0301', 'Say hello to José', '\\u0301'],
  ])('%s: the excerpts differ as shown, the character escaped', (_, asked, recorded, shown) => {
    const [a, b] = lines(asked, recorded);
    expect(a).not.toBe(b);
    expect(a).toContain(shown);
    expect(b).not.toContain(shown);
    // Printable ASCII stays as it is.
    expect(a).toContain('Say hel');
  });

  it('excerpts that differ visibly are shown as written, non-ASCII included', () => {
    const [a, b] = lines('Say hello to Zoë', 'Say hello to José');
    expect(a).toContain('Zoë');
    expect(b).toContain('José');
    expect(visibleExcerpts('"Привет"', '"Пока"')).toEqual(['"Привет"', '"Пока"']);
  });
});
