// startProxy({ port }) was passed to listen() unchecked: a string that is not a number made Node
// listen on a Unix socket of that name, and startProxy resolved with url
// "http://undefined:undefined"; a number out of range was Node's bare RangeError. A bad port is
// now E_ARG, as `tapedeck serve --port abc` is, before the tape is opened or anything listens.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-proxy-port-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('startProxy port', () => {
  for (const port of ['abc', join(dir, 'sock'), -1, 1.5, 70000, Number.NaN, '', true]) {
    it(`refuses ${JSON.stringify(port)}`, async () => {
      const tape = join(dir, 'p.tape');
      let err: unknown;
      try {
        const p = await startProxy({ upstream: 'http://127.0.0.1:9', tape, mode: 'record', port: port as never, onWarning() {} });
        await p.close();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_ARG');
      expect((err as TapedeckError).message).toContain('port');
      expect((err as TapedeckError).hint).toContain('0 to 65535');
      expect(existsSync(tape)).toBe(false);
      expect(existsSync(join(dir, 'sock'))).toBe(false);
    });
  }

  it('a port given as a string of digits (an environment variable) is that port', async () => {
    const probe = await startProxy({ upstream: 'http://127.0.0.1:9', tape: join(dir, 'q.tape'), mode: 'record', port: 0, onWarning() {} });
    const free = probe.port;
    await probe.close();
    const p = await startProxy({ upstream: 'http://127.0.0.1:9', tape: join(dir, 'q.tape'), mode: 'record', port: String(free) as never, onWarning() {} });
    try {
      expect(p.port).toBe(free);
      expect(p.url).toBe(`http://127.0.0.1:${free}`);
    } finally {
      await p.close();
    }
  });
});
