// The name a test's recordings carry on a tape several tests share: suite and test names joined
// with ' > '. Before, describe('a') > test('b > c') and describe('a > b') > test('c') were both
// `a > b > c`, and on a per-file tape the second replayed the first's answers. A name holding
// ' > ' is escaped now; every other name is kept byte for byte (recorded tapes keep matching).
import { describe, expect, it } from 'vitest';
import { testPath } from '../../src/testing/test-identity.ts';
import { testCommandOf } from '../../src/testing/session.ts';

describe('testPath', () => {
  it('tells apart names that hold " > " from suites', () => {
    expect(testPath(['a', 'b > c'])).toBe('a > b \\> c');
    expect(testPath(['a > b', 'c'])).toBe('a \\> b > c');
    expect(testPath(['a', 'b > c'])).not.toBe(testPath(['a > b', 'c']));
    // A backslash in such a name is escaped too, so no two names meet.
    expect(testPath(['x \\> y > z'])).toBe('x \\\\\\> y \\> z');
  });

  it('keeps every name without " > " as it was', () => {
    for (const names of [['chat', 'says hello'], ['a>b', 'c->d', 'x >y', 'back\\slash'], ['asks (#2)']]) expect(testPath(names)).toBe(names.join(' > '));
  });
});

// node:test names a test in a describe block by its full name (`t.fullName`, 'english > greets'),
// which docs/vitest.md's recipe now passes as `test`. Node 20 matches --test-name-pattern against
// each test's own name, so a pattern of the full name ran nothing: the printed record command
// recorded nothing.
describe('testCommandOf (node:test)', () => {
  const env = { NODE_TEST_CONTEXT: 'child-v8' };
  it('matches a test in a describe block by its own name, or its whole name', () => {
    expect(testCommandOf({ test: 'english > greets', file: 'test/chat.test.mjs' }, env, '/p')).toBe("node --test --test-name-pattern='^(?:greets|english > greets)$' test/chat.test.mjs");
  });
  it('keeps a top-level test\'s command as it was', () => {
    expect(testCommandOf({ test: 'says hello', file: 'test/chat.test.mjs' }, env, '/p')).toBe("node --test --test-name-pattern='^says hello$' test/chat.test.mjs");
  });
});
