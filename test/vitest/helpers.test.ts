// The runner-agnostic test helpers (llm-tapedeck/testing): tape names, the test mode rules,
// openTestTape against a real fake upstream, miss diagnoses, the run summary and pruning.
import OpenAI from 'openai';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { isCI, resolveTestMode } from '../../src/testing/mode.ts';
import { defaultTapePath, slug, testNamespace } from '../../src/testing/names.ts';
import { namespaceOf } from '../../src/store/backends/redis.ts';
import { formatSummary, pruneUnused, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { openTestTape, resolveTestStore } from '../../src/testing/session.ts';
import { testIdentity } from '../../src/testing/test-identity.ts';
import { recordCommandFor } from '../../src/vitest/fixture.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-testing-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

const client = (fetch: typeof globalThis.fetch) => new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', fetch, maxRetries: 0 });
const ask = (fetch: typeof globalThis.fetch, content: string, extra: Record<string, unknown> = {}) =>
  client(fetch).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

describe('tape names', () => {
  it('slug: only portable characters, bounded, stable, and distinct names stay distinct', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.string({ maxLength: 200 }), (a, b) => {
        const s = slug(a);
        expect(s).toMatch(/^[A-Za-z0-9._-]+$/);
        expect(s.length).toBeLessThanOrEqual(80);
        expect(s).not.toMatch(/^[-.]|[-.]$/);
        expect(slug(a)).toBe(s);
        // Long names that share their first 80 characters still get different tapes.
        const long = 'x'.repeat(100);
        if (a !== b) expect(slug(long + a)).not.toBe(slug(long + b));
      }),
    );
    expect(slug('streams a story (gpt-4o)')).toBe('streams-a-story-gpt-4o');
    expect(slug('Crème brûlée')).toBe('Creme-brulee');
    expect(slug('con')).toMatch(/^con-[0-9a-f]{8}$/); // a Windows device name
    expect(slug('???')).toMatch(/^test-[0-9a-f]{8}$/);
    // A test named after the tape it uses does not get a file ending in `.tape.tape`.
    expect(slug('uses this.tape')).toBe('uses-this-tape');
  });

  it('defaultTapePath: __tapes__ beside the test file, suites as folders; or under dir, keeping the file path', () => {
    const info = { file: '/p/test/chat.test.ts', names: ['chat', 'says hello'], root: '/p' };
    expect(defaultTapePath(info)).toBe('/p/test/__tapes__/chat.test/chat/says-hello.tape');
    expect(defaultTapePath(info, 'tapes')).toBe('/p/tapes/test/chat.test/chat/says-hello.tape');
    expect(defaultTapePath({ ...info, names: [] })).toBe('/p/test/__tapes__/chat.test.tape');
  });

  it('testNamespace: the tape path under the base namespace, always a valid namespace, distinct for distinct tapes', () => {
    expect(testNamespace('my-app', '/p/test/__tapes__/chat.test/chat/says-hello.tape', '/p')).toBe('my-app/test/__tapes__/chat.test/chat/says-hello');
    expect(testNamespace('ci', '/p/shared/one.tape', '/p')).toBe('ci/shared/one');
    // Outside the root: the file name and a digest of where it is.
    expect(testNamespace('ci', '/elsewhere/x.tape', '/p')).toMatch(/^ci\/[0-9a-f]{8}\/x$/);
    const segment = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 120 });
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.array(segment, { minLength: 1, maxLength: 4 }), (a, b) => {
        const tape = (names: string[]) => defaultTapePath({ file: '/p/test/chat.test.ts', names, root: '/p' });
        const na = testNamespace('base/ns', tape(a), '/p');
        // The store accepts it as a namespace (throws E_ARG otherwise).
        expect(namespaceOf('redis://h:1', { namespace: na })).toBe(na);
        expect(na.startsWith('base/ns/')).toBe(true);
        if (tape(a) !== tape(b)) expect(testNamespace('base/ns', tape(b), '/p')).not.toBe(na);
      }),
    );
  });

  it('resolveTestStore: the option, else TAPEDECK_STORE; false turns it off; anything but a Redis URL is E_ARG without the password', () => {
    const env = { TAPEDECK_STORE: 'redis://u:pw-secret@h:1/0?namespace=ci' };
    expect(resolveTestStore(undefined, env)).toEqual({ url: env.TAPEDECK_STORE, fromEnv: true });
    expect(resolveTestStore('redis://other:2', env)).toEqual({ url: 'redis://other:2', fromEnv: false });
    expect(resolveTestStore(false, env)).toBeUndefined();
    expect(resolveTestStore(undefined, {})).toBeUndefined();
    let err: { code?: string; message?: string } | undefined;
    try {
      resolveTestStore(undefined, { TAPEDECK_STORE: 'http://u:pw-secret@h:1' });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err?.code).toBe('E_ARG');
    expect(err?.message).toContain('TAPEDECK_STORE must be a redis:// or rediss:// URL');
    expect(err?.message).not.toContain('pw-secret');
    // The record command sets the store it came from the environment with, password masked.
    const cmd = recordCommandFor('test/a.test.ts', ['a'], undefined, env.TAPEDECK_STORE);
    expect(cmd).toBe("TAPEDECK_STORE='redis://u:<password>@h:1/0?namespace=ci' TAPEDECK_MODE=update npx vitest run test/a.test.ts -t '^a$'");
  });

  it('recordCommandFor: the -t pattern, read back by a real shell, selects that test by vitest full name', () => {
    const names = [
      ['chat', 'says hello'],
      ["it's (really) $HOME *fine*?", 'a [b] {c} | d \\ e'],
      ['ünïcode > “quotes”'],
    ];
    for (const n of names) {
      const cmd = recordCommandFor('test/a b.test.ts', n);
      expect(cmd.startsWith("TAPEDECK_MODE=update npx vitest run 'test/a b.test.ts' -t ")).toBe(true);
      const arg = cmd.slice(cmd.indexOf(' -t ') + 4);
      const pattern = execFileSync('sh', ['-c', `printf '%s' ${arg}`], { encoding: 'utf8' });
      const re = new RegExp(pattern);
      // vitest tests -t against the suite names and test name joined by spaces (its full name).
      expect(re.test(n.join(' '))).toBe(true);
      expect(re.test(`${n.join(' ')} again`)).toBe(false);
      // Anchored at the start too: the same test name in a suite whose name ends the same
      // (`old chat` > `says hello`) is another test, which the command must not re-record.
      expect(re.test(`old ${n.join(' ')}`)).toBe(false);
    }
  });

  it('testIdentity: the test file (relative, with /) and name a shared tape\'s records carry, the same on every OS', () => {
    // The vitest fixture's names start with their file; jest, mocha and node:test give the name alone.
    expect(testIdentity('test/chat.test.ts > chat > says hello', 'test/chat.test.ts', '/p')).toBe('test/chat.test.ts > chat > says hello');
    expect(testIdentity('test\\chat.test.ts > chat > says hello', 'test\\chat.test.ts', 'C:\\p')).toBe('test/chat.test.ts > chat > says hello');
    expect(testIdentity('chat says hello', 'test/chat.test.js', '/p')).toBe('test/chat.test.js > chat says hello');
    expect(testIdentity('chat says hello', '/p/test/chat.test.js', '/p')).toBe('test/chat.test.js > chat says hello');
    // A name with a backslash of its own keeps it.
    expect(testIdentity('a \\ b', 'test/x.test.js', '/p')).toBe('test/x.test.js > a \\ b');
    expect(testIdentity('says hello', undefined, '/p')).toBe('says hello');
    expect(testIdentity(undefined, 'test/x.test.js', '/p')).toBeUndefined();
  });
});

describe('test mode', () => {
  it('run switches beat the option; CI alone means replay; otherwise update', () => {
    expect(resolveTestMode({ env: {} })).toEqual({ mode: 'update', source: 'default' });
    expect(resolveTestMode({ env: { CI: 'true' } })).toEqual({ mode: 'replay', source: 'CI' });
    expect(resolveTestMode({ env: { CI: '0' } }).mode).toBe('update');
    expect(resolveTestMode({ env: { CI: 'true', TAPEDECK_MODE: 'update' } })).toEqual({ mode: 'update', source: 'TAPEDECK_MODE' });
    expect(resolveTestMode({ option: 'record', env: { CI: '1' } })).toEqual({ mode: 'record', source: 'option' });
    expect(resolveTestMode({ option: 'record', env: { TAPEDECK_MODE: 'replay' } })).toEqual({ mode: 'replay', source: 'TAPEDECK_MODE' });
    expect(resolveTestMode({ option: 'record', cliMode: 'Update', env: { TAPEDECK_MODE: 'replay' } })).toEqual({ mode: 'update', source: 'vitest --mode' });
    expect(() => resolveTestMode({ env: { TAPEDECK_MODE: 'recrod' } })).toThrow(expect.objectContaining({ code: 'E_MODE' }));
    expect(() => resolveTestMode({ cliMode: 'nope', env: {} })).toThrow(/vitest --mode/);
    expect(isCI({ CI: 'false' })).toBe(false);
    expect(isCI({ CI: '' })).toBe(false);
  });
});

describe('openTestTape', () => {
  it('opens the tape on the first request only: a test that sends none writes nothing', async () => {
    const runDir = join(dir, 'run-lazy');
    const tape = openTestTape({ tape: join(dir, 'lazy.tape'), env: {}, runDir });
    const report = await tape.close();
    expect(report.added).toBe(0);
    expect(existsSync(tape.path)).toBe(false);
    expect(existsSync(runDir)).toBe(false);
  });

  it('in CI with no recording: the SDK fails at once with the diagnosis and the record command, and no tape is written', async () => {
    const calls = up.calls.length;
    // The root makes the path in the headline short wherever the suite runs (a deep path gets a
    // line of its own: the next test).
    const tape = openTestTape({ tape: join(dir, 'ci', 'never.tape'), root: dir, env: { CI: 'true' }, recordCommand: 'TAPEDECK_MODE=update npx vitest run t.test.ts' });
    expect(tape.mode).toBe('replay');
    const err = (await ask(tape.fetch, 'hello').catch((e: unknown) => e)) as Error & { status: number };
    expect(err.status).toBe(400);
    const lines = err.message.split('\n');
    expect(lines[0]).toMatch(/^400 tapedeck miss: this test was never recorded \(CI is set: nothing records\): no tape at ci\/never\.tape$/);
    expect(lines.slice(1)).toEqual(['Record it: TAPEDECK_MODE=update npx vitest run t.test.ts']);
    // Closing fails the test, caught miss or not, with the miss and its record command.
    const failed = (await tape.close().catch((e: unknown) => e)) as Error & { code: string; report: { misses: unknown[] } };
    expect(failed.code).toBe('E_MISS');
    expect(failed.message.split('\n')).toEqual([
      'tapedeck miss: 1 request had no recording in ci/never.tape:',
      '  POST /v1/chat/completions: the tape does not exist yet (this test was never recorded)',
      'Record it: TAPEDECK_MODE=update npx vitest run t.test.ts',
    ]);
    expect(failed.report.misses).toHaveLength(1);
    // The runner prints the message alone: no frames of tapedeck's own bundle under it.
    expect(failed.stack).toBe(`TapedeckError: ${failed.message}`);
    expect(up.calls.length).toBe(calls);
    expect(existsSync(join(dir, 'ci'))).toBe(false);
  });

  it("an invalid TAPEDECK_MODE names a test run's default, and comes without tapedeck's frames", () => {
    const err = (() => {
      try {
        openTestTape({ tape: join(dir, 'bad-mode.tape'), env: { TAPEDECK_MODE: 'recrod' } });
      } catch (e) {
        return e as Error & { code: string };
      }
      throw new Error('openTestTape accepted TAPEDECK_MODE=recrod');
    })();
    expect(err.code).toBe('E_MODE');
    expect(err.message).toContain('(default in tests update, replay when CI is set)');
    expect(err.message).not.toContain('default replay');
    expect(err.stack).toBe(`TapedeckError: ${err.message}`);
  });

  it('in CI, a tape path too long for the headline gets a line of its own, never clipped', async () => {
    // Deep enough that "no tape at <path>" passes the headline's length wherever the suite runs.
    const deep = join(dir, 'ci-deep', 'a-folder-name-long-enough-to-push-the-path-past-the-headline', 'and-another-one-just-as-long-as-the-first', 'never.tape');
    const tape = openTestTape({ tape: deep, env: { CI: 'true' }, recordCommand: 'TAPEDECK_MODE=update npx vitest run t.test.ts' });
    const err = (await ask(tape.fetch, 'hello').catch((e: unknown) => e)) as Error & { status: number };
    expect(err.status).toBe(400);
    const lines = err.message.split('\n');
    expect(lines[0]).toBe('400 tapedeck miss: this test was never recorded (CI is set: nothing records): its tape does not exist yet');
    expect(lines[1]).toBe('Record it: TAPEDECK_MODE=update npx vitest run t.test.ts');
    expect(lines[2]).toMatch(/^  tape: .*ci-deep\/.*\/never\.tape$/);
    expect(lines[2]).not.toContain('…');
    await expect(tape.close()).rejects.toMatchObject({ code: 'E_MISS' });
    expect(existsSync(join(dir, 'ci-deep'))).toBe(false);
  });

  it('a miss says first what differs from the closest recording', async () => {
    const path = join(dir, 'diagnose.tape');
    const rec = openTestTape({ tape: path, env: {} });
    await ask(rec.fetch, 'What is the capital of France?', { temperature: 0 });
    await rec.close();
    const command = "TAPEDECK_MODE=update npx vitest run test/geo.test.ts -t '^capitals$'";
    const replay = openTestTape({ tape: path, env: { TAPEDECK_MODE: 'replay' }, recordCommand: command });
    const changed = (await ask(replay.fetch, 'What is the capital of Spain?', { temperature: 0 }).catch((e: unknown) => e)) as Error;
    // The test's own record command, not createFetch's mode option nor tapedeck serve.
    expect(changed.message).not.toMatch(/createFetch|tapedeck serve|signature/);
    expect(changed.message.split('\n')).toEqual([
      `400 tapedeck miss: message 0 (user) text differs from the closest recording; record it: ${command}`,
      '  request:   "What is the capital of Spain?"',
      '  recording: "What is the capital of France?"',
    ]);
    const options = (await ask(replay.fetch, 'What is the capital of France?', { temperature: 1 }).catch((e: unknown) => e)) as Error;
    // With this long command the fix does not fit on the first line: it is the second.
    expect(options.message.split('\n')).toEqual(['400 tapedeck miss: argument temperature differs: sampling (not 0) vs 0 in the closest recording', `Record it: ${command}`]);
    await expect(replay.close()).rejects.toMatchObject({ code: 'E_MISS' });
    expect(replay.misses.map((m) => m.diagnosis)).toHaveLength(2);
    // failOnMiss: false (a runner helper that fails the test itself) closes quietly.
    const quiet = openTestTape({ tape: path, env: { TAPEDECK_MODE: 'replay' }, failOnMiss: false });
    await ask(quiet.fetch, 'What is the capital of Spain?', { temperature: 0 }).catch(() => {});
    expect((await quiet.close()).misses).toHaveLength(1);
    expect(quiet.missFailure()?.code).toBe('E_MISS');
  });

  it('run summary: recordings added, replayed, unused ones found on the tape, pruned, the used one still replays', async () => {
    const runDir = join(dir, 'run-summary');
    const path = join(dir, 'summary.tape');
    const rec = openTestTape({ tape: path, env: {}, runDir, test: 'records two' });
    await ask(rec.fetch, 'one');
    await ask(rec.fetch, 'two');
    await rec.close();
    const first = await summarizeRun(readTapeReports(runDir));
    expect(first).toMatchObject({ tapesWritten: 1, added: 2, hits: 0, unused: 0 });
    rmSync(runDir, { recursive: true });

    const replay = openTestTape({ tape: path, env: { CI: '1' }, runDir, test: 'replays one' });
    expect((await ask(replay.fetch, 'one')).choices[0]!.message.content).toMatch(/^Echo \d+: one$/);
    await replay.close();
    const second = await summarizeRun(readTapeReports(runDir));
    expect(second).toMatchObject({ tapesWritten: 0, added: 0, hits: 1, unused: 1 });
    const text = formatSummary(second, { root: dir, pruneCommand: 'TAPEDECK_PRUNE=1 npx vitest run' });
    expect(text.split('\n')[0]).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 1 replayed, 0 misses, 1 unused recording');
    expect(text).toContain('summary.tape (replay): 1 unused');
    expect(text).toContain('TAPEDECK_PRUNE=1 npx vitest run');

    expect(await pruneUnused(second)).toBe(1);
    const left = (await readTape(path)).records.map((r) => (r.value as { request: { body: { messages: { content: unknown }[] } } }).request.body.messages[0]!.content);
    expect(JSON.stringify(left)).toContain('one');
    expect(JSON.stringify(left)).not.toContain('two');
    const again = openTestTape({ tape: path, env: { CI: '1' } });
    expect((await ask(again.fetch, 'one')).choices[0]!.message.content).toMatch(/one$/);
    await again.close();
  });

  it('chaos(): faults for the rest of the test, retried to the recording, counted in the run summary, tape untouched', async () => {
    const runDir = join(dir, 'run-chaos');
    const path = join(dir, 'chaos.tape');
    const rec = openTestTape({ tape: path, env: {} });
    const recorded = (await ask(rec.fetch, 'retry me')).choices[0]!.message.content;
    await rec.close();
    const bytes = readFileSync(path);
    const replay = openTestTape({ tape: path, env: { CI: '1' }, runDir, test: 'retries' });
    // Before chaos(): answered as recorded.
    expect((await ask(replay.fetch, 'retry me')).choices[0]!.message.content).toBe(recorded);
    replay.chaos({ faults: { 429: 1 }, attempts: 1, retryAfterMs: 10, seed: 4 });
    const retried = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', fetch: replay.fetch, maxRetries: 1 });
    expect((await retried.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'retry me' }] })).choices[0]!.message.content).toBe(recorded);
    // Without retries the SDK raises the provider's own rate-limit error.
    await expect(ask(replay.fetch, 'retry me')).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    replay.chaos(undefined);
    expect((await ask(replay.fetch, 'retry me')).choices[0]!.message.content).toBe(recorded);
    const report = await replay.close();
    expect(report.faults).toEqual({ 429: 2 });
    expect(report.misses).toEqual([]);
    const summary = await summarizeRun(readTapeReports(runDir));
    expect(summary.faults).toEqual({ 429: 2 });
    expect(formatSummary(summary, { root: dir }).split('\n')[0]).toBe('tapedeck: 1 tape, 0 written, 0 recordings added, 3 replayed, 0 misses, 0 unused recordings, 2 faults injected (429 2)');
    expect(readFileSync(path).equals(bytes)).toBe(true);
    // A test runs in update mode locally: the faults apply there too (the test asked for them).
    // The faulted call, which the tape has no recording of, is recorded behind the fault (its
    // replay needs it: test/chaos/record-behind.test.ts), and its retry replays that recording.
    const upd = join(dir, 'chaos-update.tape');
    const local = openTestTape({ tape: upd, env: {} });
    expect(local.mode).toBe('update');
    local.chaos({ faults: { 503: 1 }, attempts: 1, retryAfterMs: 10 });
    const calls = up.calls.length;
    await expect(ask(local.fetch, 'fresh')).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    expect(up.calls.length).toBe(calls + 1);
    expect((await ask(local.fetch, 'fresh')).choices[0]!.message.content).toMatch(/fresh$/);
    expect(up.calls.length).toBe(calls + 1);
    await local.close();
    expect((await readTape(upd)).records.map((r) => (r.value as { response: { status: number } }).response.status)).toEqual([200]);
    // Refused outside replay when the test says live: false: every call says why.
    const strict = openTestTape({ tape: join(dir, 'chaos-rec.tape'), env: { TAPEDECK_MODE: 'record' } });
    strict.chaos({ faults: { 429: 1 }, live: false });
    await expect(ask(strict.fetch, 'x')).rejects.toThrow(/--chaos-live|live: true/);
    await strict.close();
  });

  it('cache(): a ReplayCache beside the tape in the same mode, closed with it', async () => {
    const path = join(dir, 'with-cache.tape');
    const rec = openTestTape({ tape: path, env: {} });
    const cache = await rec.cache();
    expect(await rec.cache()).toBe(cache);
    const request = { model: 'm', messages: [{ role: 'user', content: 'cached?' }] };
    expect(await cache.get(request)).toBeUndefined();
    await cache.put(request, { answer: 42 });
    const report = await rec.close();
    expect(cache.closed).toBe(true);
    expect(report).toMatchObject({ cacheTape: join(dir, 'with-cache.cache.tape'), cacheAdded: 1, added: 0 });
    expect(readdirSync(dir)).toContain('with-cache.cache.tape');
    const replay = openTestTape({ tape: path, env: { CI: '1' } });
    expect(await (await replay.cache()).get(request)).toEqual({ answer: 42 });
    await replay.close();
    await expect(replay.cache()).rejects.toMatchObject({ code: 'E_PROXY_CLOSED' });
  });

  it("cache(): a miss the code under test catches still fails the test, naming the cache's tape", async () => {
    const path = join(dir, 'cache-miss.tape');
    const rec = openTestTape({ tape: path, env: {} });
    const request = { model: 'm', messages: [{ role: 'user', content: 'cached once' }] };
    await (await rec.cache()).put(request, { answer: 1 });
    await rec.close();
    const replay = openTestTape({ tape: path, env: { CI: '1' }, recordCommand: 'TAPEDECK_MODE=update npx vitest run c.test.ts', test: 'caches' });
    const cache = await replay.cache();
    expect(await cache.get(request)).toEqual({ answer: 1 });
    // A caching layer that falls back to a default on any error: the miss is swallowed.
    const changed = { ...request, messages: [{ role: 'user', content: 'cached twice' }] };
    const answer = await cache.get(changed).catch(() => ({ answer: 'default' }));
    expect(answer).toEqual({ answer: 'default' });
    expect(replay.misses).toHaveLength(1);
    expect(replay.misses[0]).toMatchObject({ test: 'caches', route: `ReplayCache ${join(dir, 'cache-miss.cache.tape')}`, command: 'TAPEDECK_MODE=update npx vitest run c.test.ts' });
    expect(replay.misses[0]!.diagnosis).toMatch(/differs/);
    const failed = (await replay.close().catch((e: unknown) => e)) as Error & { code?: string };
    expect(failed.code).toBe('E_MISS');
    expect(failed.message).toContain('cache-miss.cache.tape');
  });

  it('install(): the global fetch goes through the tape until close()', async () => {
    const original = globalThis.fetch;
    const tape = openTestTape({ tape: join(dir, 'installed.tape'), env: {} });
    tape.install({ hosts: [new URL(up.url).host] });
    const r = await fetch(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'global' }] }) });
    expect(r.headers.get('x-tapedeck-match')).toBe('recorded');
    await tape.close();
    expect(globalThis.fetch).toBe(original);
    expect((await readTape(tape.path)).records).toHaveLength(1);
  });
});
