// On a tape a test file's tests share (`per: 'file'`), describe('a') > test('b > c') and
// describe('a > b') > test('c') were both recorded as `<file> > a > b > c`: the second test
// replayed the first one's answer. Now a name holding ' > ' is escaped in the recorded name, and
// each test replays its own answer. vitest really runs (spawned).
import { describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { join } from 'node:path';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('identity-escape');

const testFile = `import { test as base, describe } from 'vitest';
import { tapedeckFixtures } from 'llm-tapedeck/vitest';
const test = base.extend(tapedeckFixtures({ per: 'file' }));
const ask = async (f) => (await (await f(process.env.UPSTREAM + '/v1/chat/completions', {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'same question' }] }),
})).json()).choices[0].message.content;
describe('a', () => { test('b > c', async ({ tape }) => { console.log('GT1 ' + await ask(tape.fetch)); }); });
describe('a > b', () => { test('c', async ({ tape }) => { console.log('GT2 ' + await ask(tape.fetch)); }); });
`;

const answers = (out: string) => ({ one: /GT1 (.*)/.exec(out)?.[1], two: /GT2 (.*)/.exec(out)?.[1] });

describe('test names that hold " > "', () => {
  it('do not share recordings with a suite of that name on a per-file tape', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'identity-escape', {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { include: ['*.test.mjs'] } });\n`,
      'gt.test.mjs': testFile,
    });
    const recorded = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
    expect(recorded.code, recorded.out).toBe(0);
    const live = answers(recorded.out);
    expect(live.one).toBeDefined();
    expect(live.one).not.toBe(live.two);
    const names = (await readTape(join(dir, '__tapes__', 'gt.test.tape'))).records.map((r) => (r.value as { test?: string }).test);
    expect(names.sort()).toEqual(['gt.test.mjs > a > b \\> c', 'gt.test.mjs > a \\> b > c']);
    const replayed = await sh('npx vitest run', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(replayed.code, replayed.out).toBe(0);
    expect(answers(replayed.out)).toEqual(live);
  });
});
