// A spawned runner's exit code and everything it printed (stdout and stderr interleaved).
import type { ChildProcess } from 'node:child_process';

/** Collects a child process's output until it closes. */
export function outputOf(child: ChildProcess): Promise<{ code: number | null; out: string }> {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}
