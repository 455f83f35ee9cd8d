// `tapedeck rerecord` wrote each new recording without the `test` its original named. On a tape
// tests share (vitest's `per: 'file'`), moving the new tape over the old one made every test
// replay the first test's answer to a request they both make, and the next prune dropped the
// other test's answer as unused. Each new recording now names the original's test (and its place
// among that test's recordings); one whose original names no test is written as the recorder
// wrote it. The real OpenAI SDK records through createFetch against the loopback fake provider;
// the CLI runs from dist.
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { CLI, tmp } from '../mcp/helpers.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = tmp('rerecord-test-names');
let up: Upstream;

function run(args: string[]): Promise<{ status: number; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: 'sk-live-openai-key' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.resume();
    child.on('close', (status) => done({ status: status ?? -1, stderr }));
  });
}

beforeAll(async () => {
  expect(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
  up = await startUpstream();
  const plain = join(dir, 'plain.tape');
  rmSync(plain, { force: true });
  const fetch = createFetch({ tape: plain, mode: 'record', onWarning: () => {}, summary: false });
  try {
    const openai = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test-key', maxRetries: 0, fetch });
    // The same sampled question, asked by two tests (each its own answer), then one by neither.
    for (const q of ['Pick a number', 'Pick a number', 'What is the capital of France?']) {
      await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] });
    }
  } finally {
    await fetch.close();
  }
  // The tape as vitest's per-file tapes write it: each recording names the test that made it.
  const values = (await readTape(plain)).records.map((r) => r.value as Record<string, unknown>);
  const named = [
    { ...values[0], test: 'pick.test.ts > first', repeat: 0 },
    { ...values[1], test: 'pick.test.ts > second', repeat: 0 },
    values[2],
  ];
  const shared = join(dir, 'pick.test.tape');
  rmSync(shared, { force: true });
  const header = (await readTape(plain)).header as { salt?: string };
  await createTape(shared, { salt: header.salt });
  await appendRecords(shared, named);
}, 60_000);
afterAll(async () => {
  await up?.close();
});

describe('rerecord keeps the test each recording names', () => {
  it('the new recordings name the tests their originals named, in their places', async () => {
    const r = await run(['rerecord', 'pick.test.tape', '--yes', '--retries', '0', '--out', 'new.tape']);
    expect(r.stderr).toContain('recorded 3 of 3 into new.tape');
    const before = (await readTape(join(dir, 'pick.test.tape'))).records.map((x) => x.value as { test?: string; repeat?: number; recordedAt: string });
    const after = (await readTape(join(dir, 'new.tape'))).records.map((x) => x.value as { test?: string; repeat?: number; recordedAt: string });
    expect(after.every(isHttpRecord)).toBe(true);
    expect(after.map((x) => x.test)).toEqual(['pick.test.ts > first', 'pick.test.ts > second', undefined]);
    expect(after.map((x) => x.test)).toEqual(before.map((x) => x.test));
    expect(after.slice(0, 2).map((x) => x.repeat)).toEqual([0, 0]);
    // They are the new recordings, not the old ones carried over.
    after.forEach((x, i) => expect(x.recordedAt).not.toBe(before[i]!.recordedAt));
  });
});
