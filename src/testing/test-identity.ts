/**
 * The name a test's records carry on a tape several tests share (the `test` field,
 * docs/tape-format.md): the test file, relative to the project root with `/` separators, and
 * the test's name. Stable across machines and operating systems, and distinct for tests of the
 * same name in two files that share one tape through a `name` function.
 */
import { isAbsolute, relative } from 'node:path';

/**
 * The recorded name of a test: `<file> > <name>` (the vitest fixture's test names start with
 * their file already: that file is made relative and POSIX, the rest kept), or the name alone
 * without a file; undefined without a name.
 *
 * @example
 * testIdentity('says hello', 'test/chat.test.mjs', '/p')          // 'test/chat.test.mjs > says hello'
 * testIdentity('test\\chat.test.ts > chat > hi', 'test\\chat.test.ts', 'C:\\p') // 'test/chat.test.ts > chat > hi'
 */
export function testIdentity(test: string | undefined, file: string | undefined, root: string): string | undefined {
  if (test === undefined || test === '') return undefined;
  if (file === undefined || file === '') return test;
  const rel = testFileIdentity(file, root);
  const own = `${file} > `;
  return test.startsWith(own) ? `${rel} > ${test.slice(own.length)}` : `${rel} > ${test}`;
}

/**
 * The test file as a record's `test` field starts with it: relative to the project root, with
 * `/` separators. The run summary compares it with the records of a tape several test files
 * share, to tell a test file that did not run from a stale recording.
 *
 * @example
 * testFileIdentity('/p/test/chat.test.ts', '/p') // 'test/chat.test.ts'
 */
export function testFileIdentity(file: string, root: string): string {
  return (isAbsolute(file) ? relative(root, file) || file : file).replace(/\\/g, '/');
}

/**
 * Suite and test names joined with ` > `, as a test's recorded name has them, so that two tests
 * never share one: a name that holds ` > ` itself (`test('b > c')` in `describe('a')`) has its
 * `\` and `>` escaped with a `\`, or it would read as the test `c` of `describe('a > b')`, and on
 * a tape both share (`per: 'file'`) one would replay the other's answers. A name without ` > `
 * is kept as it is, byte for byte: recordings made before keep matching their tests (so a
 * name that already holds `\>` and no ` > ` could still meet an escaped one: not worth breaking
 * every recorded test name for).
 *
 * @example
 * testPath(['a', 'b > c']) // 'a > b \\> c'
 * testPath(['a > b', 'c']) // 'a \\> b > c'
 * testPath(['chat', 'says hello']) // 'chat > says hello'
 */
export function testPath(names: readonly string[]): string {
  return names.map((n) => (n.includes(' > ') ? n.replace(/[\\>]/g, '\\$&') : n)).join(' > ');
}

/**
 * The name a test is recorded under when it is the k-th test of its file with the same names
 * (the runners let two tests share a name: a copied test, `test.each` with a title that names no
 * case). Each one records and replays its own answers: the first keeps its plain name, so its
 * recordings stay its own; the k-th (k >= 2) gets ` (#k)` after its own name.
 *
 * @example
 * nthOfName(['chat', 'asks'], 1) // ['chat', 'asks']
 * nthOfName(['chat', 'asks'], 2) // ['chat', 'asks (#2)']
 */
export function nthOfName(names: readonly string[], k: number): string[] {
  if (k <= 1 || names.length === 0) return [...names];
  return [...names.slice(0, -1), `${names[names.length - 1]} (#${k})`];
}

/**
 * Each test's place among the tests before it with the same key (1 for the first), for tests in
 * the order their file lists them: the k of {@link nthOfName}.
 *
 * @example
 * const first = { name: 'asks' }, second = { name: 'asks' }
 * nthOfEach([first, second], (t) => t.name).get(second) // 2
 */
export function nthOfEach<T>(tests: Iterable<T>, keyOf: (test: T) => string): Map<T, number> {
  const seen = new Map<string, number>();
  const out = new Map<T, number>();
  for (const t of tests) {
    const key = keyOf(t);
    const k = (seen.get(key) ?? 0) + 1;
    seen.set(key, k);
    out.set(t, k);
  }
  return out;
}
