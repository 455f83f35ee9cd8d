// The certificate generator behind `tapedeck serve --tls` (selfsigned, with its X.509 stack of
// ~20 packages) is an optional peer: an install of llm-tapedeck does not pull it. Asked for a
// certificate without it, the command fails with E_ARG saying to install it, or to serve TLS
// with a certificate of one's own; it used to be a dependency every install carried. The real
// command runs with Node's resolution of `selfsigned` failing as it does when the package is not
// installed (a module resolve hook); with the package there, --tls serves (test/realtime/tls).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tls-package-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// What Node throws for an import of a package that is not installed.
const notInstalled = `export async function resolve(specifier, context, next) {
  if (specifier === 'selfsigned' || specifier.startsWith('selfsigned/')) {
    const e = new Error("Cannot find package 'selfsigned' imported from " + context.parentURL);
    e.code = 'ERR_MODULE_NOT_FOUND';
    throw e;
  }
  return next(specifier, context);
}`;
const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(notInstalled)}`)});`;

it('package.json: selfsigned is an optional peer, not a dependency', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, Record<string, unknown> | undefined>;
  expect(pkg.dependencies?.selfsigned).toBeUndefined();
  expect(pkg.optionalDependencies?.selfsigned).toBeUndefined();
  expect(pkg.peerDependencies?.selfsigned).toBeTypeOf('string');
  expect(pkg.peerDependenciesMeta?.selfsigned).toEqual({ optional: true });
});

it('tapedeck serve --tls without selfsigned installed: E_ARG saying to install it or bring a certificate', { timeout: 60_000 }, async () => {
  const child = spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, join(root, 'dist', 'cli.js'), 'serve', '--tls', '--port', '0', '--tape', join(dir, 't.tape'), '--mode', 'replay'], { cwd: dir });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(stderr).toContain('E_ARG');
  expect(stderr).toContain('npm install selfsigned');
  expect(stderr).toContain('--tls-cert');
  expect(stderr).not.toMatch(/E_INTERNAL|at .*\.js:\d+/);
  expect(status).toBe(2);
});
