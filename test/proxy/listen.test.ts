// A proxy that cannot listen where it was told says where and what to do (E_LISTEN), from the
// library and from the command line, instead of an internal error to report as a bug; and a
// tape it made for the run is not left behind.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatCliError } from '../../src/cli-errors.ts';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-listen-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a port already in use', () => {
  it('is E_LISTEN with the host and port, and a hint naming --port for the command line', async () => {
    const other = createServer();
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as AddressInfo).port;
    const tape = join(dir, 'taken.tape');
    try {
      const err = (await startProxy({ tape, mode: 'record', upstream: 'http://127.0.0.1:9', port }).catch((e: unknown) => e)) as Error & { code: string; details: Record<string, unknown> };
      expect(err.code).toBe('E_LISTEN');
      expect(err.message).toContain(`Port ${port} on 127.0.0.1 is in use`);
      expect(err.details).toMatchObject({ host: '127.0.0.1', port });
      expect(existsSync(tape)).toBe(false);
      const text = formatCliError(err);
      expect(text).toMatch(/^tapedeck: E_LISTEN Port \d+ on 127\.0\.0\.1 is in use/);
      expect(text).toContain('--port 0');
      expect(text).not.toContain('bug in tapedeck');
    } finally {
      await new Promise<void>((r) => other.close(() => r()));
    }
  });

  it('an address that is not this machine is E_LISTEN too', async () => {
    // TEST-NET-1 (RFC 5737): never a local address.
    const err = (await startProxy({ tape: join(dir, 'addr.tape'), mode: 'replay', host: '192.0.2.1', port: 0 }).catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe('E_LISTEN');
    expect(err.message).toContain('192.0.2.1 is not an address of this machine');
  });

  it('a name that does not resolve, or an address spelt wrong, is E_LISTEN naming it, not a bug to report', async () => {
    // .invalid never resolves (RFC 2606); 999.1.1.1 is not an address, so it is looked up as a name.
    for (const host of ['nosuch.invalid', '999.1.1.1']) {
      const tape = join(dir, `unresolved-${host}.tape`);
      const err = (await startProxy({ tape, mode: 'record', upstream: 'http://127.0.0.1:9', host, port: 0 }).catch((e: unknown) => e)) as Error & { code: string; details: Record<string, unknown> };
      expect(err.code).toBe('E_LISTEN');
      expect(err.message).toContain(`${host} does not resolve to an address`);
      expect(err.details).toMatchObject({ host });
      expect(existsSync(tape)).toBe(false);
      const text = formatCliError(err);
      expect(text).toContain('another address with --host');
      expect(text).not.toContain('bug in tapedeck');
    }
  });
});

describe('an empty host', () => {
  it('is E_ARG before anything is opened: it would listen on every interface', async () => {
    for (const host of ['', ' ']) {
      const tape = join(dir, 'empty-host.tape');
      const err = (await startProxy({ tape, mode: 'record', upstream: 'http://127.0.0.1:9', host, port: 0 }).catch((e: unknown) => e)) as Error & { code: string };
      expect(err.code).toBe('E_ARG');
      expect(err.message).toContain('every interface');
      expect(formatCliError(err)).toContain('--host 0.0.0.0');
      expect(existsSync(tape)).toBe(false);
    }
  });
});
