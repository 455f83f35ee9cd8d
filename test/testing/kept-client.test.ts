// openTestTape on its own (node:test, your own hooks): a call made while one test's tape is open
// through the fetch of a test whose tape has closed (a client kept from the earlier test) makes
// the running test's tape fail it, as a miss does: missFailure() is E_PROXY_CLOSED, and close()
// rejects with it. Before, only a run summary (the vitest plugin, the jest reporter) said
// anything, and a test whose code caught the error passed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { openTestTape } from '../../src/testing/session.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-kept-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const call = (f: typeof fetch) =>
  f('http://api.test/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }) });

describe('a call through an ended test\'s fetch while another test runs', () => {
  it('fails the running test (missFailure, and close() with failOnMiss)', async () => {
    const first = openTestTape({ tape: join(dir, 'first.tape'), mode: 'replay', test: 'agent > first', file: 'agent.test.ts', runDir: join(dir, 'run') });
    const kept = first.fetch;
    await first.close();
    const second = openTestTape({ tape: join(dir, 'second.tape'), mode: 'replay', test: 'agent > second', file: 'agent.test.ts', runDir: join(dir, 'run') });
    const answer = await call(kept);
    expect(answer.status).toBe(400);
    const failure = second.missFailure();
    expect(failure).toBeInstanceOf(TapedeckError);
    expect(failure?.code).toBe('E_PROXY_CLOSED');
    expect(failure?.message).toContain('tapedeck: 1 call made while this test ran came through the tape.fetch of "agent > first", which had ended, and got no answer (POST /v1/chat/completions)');
    expect(failure?.message).toContain("Build the client inside each test from that test's tape.fetch");
    // Its own miss, too: both are said, the miss first.
    await call(second.fetch);
    const both = second.missFailure();
    expect(both?.code).toBe('E_MISS');
    expect(both?.message).toMatch(/^tapedeck miss: 1 request had no recording[\s\S]*\ntapedeck: 1 call made while this test ran came through/);
    await expect(second.close()).rejects.toMatchObject({ code: 'E_MISS' });
  });

  it('leaves a test alone whose own fetch was used', async () => {
    const first = openTestTape({ tape: join(dir, 'alone-1.tape'), mode: 'replay', test: 'first', file: 'a.test.ts', runDir: join(dir, 'run2') });
    await first.close();
    const second = openTestTape({ tape: join(dir, 'alone-2.tape'), mode: 'replay', test: 'second', file: 'a.test.ts', runDir: join(dir, 'run2') });
    expect(second.missFailure()).toBeUndefined();
    await second.close();
  });
});
