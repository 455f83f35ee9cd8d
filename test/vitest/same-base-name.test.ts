// Two test files that differ only by their extension (`chat.test.ts` beside `chat.test.js`) both
// named their tapes `__tapes__/chat.test/`: their tests of the same name shared a tape, and a
// prune after a run of one of them (`CI=true TAPEDECK_PRUNE=1 npx vitest run chat.test.ts`)
// deleted the other's tapes as "no test opened this tape". Now the file whose extension comes
// first (TypeScript before JavaScript) keeps `__tapes__/chat.test/` and the other gets
// `__tapes__/chat.test.js/`, whichever files a run selects; a file alone with its name keeps its
// folder; and the orphan judgement never removes a tape a test file that exists but did not run
// whole may own: a folder named after several files is judged only when all of them ran, and a
// tape whose recordings name a test of such a file is kept wherever it is.
// The runners really run (spawned), as a user's project has them.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upstreamSuite } from '../proxy/upstream-suite.ts';
import { runnerProject, sh } from './runner-project.ts';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { defaultTapePath, tapeStem } from '../../src/testing/names.ts';
import { defaultTapeFolder, orphanRecordCount, orphanTapes } from '../../src/testing/orphan-tapes.ts';

const suite = upstreamSuite('same-base-name');

/** Tests that each ask the provider their own question and expect an answer. */
const tests = (it: string, fetchOf: string, names: string[], prefix: string) =>
  names
    .map(
      (n) => `${it}(${JSON.stringify(n)}, async (${fetchOf === 'tape.fetch' ? '{ tape }' : ''}) => {
  const r = await ${fetchOf}(process.env.UPSTREAM + '/v1/chat/completions', {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: ${JSON.stringify(`${prefix} ${n}`)} }] }),
  });
  if (r.status !== 200) throw new Error('status ' + r.status + ': ' + (await r.text()));
});
`,
    )
    .join('');

const tapeBytes = (dir: string, rel: string) => readFileSync(join(dir, rel));

describe('test files that differ only by extension get tape folders of their own', () => {
  it('vitest: chat.test.ts keeps __tapes__/chat.test/, chat.test.js gets __tapes__/chat.test.js/; a prune of one file keeps the other\'s tapes', { timeout: 180_000 }, async () => {
    const dir = runnerProject(suite.dir, 'vitest', {
      'vitest.config.mjs': `import { defineConfig } from 'vitest/config';\nimport { tapedeck } from 'llm-tapedeck/vitest/plugin';\nexport default defineConfig({ plugins: [tapedeck()], test: { include: ['*.test.{ts,js}'] } });\n`,
      'chat.test.ts': `import { test } from 'llm-tapedeck/vitest';\n${tests('test', 'tape.fetch', ['says hello'], 'ts')}`,
      'chat.test.js': `import { test } from 'llm-tapedeck/vitest';\n${tests('test', 'tape.fetch', ['says hello', 'says goodbye'], 'js')}`,
      'alone.test.ts': `import { test } from 'llm-tapedeck/vitest';\n${tests('test', 'tape.fetch', ['asks'], 'alone')}`,
    });
    const rec = await sh('npx vitest run', dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
    expect(rec.code, rec.out).toBe(0);
    const ts = '__tapes__/chat.test/says-hello.tape';
    const jsHello = '__tapes__/chat.test.js/says-hello.tape';
    const jsGoodbye = '__tapes__/chat.test.js/says-goodbye.tape';
    // The same test name in both files: two tapes, each with its own file's answer.
    expect(tapeBytes(dir, ts).includes('ts says hello')).toBe(true);
    expect(tapeBytes(dir, ts).includes('js says hello')).toBe(false);
    expect(tapeBytes(dir, jsHello).includes('js says hello')).toBe(true);
    // A file alone with its name keeps the folder it always had.
    tapeBytes(dir, '__tapes__/alone.test/asks.tape');
    const kept = [jsHello, jsGoodbye].map((p) => tapeBytes(dir, p));

    // The TypeScript file alone, in CI, pruning: the JavaScript file's tapes are not its own.
    const prune = await sh('npx vitest run chat.test.ts', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TAPEDECK_PRUNE: '1' });
    expect(prune.code, prune.out).toBe(0);
    expect(prune.out).not.toContain('no test opened this tape');
    expect([jsHello, jsGoodbye].map((p) => tapeBytes(dir, p))).toEqual(kept);
    const js = await sh('npx vitest run chat.test.js', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TAPEDECK_PRUNE: '1' });
    expect(js.code, js.out).toBe(0);
    expect(js.out).not.toContain('no test opened this tape');
    tapeBytes(dir, ts);
    const all = await sh('npx vitest run', dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true' });
    expect(all.code, all.out).toBe(0);
    expect(all.out).toContain('4 replayed, 0 misses, 0 unused recordings');
  });

  it('mocha: chat.test.mjs keeps __tapes__/chat.test/, chat.test.cjs gets __tapes__/chat.test.cjs/; a prune of one file keeps the other\'s tapes', { timeout: 120_000 }, async () => {
    const dir = runnerProject(suite.dir, 'mocha', {
      'chat.test.mjs': `import { tape } from 'llm-tapedeck/mocha';\n${tests('it', 'tape().fetch', ['says hello'], 'mjs')}`,
      'chat.test.cjs': `const { tape } = require('llm-tapedeck/mocha');\n${tests('it', 'tape().fetch', ['says hello', 'says goodbye'], 'cjs')}`,
    });
    const run = 'npx mocha --require llm-tapedeck/mocha';
    const rec = await sh(`${run} chat.test.mjs chat.test.cjs`, dir, { UPSTREAM: suite.upstream.url, TAPEDECK_MODE: 'record' });
    expect(rec.code, rec.out).toBe(0);
    expect(tapeBytes(dir, '__tapes__/chat.test/says-hello.tape').includes('mjs says hello')).toBe(true);
    const cjs = ['__tapes__/chat.test.cjs/says-hello.tape', '__tapes__/chat.test.cjs/says-goodbye.tape'];
    const kept = cjs.map((p) => tapeBytes(dir, p));
    expect(kept[0]!.includes('cjs says hello')).toBe(true);
    const prune = await sh(`${run} chat.test.mjs`, dir, { UPSTREAM: 'http://127.0.0.1:9', CI: 'true', TAPEDECK_PRUNE: '1' });
    expect(prune.code, prune.out).toBe(0);
    expect(prune.out).not.toContain('no test opened this tape');
    expect(cjs.map((p) => tapeBytes(dir, p))).toEqual(kept);
  });

  it('the folder name: decided by the files that exist, never by the run; the default path and the orphan scan agree', () => {
    const root = mkdtempSync(join(tmpdir(), 'tapedeck-stem-'));
    try {
      const file = (name: string) => {
        writeFileSync(join(root, name), '');
        return join(root, name);
      };
      const ts = file('chat.test.ts');
      expect(tapeStem(ts)).toBe('chat.test');
      const js = file('chat.test.js');
      const mjs = file('chat.test.mjs');
      // Not a test file's extension: no namesake.
      file('chat.test.json');
      expect([ts, js, mjs].map(tapeStem)).toEqual(['chat.test', 'chat.test.js', 'chat.test.mjs']);
      // Without the TypeScript file, the JavaScript one comes first.
      rmSync(ts);
      expect([js, mjs].map(tapeStem)).toEqual(['chat.test', 'chat.test.mjs']);
      for (const f of [js, mjs]) {
        expect(defaultTapeFolder(f)).toBe(join(root, '__tapes__', tapeStem(f)));
        expect(defaultTapePath({ file: f, names: ['a'], root })).toBe(join(root, '__tapes__', tapeStem(f), 'a.tape'));
        expect(defaultTapePath({ file: f, names: [], root })).toBe(join(root, '__tapes__', `${tapeStem(f)}.tape`));
        expect(defaultTapePath({ file: f, names: ['a'], root }, 'tapes')).toBe(join(root, 'tapes', tapeStem(f), 'a.tape'));
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a tape in the folder files of one name shared is judged only when its owner ran whole: every such file ran, or its recordings name a test of one that did', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tapedeck-shared-folder-'));
    const tape = async (path: string, test?: string) => {
      await createTape(path);
      await appendRecords(path, [{ v: 1, key: 'k', ...(test ? { test } : {}), request: { model: 'm' }, value: { text: 'x' }, recordedAt: '2026-01-01T00:00:00.000Z' }]);
      return path;
    };
    try {
      const ts = join(root, 'chat.test.ts');
      const js = join(root, 'chat.test.js');
      writeFileSync(ts, '');
      writeFileSync(js, '');
      const folder = join(root, '__tapes__', 'chat.test');
      mkdirSync(folder, { recursive: true });
      const opened = new Set([join(folder, 'says-hello.tape')]);
      // Recorded before recordings named their test, in the folder both files shared: either's.
      await tape(join(folder, 'says-goodbye.tape'));
      // Named after a test of the JavaScript file, and of the TypeScript file (a deleted test).
      const jsOwned = await tape(join(folder, 'owned.tape'), 'chat.test.js > owned');
      await tape(join(folder, 'deleted.tape'), 'chat.test.ts > deleted');
      const count = async (complete: string[]) => {
        const out: Record<string, number> = {};
        for (const c of orphanTapes(complete, opened)) out[c.tape.slice(folder.length + 1)] = await orphanRecordCount(c, complete, [root]);
        return out;
      };
      // The TypeScript file alone ran whole: only the tape that names its own deleted test is stale.
      expect(orphanTapes([ts], opened).map((c) => c.unrun)).toEqual([[js], [js], [js]]);
      expect(await count([ts])).toEqual({ 'deleted.tape': 1, 'owned.tape': 0, 'says-goodbye.tape': 0 });
      // Both ran whole, and neither opened them (the JavaScript file's tapes are in chat.test.js/ now).
      expect(await count([ts, js])).toEqual({ 'deleted.tape': 1, 'owned.tape': 1, 'says-goodbye.tape': 1 });
      // A tape naming a test of a file that exists and did not run whole is kept wherever it is.
      expect(await orphanRecordCount({ tape: jsOwned, unrun: [] }, [ts], [root])).toBe(0);
      // Its file gone (a deleted test file's test): judged.
      rmSync(js);
      expect(await count([ts])).toEqual({ 'deleted.tape': 1, 'owned.tape': 1, 'says-goodbye.tape': 1 });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
