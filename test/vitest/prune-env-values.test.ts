// TAPEDECK_PRUNE=on (or any value but 1, true, unused and yes) pruned nothing, without a word:
// the summary still counted the unused recordings. `on` now prunes, as the package's other
// switches take it; a value that is neither yes nor no is named in the summary, with the value
// to write. The runner really runs (spawned), as a user's project has it.
import { describe, expect, it } from 'vitest';
import { pruneNotUnderstood, pruneRequested } from '../../src/testing/mode.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';

const suite = upstreamSuite('prune-env-values');

const ask = (q: string) => `
  const r = await tape.fetch(process.env.UPSTREAM + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ${JSON.stringify(q)} }] }),
  });
  if (r.status !== 200) throw new Error('status ' + r.status + ': ' + (await r.text()));`;

describe('TAPEDECK_PRUNE values', () => {
  it('yes, no and neither', () => {
    for (const v of ['1', 'true', 'yes', 'on', 'ON', 'unused']) expect([pruneRequested({ TAPEDECK_PRUNE: v }), pruneNotUnderstood({ TAPEDECK_PRUNE: v })], v).toEqual([true, undefined]);
    for (const v of ['', '0', 'false', 'no', 'off']) expect([pruneRequested({ TAPEDECK_PRUNE: v }), pruneNotUnderstood({ TAPEDECK_PRUNE: v })], v).toEqual([false, undefined]);
    for (const v of ['enabled', 'y', 'prune']) {
      expect(pruneRequested({ TAPEDECK_PRUNE: v })).toBe(false);
      expect(pruneNotUnderstood({ TAPEDECK_PRUNE: v })).toContain(`TAPEDECK_PRUNE=${JSON.stringify(v)} is not understood`);
    }
  });

  it('in a vitest run: `enabled` is named and prunes nothing; `on` prunes', { timeout: 180_000 }, async () => {
    const dir = runnerProject(suite.dir, 'vitest', {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.js'] } });\n`,
      'a.test.js': `import { test } from 'llm-tapedeck/vitest';\ntest('asks', async ({ tape }) => {${ask('one')}${'\n  if (process.env.BOTH) {'}${ask('two')}\n  }\n});\n`,
    });
    const rec = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record', BOTH: '1' });
    expect(rec.code, rec.out).toBe(0);
    const unclear = await sh('npx vitest run', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TAPEDECK_PRUNE: 'enabled' });
    expect(unclear.code, unclear.out).toBe(0);
    expect(unclear.out).toContain('TAPEDECK_PRUNE="enabled" is not understood, so nothing was pruned');
    expect(unclear.out).toContain('1 unused recording');
    const on = await sh('npx vitest run', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TAPEDECK_PRUNE: 'on' });
    expect(on.code, on.out).toBe(0);
    expect(on.out).toContain('pruned 1 unused recording(s)');
  });
});
