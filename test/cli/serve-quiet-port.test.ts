// `tapedeck serve --quiet --port 0`: the system chooses the port and the only line that named it
// (the listening line on stderr) is silenced, so a fixture in another language (a Python
// conftest starting the proxy) could not learn where to send its requests. The URL is printed
// alone on stdout; stdout holds nothing else, and stderr none of the lines --quiet silences.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-quiet-port-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('prints the chosen URL alone on stdout, and answers there', async () => {
  const child = spawn(process.execPath, [bin, 'serve', '--quiet', '--port', '0', '--tape', 'none.tape', '--mode', 'replay'], {
    cwd: dir,
    env: { ...process.env, TAPEDECK_MODE: '', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const closed = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL on stdout; stderr: ${stderr}`)), 15_000);
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (stdout.includes('\n')) {
        clearTimeout(timer);
        resolve(stdout.split('\n')[0]!);
      }
    });
  });
  try {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url.endsWith(':0')).toBe(false);
    // The proxy is there: an unrecorded request is its miss, not a refused connection.
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.headers.get('x-tapedeck-error')).toBe('E_MISS');
  } finally {
    child.kill('SIGTERM');
  }
  expect(await closed).toBe(0);
  expect(stdout).toBe(`${url}\n`);
  expect(stderr).not.toMatch(/listening on|closed \(|miss:/);
}, 30_000);
