// The test tape's own proxy (`tape.serve()`, what the vitest fixture gives a test): a realtime
// client records through it and replays from it in the test's mode, TLS on by default with the
// CA handed back, closed with the tape; a realtime miss is in the tape's misses with the
// record command, as a fetch miss is.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { askRealtime } from './ask.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-fixture-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));


describe('tape.serve()', () => {
  it('records and replays a realtime session through the test tape, over TLS with its CA', async () => {
    const path = join(dir, 'serve.tape');
    const fake = await startFakeRealtime();
    const rec = openTestTape({ tape: path, mode: 'record', env: {} });
    try {
      const { url, ca } = await rec.serve({ upstream: fake.url });
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(ca).toMatch(/BEGIN CERTIFICATE/);
      expect((await askRealtime(url, ca, 'hi')).transcript).toBe('You said: hi');
    } finally {
      const report = await rec.close();
      expect(report.added).toBeGreaterThan(0);
      await fake.close();
    }
    const play = openTestTape({ tape: path, mode: 'replay', env: {} });
    const { url, ca } = await play.serve();
    expect((await askRealtime(url, ca, 'hi')).transcript).toBe('You said: hi');
    const miss = await askRealtime(url, ca, 'bye');
    expect(miss.errors[0]).toMatch(/text differs, "bye" vs "hi"/);
    // Closing fails the test with the miss (caught or not), as every test helper does.
    const failure = await play.close().then(() => undefined, (e: unknown) => e as Error & { code: string });
    expect(failure).toMatchObject({ code: 'E_MISS' });
    expect(play.misses).toHaveLength(1);
    // The command the miss gives, in the client's error event and in the test's failure, is one
    // that fixes it: a session with a recording is replayed whole in update mode, so it says record.
    const command = play.misses[0]!.command;
    expect(command).toMatch(/^TAPEDECK_MODE=record /);
    expect(failure!.message).toContain(`Record it: ${command}`);
    expect(miss.errors[0]).toContain(`re-record: ${command}`);
    const mode = /TAPEDECK_MODE=(\w+)/.exec(command)![1] as 'record';
    const fake2 = await startFakeRealtime();
    const again = openTestTape({ tape: path, mode, env: {} });
    try {
      const served = await again.serve({ upstream: fake2.url });
      expect((await askRealtime(served.url, served.ca, 'bye')).transcript).toBe('You said: bye');
      await again.close();
    } finally {
      await fake2.close();
    }
    const after = openTestTape({ tape: path, mode: 'replay', env: {} });
    const s3 = await after.serve();
    expect((await askRealtime(s3.url, s3.ca, 'bye')).transcript).toBe('You said: bye');
    await after.close();
  });
});
