// `tapedeck serve --tls` with files that cannot serve: a tape given as the certificate, a key that
// is not the certificate's, swapped files. Node's OpenSSL error reached the user as E_INTERNAL
// ("This is a bug in tapedeck"). And --tls-ca beside --tls-cert/--tls-key was ignored without a
// word, so NODE_EXTRA_CA_CERTS then named a file that was never written.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tls-files-'));
const f = (name: string) => join(dir, name);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const a = await makeLocalCertificate();
  const b = await makeLocalCertificate();
  writeFileSync(f('a.crt'), a.cert);
  writeFileSync(f('a.key'), a.key);
  writeFileSync(f('b.key'), b.key);
  writeFileSync(f('not.pem'), Buffer.from([0x54, 0x44, 0x4b, 0x31, 0, 1, 2, 3]));
});

const serve = (...args: string[]) => spawnSync(process.execPath, [CLI, 'serve', '--upstream', 'http://127.0.0.1:9', '--tape', f('t.tape'), '--port', '0', '--tls', ...args], { encoding: 'utf8', timeout: 20_000 });

describe('tapedeck serve --tls with files that cannot serve', () => {
  it.each([
    ['a file that is no PEM as both', ['--tls-cert', 'not.pem', '--tls-key', 'not.pem'], /is not a PEM file/],
    ['swapped files', ['--tls-cert', 'a.key', '--tls-key', 'a.crt'], /is not a PEM file|is not the key of the certificate/],
    ["another certificate's key", ['--tls-cert', 'a.crt', '--tls-key', 'b.key'], /the key .*b\.key is not the key of the certificate .*a\.crt/],
  ])('%s: E_ARG naming the files, exit 2, no tape made', (_name, args, said) => {
    const out = serve(...args.map((a) => (a.startsWith('--') ? a : f(a))));
    expect(out.stderr).toContain('E_ARG');
    expect(out.stderr).toMatch(said);
    expect(out.stderr).not.toContain('bug in tapedeck');
    expect(out.status).toBe(2);
    expect(existsSync(f('t.tape'))).toBe(false);
  });

  it('--tls-ca with your own certificate is E_ARG, not ignored', () => {
    const out = serve('--tls-cert', f('a.crt'), '--tls-key', f('a.key'), '--tls-ca', f('ca.pem'));
    expect(out.stderr).toContain('E_ARG');
    expect(out.stderr).toContain('--tls-ca');
    expect(out.status).toBe(2);
    expect(existsSync(f('ca.pem'))).toBe(false);
  });

  it('startProxy({ tls }) with a mismatched pair: E_ARG before the tape is opened', async () => {
    const a = await makeLocalCertificate();
    const b = await makeLocalCertificate();
    const e = await startProxy({ upstream: 'http://127.0.0.1:9', tape: f('lib.tape'), port: 0, tls: { cert: a.cert, key: b.key } }).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(TapedeckError);
    expect((e as TapedeckError).code).toBe('E_ARG');
    expect(existsSync(f('lib.tape'))).toBe(false);
  });
});
