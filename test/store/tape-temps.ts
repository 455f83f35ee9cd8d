// Shared by the tests of temp files a killed tapedeck process leaves beside a tape (a rewrite's,
// an import's): the temp files there, and the real CLI run in a process of its own, optionally
// with a preload (hang-at-temp.mjs holds it once its temp file exists).
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';

const CLI = join(import.meta.dirname, '../../dist/cli.js');

/** The temp files beside a tape (a rewrite's or an import's). */
export const temps = (file: string): string[] => readdirSync(join(file, '..')).filter((f) => f.startsWith(`.${basename(file)}.`) && f.endsWith('.tmp'));

/** How a CLI process ended, and all it wrote (stdout and stderr together). */
export interface CliExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
}

/**
 * Runs `tapedeck <args>` from dist; `said(s)` resolves once its output holds `s` (and rejects
 * if it exits first), so a test can kill it at a known point.
 */
export function cli(args: string[], preload?: string): { child: ChildProcess; done: Promise<CliExit>; said: (s: string) => Promise<void> } {
  const child = spawn(process.execPath, [...(preload ? ['--import', preload] : []), CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: (() => void)[] = [];
  const onData = (d: Buffer) => {
    out += d;
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const done = new Promise<CliExit>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, out })));
  const said = (s: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => out.includes(s) && resolve();
      waiters.push(check);
      check();
      void done.then(() => reject(new Error(`exited before saying ${s}: ${out}`)));
    });
  return { child, done, said };
}
