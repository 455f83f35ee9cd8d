// docs/vitest.md's node:test recipe names a test's tape and recordings by `t.fullName`: with
// `t.name`, it('greets') in describe('english') and in describe('french') shared one tape and one
// name, and one replayed the other's answers. Here the recipe as the docs give it: each test
// replays its own answer, and the record command printed for a test in a describe block runs it
// (before, its pattern was the full name, which Node 20 matches against no test: it recorded
// nothing). node --test really runs (spawned).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('node-test-full-name');

const testFile = `import { afterEach, beforeEach, describe, it } from 'node:test';
import { openTestTape, slug } from 'llm-tapedeck/testing';
let tape;
beforeEach((t) => {
  tape = openTestTape({ tape: \`__tapes__/\${slug(t.fullName)}.tape\`, test: t.fullName, file: import.meta.filename });
});
afterEach(async () => { const t = tape; tape = undefined; await t?.close(); });
const ask = async () => {
  try {
    const r = await tape.fetch(process.env.UPSTREAM + '/v1/chat/completions', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'greet me' }] }),
    });
    return (await r.json()).choices?.[0]?.message?.content ?? 'none';
  } catch { return 'none'; }
};
describe('english', () => { it('greets', async () => { console.log('EN ' + await ask()); }); });
describe('french', () => { it('greets', async () => { console.log('FR ' + await ask()); }); });
`;

const tapes = (d: string): string[] => (existsSync(d) ? readdirSync(d).filter((n) => n.endsWith('.tape')).sort() : []);
const answers = (out: string) => ({ en: /EN (.*)/.exec(out)?.[1], fr: /FR (.*)/.exec(out)?.[1] });

describe('node:test recipe (t.fullName)', () => {
  it('gives each test of one name in two describe blocks its own tape and answers', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'node-test-full-name', { 'desc.test.mjs': testFile });
    const recorded = await sh('node --test desc.test.mjs', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
    expect(recorded.code, recorded.out).toBe(0);
    expect(tapes(join(dir, '__tapes__'))).toEqual(['english-greets.tape', 'french-greets.tape']);
    const live = answers(recorded.out);
    expect(live.en).not.toBe(live.fr);
    const replayed = await sh('node --test desc.test.mjs', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(replayed.code, replayed.out).toBe(0);
    expect(answers(replayed.out)).toEqual(live);
  });

  it('prints a record command that records a test in a describe block', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'node-test-record-command', { 'desc.test.mjs': testFile });
    const ci = await sh('node --test desc.test.mjs', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(ci.code).not.toBe(0);
    const command = /Record it: (TAPEDECK_MODE=update [^\n]*english[^\n]*)/.exec(ci.out)?.[1];
    expect(command).toBe("TAPEDECK_MODE=update node --test --test-name-pattern='^(?:greets|english > greets)$' desc.test.mjs");
    const recorded = await sh(command!, dir, { UPSTREAM: suite.upstream.url });
    expect(recorded.code, recorded.out).toBe(0);
    expect(tapes(join(dir, '__tapes__'))).toContain('english-greets.tape');
    const again = await sh('node --test desc.test.mjs', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(again.code, again.out).toBe(0);
  });
});
