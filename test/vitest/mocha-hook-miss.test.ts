// A request made in a describe block's afterEach hook in mocha, its miss caught by the code
// under test: mocha reports the test passed before that hook runs, and the wrapper that fails a
// test for its misses has judged it by then. Before, CI with no tape was green (exit 0, also
// with --parallel) while the summary listed the miss. Now the run fails, exit 1, with a line
// that names the test, the miss and the command that records it; recorded, the run passes.
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('mocha-hook-miss');

const testFile = `import { tape } from 'llm-tapedeck/mocha';
describe('cleanup', () => {
  afterEach(async () => {
    try {
      const r = await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'tidy' }] }),
      });
      await r.text();
    } catch {}
  });
  it('tidies up', async () => {});
  it('tidies again', async () => {});
});
`;

describe('mocha: a miss in a describe-level afterEach hook', () => {
  for (const parallel of [false, true]) {
    it(`fails the run with a line that says why${parallel ? ' (--parallel)' : ''}`, { timeout: 120_000 }, async () => {
      const dir = runnerProject(suite.dir, `mocha-hook${parallel ? '-parallel' : ''}`, { 'chat.test.mjs': testFile });
      const command = `npx mocha --require llm-tapedeck/mocha${parallel ? ' --parallel' : ''} chat.test.mjs`;
      const ci = await sh(command, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
      expect(ci.code, ci.out).toBe(1);
      // The rest of the suite still ran (no failing hook skipped it).
      expect(ci.out).toMatch(/2 passing/);
      expect(ci.out).toContain('tapedeck: the run fails: 2 requests had no recording in an afterEach hook, after mocha reported their tests passed (a hook does not hide a miss):');
      expect(ci.out).toContain("cleanup tidies up: POST /v1/chat/completions: the tape does not exist yet (this test was never recorded)\n    record it: TAPEDECK_MODE=update npx mocha --require llm-tapedeck/mocha chat.test.mjs --grep '^cleanup tidies up$'");
      const recorded = await sh(command, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'update' });
      expect(recorded.code, recorded.out).toBe(0);
      const replayed = await sh(command, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
      expect(replayed.code, replayed.out).toBe(0);
      expect(replayed.out).not.toContain('the run fails');
    });
  }
});
