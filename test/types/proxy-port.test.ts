// startProxy({ port: process.env.PORT ?? '8080' }): the runtime takes a string of digits as the
// port (docs/api.md says so), but the type said number, so the documented call did not compile.
// tsc runs over test/types/proxy-port/*.ts; the runtime side is test/proxy/start-proxy-port.test.ts.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('startProxy port types', () => {
  it('a port given as a string of digits compiles, as it runs', () => {
    const root = join(import.meta.dirname, '..', '..');
    let out = '';
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'test', 'types', 'proxy-port', 'tsconfig.json')], { encoding: 'utf8' });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(out).toBe('');
  });
});
