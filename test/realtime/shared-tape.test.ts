// Realtime sessions on a tape several tests share (a tape per file): each test's proxy
// (`tape.serve()`) records the sessions as that test's, and replays a test its own sessions,
// whatever ran before it. OpenAI Realtime sessions replay in connect order (the server speaks
// first, so no client frame can choose one): before sessions named their test, a test run alone
// got the first test's session, and its own frames missed against it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { askRealtime } from './ask.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-shared-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


describe('realtime sessions on a tape tests share', () => {
  it('each test replays its own session, also run alone, and its records name it', async () => {
    const tape = join(dir, 'voice.test.tape');
    const root = dir;
    const file = join(dir, 'voice.test.ts');
    const said = { greets: 'hi', 'says goodbye': 'bye' } as const;
    const fake = await startFakeRealtime();
    try {
      for (const [test, text] of Object.entries(said)) {
        const rec = openTestTape({ tape, mode: 'record', test, file, root, env: {} });
        try {
          const { url, ca } = await rec.serve({ upstream: fake.url });
          expect((await askRealtime(url, ca, text)).transcript).toBe(`You said: ${text}`);
        } finally {
          await rec.close();
        }
      }
    } finally {
      await fake.close();
    }
    // Each test in the order of the file, then the second one alone: its own session each time.
    for (const order of [['greets', 'says goodbye'], ['says goodbye']] as const) {
      for (const test of order) {
        const play = openTestTape({ tape, mode: 'replay', test, file, root, env: {} });
        const { url, ca } = await play.serve();
        const got = await askRealtime(url, ca, said[test]);
        await play.close();
        expect(got, `${test} in ${order.join(', ')}`).toEqual({ transcript: `You said: ${said[test]}`, errors: [] });
      }
    }
    const heads = (await readTape(tape)).records.map((r) => r.value as { role?: string; test?: string }).filter((v) => v.role === 'session');
    expect(heads.map((h) => h.test)).toEqual(['voice.test.ts > greets', 'voice.test.ts > says goodbye']);
  });
});
