// A tape path whose `.writers` folder mkdir refuses with ENOENT although its parent exists (a
// path on /proc or a similar pseudo-filesystem): record mode must fail at once with E_TAPE_IO
// naming the path, not retry forever at full CPU without a word.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

describe.runIf(existsSync('/proc/version'))('record mode on a tape under /proc', () => {
  it('is refused with E_TAPE_IO naming the path', async () => {
    const err = await startProxy({ upstream: 'http://127.0.0.1:9', tape: '/proc/version', mode: 'record', port: 0, onWarning: () => {} }).then(
      async (p) => {
        await p.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'E_TAPE_IO' });
    expect((err as Error).message).toContain('/proc/version');
  });
});
