// tapedeck serve goes out through the proxy HTTPS_PROXY / HTTP_PROXY name (./env-proxy-hint.test.ts).
// Its startup line says so, by the variable's name, so whoever reads the log of a record run
// behind a corporate proxy sees which way the calls go, and never the proxy's URL (it may hold a
// password). A replaying proxy sends nothing upstream and says nothing of a proxy.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { serve } from './serve-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-serve-envproxy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const saved = process.env.HTTPS_PROXY;
afterEach(() => {
  if (saved === undefined) delete process.env.HTTPS_PROXY;
  else process.env.HTTPS_PROXY = saved;
});

/** The startup line of `tapedeck serve` in `mode` for an https upstream, the child's environment given HTTPS_PROXY. */
async function startupLine(mode: string): Promise<string> {
  process.env.HTTPS_PROXY = 'http://corp-user:PlantedProxyPw42@127.0.0.1:9';
  const s = serve(['--upstream', 'https://api.openai.com', '--tape', join(dir, `${mode}.tape`), '--mode', mode, '--port', '0']);
  try {
    await s.url;
    return s.stderr().split('\n').find((l) => l.includes('listening on')) ?? '';
  } finally {
    s.child.kill('SIGTERM');
    await s.exited;
  }
}

describe('the startup line of tapedeck serve behind a forward proxy', () => {
  it('names the variable whose proxy a recording run goes through, never its value', async () => {
    const line = await startupLine('record');
    expect(line).toContain('upstream https://api.openai.com through the proxy HTTPS_PROXY names');
    expect(line).not.toContain('PlantedProxyPw42');
    expect(line).not.toContain('corp-user');
  });

  it('a replaying proxy says nothing of it', async () => {
    const line = await startupLine('replay');
    expect(line).toContain('listening on');
    expect(line).not.toContain('HTTPS_PROXY');
  });
});
