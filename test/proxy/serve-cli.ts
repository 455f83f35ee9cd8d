// `tapedeck serve` as a user starts it: the built CLI in a child process, its URL read from the
// line it prints when listening.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const CLI = join(import.meta.dirname, '../../dist/cli.js');

/** Starts `tapedeck serve ...args`; `url` resolves once it listens and rejects if it exits first. */
export function serve(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (https?:\/\/[^\s]+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    void exited.then((code) => reject(new Error(`tapedeck serve exited with ${code}: ${err}`)));
  });
  url.catch(() => {}); // awaited by the tests that expect a running server
  return { child, url, exited, stderr: () => err };
}
