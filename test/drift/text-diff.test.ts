// The word diff against an independent oracle: a brute-force longest common subsequence (the
// textbook dynamic program) on small random token lists. Myers' script is shortest exactly when
// its kept tokens are as many as the LCS, and it must give both inputs back.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { diffText, diffTokens, inlineDiff, wordTokens } from '../../src/drift/text-diff.ts';

function lcsLength(a: readonly string[], b: readonly string[]): number {
  const t: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) t[i]![j] = a[i - 1] === b[j - 1] ? t[i - 1]![j - 1]! + 1 : Math.max(t[i - 1]![j]!, t[i]![j - 1]!);
  return t[a.length]![b.length]!;
}

/** Tokens of a run: diffTokens joins the tokens of a run, so they are split again. */
const count = (s: string, alphabet: boolean) => (alphabet ? s.length : wordTokens(s).length);

describe('diffTokens', () => {
  it('keeps as many tokens as the longest common subsequence and gives both inputs back', () => {
    const tokens = fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 14 });
    fc.assert(
      fc.property(tokens, tokens, (a, b) => {
        const ops = diffTokens(a, b);
        expect(ops.filter(([op]) => op !== '+').map(([, t]) => t).join('')).toBe(a.join(''));
        expect(ops.filter(([op]) => op !== '-').map(([, t]) => t).join('')).toBe(b.join(''));
        const kept = ops.filter(([op]) => op === '=').reduce((n, [, t]) => n + count(t, true), 0);
        expect(kept).toBe(lcsLength(a, b));
        // Runs alternate: no two neighbours share an op.
        for (let i = 1; i < ops.length; i++) expect(ops[i]![0]).not.toBe(ops[i - 1]![0]);
      }),
      { numRuns: 3000 },
    );
  });

  it('word tokens: the same on texts, whitespace kept as its own tokens', () => {
    const word = fc.constantFrom('the', 'sky', 'is', 'blue', 'grey', 'Paris.', 'x');
    const space = fc.constantFrom(' ', '  ', '\n');
    const text = fc.array(fc.tuple(word, space), { maxLength: 10 }).map((xs) => xs.map(([w, s]) => w + s).join(''));
    fc.assert(
      fc.property(text, text, (x, y) => {
        const d = diffText(x, y);
        expect(d.ops.filter(([op]) => op !== '+').map(([, t]) => t).join('')).toBe(x);
        expect(d.ops.filter(([op]) => op !== '-').map(([, t]) => t).join('')).toBe(y);
        const kept = d.ops.filter(([op]) => op === '=').reduce((n, [, t]) => n + count(t, false), 0);
        expect(kept).toBe(lcsLength(wordTokens(x), wordTokens(y)));
        expect(d.similarity).toBeGreaterThanOrEqual(0);
        expect(d.similarity).toBeLessThanOrEqual(1);
      }),
      { numRuns: 1000 },
    );
  });

  it('similarity is 2 x the words in common (the longest common subsequence of the words) / all words', () => {
    // Spaces are tokens of the diff, but not words: aligning spaces must not cost words in common.
    const word = fc.constantFrom('the', 'The', 'capital', 'of', 'France', 'is', 'Paris.', 'city');
    const text = fc.array(word, { maxLength: 12 }).map((ws) => ws.join(' '));
    const words = (t: string) => wordTokens(t).filter((w) => !/^\s/.test(w));
    fc.assert(
      fc.property(text, text, (x, y) => {
        const total = words(x).length + words(y).length;
        expect(diffText(x, y).similarity).toBeCloseTo(total === 0 ? 1 : (2 * lcsLength(words(x), words(y))) / total, 10);
      }),
      { numRuns: 2000 },
    );
    // A drift report's pair: five words in common ("1 to: Hello." and "capital of") of 21.
    expect(diffText('Answer 1 to: Hello. The capital of France is Paris.', 'Reply 1 to: Hello. Paris is the capital city of France!').similarity).toBeCloseTo(10 / 21, 10);
  });

  it('similarity, whitespace-only changes and the inline form', () => {
    expect(diffText('The sky is blue.', 'The sky is grey.').similarity).toBe(0.75);
    expect(diffText('a b', 'a  b').whitespaceOnly).toBe(true);
    expect(diffText('a b', 'a c').whitespaceOnly).toBe(false);
    expect(diffText('', '').similarity).toBe(1);
    expect(inlineDiff(diffText('The sky is blue.', 'The sky is grey.').ops)).toBe('The sky is [-blue.-]{+grey.+}');
  });

  it('a long rewrite past the edit limit is one removal and one insertion, still exact', () => {
    const a = Array.from({ length: 5000 }, (_, i) => `a${i}`);
    const b = Array.from({ length: 5000 }, (_, i) => `b${i}`);
    const ops = diffTokens(a, b);
    expect(ops.map(([op]) => op)).toEqual(['-', '+']);
  });
});
