// A call a test did not await, made after its tape closed: the SDK raises it at once (a final
// 400 saying the call came after its test ended, not a "Connection error." after retries), and
// the run summary lists it with what to do (await it), since the test itself has already passed.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-late-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a call after its test tape closed', () => {
  for (const used of [true, false]) {
    it(`is a final 400 and a line of the run summary (${used ? 'the tape served calls before' : 'nothing used the tape before'})`, async () => {
      const runDir = join(dir, `run-${used}`);
      const tape = openTestTape({ tape: join(dir, `late-${used}.tape`), mode: 'replay', test: 'chat > says hello', file: 'chat.test.ts', runDir, failOnMiss: false });
      let calls = 0;
      const client = new OpenAI({ baseURL: 'http://api.test/v1', apiKey: 'sk-unused', maxRetries: 2, fetch: ((i: string | URL | Request, init?: RequestInit) => (calls++, tape.fetch(i, init))) as typeof fetch });
      const ask = () => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e as Error & { status?: number });
      if (used) await ask();
      await tape.close();
      const before = calls;
      const err = await ask();
      expect(calls - before).toBe(1);
      expect(err.status).toBe(400);
      expect(err.message).toContain('This request came after its test ended');
      expect(err.message).toContain('Await every call in the test that makes it.');

      const text = formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
      expect(text).toMatch(new RegExp(`${used ? 2 : 1} misses?`));
      expect(text).toContain('chat > says hello: POST /v1/chat/completions: made after the test ended');
      expect(text).toContain('await every call the test makes');
    });
  }
});

// A client built with one test's tape.fetch and kept by the SDK (the OpenAI Agents SDK's default
// provider keeps the first client it is given: setDefaultOpenAIClient in a later test changes
// nothing) is used in the next test. Before, the next test failed with "This request came after
// its test ended ... Await every call", and the summary blamed the first test for an unawaited
// call: no await was missing. Now both say a client of an ended test was used again while the
// next test ran, and how to build it per test.
describe('a client kept from an earlier test', () => {
  it('names the test running now and says to build the client per test', async () => {
    const runDir = join(dir, 'run-kept');
    const first = openTestTape({ tape: join(dir, 'kept-1.tape'), mode: 'replay', test: 'agent > first', file: 'agent.test.ts', runDir, failOnMiss: false });
    const kept = new OpenAI({ baseURL: 'http://api.test/v1', apiKey: 'sk-unused', maxRetries: 0, fetch: first.fetch });
    await first.close();
    const second = openTestTape({ tape: join(dir, 'kept-2.tape'), mode: 'replay', test: 'agent > second', file: 'agent.test.ts', runDir, failOnMiss: false });
    try {
      const err = (await kept.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e)) as Error & { status?: number };
      expect(err.status).toBe(400);
      expect(err.message).toContain('while test "agent > second" was running');
      expect(err.message).toContain('Build the client inside each test');
      expect(err.message).not.toContain('Await every call in the test that makes it.');
    } finally {
      await second.close();
    }
    const text = formatSummary(await summarizeRun(readTapeReports(runDir)), { root: dir });
    expect(text).toContain('agent > first: POST /v1/chat/completions: made through this test\'s fetch after it ended, while "agent > second" was running');
    expect(text).toContain('build the client in each test from its own tape.fetch');
    // An unawaited call made while the next test runs looks the same: the fix names both.
    expect(text).toContain('fix: await every call the test makes; if it was awaited');
  });
});
