// A recorded test file moved (test/chat.test.mjs to test/chat/chat.test.mjs), through the real
// vitest with the plugin. Before, CI's miss said "this test was never recorded" and pointed at a
// live re-record, and the tapes left at the old place were never listed as unused nor pruned.
// Now the miss says where the recordings are and how to move them; and a run of every test file
// lists the old folder's tapes as unused (their test file is gone), which the prune removes. A
// run of some files only judges nothing of the kind.
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('moved-test-file');

const testFile = (name: string) => `import { test, expect } from 'llm-tapedeck/vitest';
test('${name}', async ({ tape }) => {
  const r = await tape.fetch(process.env.UPSTREAM + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: '${name}' }] }) });
  expect(r.status).toBe(200);
});
`;

describe('a moved test file (vitest)', () => {
  it('its miss says how to move the recordings; a whole run lists and prunes the old folder', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'moved', {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck({ drift: false })] });\n`,
    });
    mkdirSync(join(dir, 'test', 'chat'), { recursive: true });
    writeFileSync(join(dir, 'test', 'chat.test.mjs'), testFile('says hello'));
    writeFileSync(join(dir, 'test', 'other.test.mjs'), testFile('says goodbye'));
    const env = { UPSTREAM: suite.upstream.url };
    const recorded = await sh('npx vitest run', dir, { ...env, TAPEDECK_MODE: 'record' });
    expect(recorded.code, recorded.out).toBe(0);
    const old = join(dir, 'test', '__tapes__', 'chat.test', 'says-hello.tape');
    expect(existsSync(old)).toBe(true);

    renameSync(join(dir, 'test', 'chat.test.mjs'), join(dir, 'test', 'chat', 'chat.test.mjs'));
    const ci = await sh('npx vitest run', dir, { ...env, CI: '1' });
    expect(ci.code, ci.out).toBe(1);
    expect(ci.out).not.toContain('never recorded');
    expect(ci.out).toContain("this test's recordings are at test/__tapes__/chat.test/says-hello.tape");
    expect(ci.out).toContain('mkdir -p test/chat/__tapes__ && mv test/__tapes__/chat.test test/chat/__tapes__/chat.test');

    // Recorded again at the new place instead: a run of that file alone says nothing of the old
    // folder, and a pruning run of some files leaves it.
    const again = await sh('npx vitest run test/chat', dir, { ...env, TAPEDECK_MODE: 'update', TAPEDECK_PRUNE: '1' });
    expect(again.code, again.out).toBe(0);
    expect(again.out).not.toContain('test/__tapes__/chat.test/says-hello.tape');
    expect(existsSync(old)).toBe(true);

    // A whole passing run: the old folder's tape is unused (its test file is gone) and pruned.
    const whole = await sh('npx vitest run', dir, { ...env, CI: '1', TAPEDECK_PRUNE: '1' });
    expect(whole.code, whole.out).toBe(0);
    expect(whole.out).toContain('test/__tapes__/chat.test/says-hello.tape: 1 unused (its test file is gone: moved, renamed or deleted), pruned');
    expect(existsSync(old)).toBe(false);
    expect(existsSync(join(dir, 'test', 'chat', '__tapes__', 'chat.test', 'says-hello.tape'))).toBe(true);
    expect(existsSync(join(dir, 'test', '__tapes__', 'other.test', 'says-goodbye.tape'))).toBe(true);
  });
});
