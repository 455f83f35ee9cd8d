// docs/vitest.md's node:test recipe ("node:test, or your own hooks"), taken from the docs as they
// are, in tests that run at once (`describe(..., { concurrency: true })`). Before, the recipe kept
// the tape in one module-level variable: every beforeEach set it, so all three tests recorded
// into the last-opened test's tape, under that test's name, and a run of one test alone said it
// was never recorded. Now it keys each tape by the test context: each test records into its own
// tape, under its own name, and replays alone. node --test really runs (spawned).
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('node-test-concurrent');

/** The recipe's code block in docs/vitest.md: its hooks, and how its test gets its fetch. */
function recipe(): { hooks: string; params: string; fetch: string } {
  const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'vitest.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## node:test, or your own hooks'));
  const block = /```js\n([^]*?)```/.exec(section)![1]!;
  const at = block.search(/^test\(/m);
  const testLine = block.slice(at).split('\n').slice(0, 3).join('\n');
  return {
    hooks: block.slice(0, at),
    params: /async \(([^)]*)\) =>/.exec(testLine)![1]!,
    fetch: /fetch: ([^,]+),/.exec(testLine)![1]!,
  };
}

function testFile(): string {
  const r = recipe();
  return `${r.hooks}
import { describe } from 'node:test';
describe('conc', { concurrency: true }, () => {
  for (const name of ['alpha', 'beta', 'gamma']) {
    test(name, async (${r.params}) => {
      const f = ${r.fetch};
      await new Promise((done) => setTimeout(done, 50));
      const res = await f(process.env.UPSTREAM + '/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'question ' + name }] }),
      });
      const answer = (await res.json()).choices[0].message.content;
      if (!answer.includes(name)) throw new Error('wrong answer for ' + name + ': ' + answer);
    });
  }
});
`;
}

describe('node:test recipe with concurrent tests', () => {
  it('records each test into its own tape, under its own name; one test replays alone', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'concurrent', {});
    const tapes = join(dir, 'test', '__tapes__');
    mkdirSync(join(dir, 'test'), { recursive: true });
    writeFileSync(join(dir, 'test', 'c.test.mjs'), testFile());
    const recorded = await sh('node --test test/c.test.mjs', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update' });
    expect(recorded.code, recorded.out).toBe(0);
    const names = existsSync(tapes) ? readdirSync(tapes).sort() : [];
    expect(names, recorded.out).toEqual(['conc-alpha.tape', 'conc-beta.tape', 'conc-gamma.tape']);
    for (const name of ['alpha', 'beta', 'gamma']) {
      const owners = (await readTape(join(tapes, `conc-${name}.tape`))).records.map((r) => (r.value as { test?: string }).test);
      expect(owners).toEqual([`test/c.test.mjs > conc > ${name}`]);
    }
    const alone = await sh("node --test --test-name-pattern='^alpha$' test/c.test.mjs", dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(alone.code, alone.out).toBe(0);
    expect(alone.out).toMatch(/# pass 1\b/);
  });
});
