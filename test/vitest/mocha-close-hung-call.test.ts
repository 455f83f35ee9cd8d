// mocha: a test that times out while its call still waits for an upstream that never answers.
// tapedeck's afterEach closes the tape, which gives the call the shutdown timeout and then
// aborts it unrecorded; mocha's default hook timeout (2 s) failed that hook first ("after each"
// hook timed out, a hook the user never wrote), and mocha skipped the rest of the suite. Now the
// hook has room for the bounded close: the test fails for its own timeout only, and the next test
// still runs. mocha really runs, through a shell; the upstream here holds every request it gets.
import { describe, expect, it } from 'vitest';
import { hungUpstream } from '../hung-upstream.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('mocha-close-hung-call');
const upstream = hungUpstream();

const testFile = `import { tape, configureTapes } from 'llm-tapedeck/mocha';
configureTapes({ shutdownTimeoutMs: 1500 });
describe('slow', () => {
  it('times out', async function () {
    this.timeout(300);
    await tape().fetch(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow' }] }),
    });
  });
  it('runs after it', () => {});
});
`;

describe('mocha: a test that timed out with a call the upstream never answers', () => {
  it('fails for its own timeout; the tape closes within its hook, and the next test runs', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'hung', { 'slow.test.mjs': testFile });
    const r = await sh('npx mocha --require llm-tapedeck/mocha slow.test.mjs', dir, { UPSTREAM: upstream.url, TAPEDECK_MODE: 'record' });
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toContain('Timeout of 300ms exceeded');
    expect(r.out).not.toContain('"after each" hook');
    expect(r.out).toMatch(/1 passing/);
  });
});
