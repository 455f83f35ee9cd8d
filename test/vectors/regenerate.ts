// Published vectors are an independent generator's output, never edited by hand: a test re-runs
// the generator (where python3 is installed) and compares its output with the committed file.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether python3 runs here (the generators need it; CI has it). */
export const hasPython = spawnSync('python3', ['--version']).status === 0;

/**
 * Runs a generator script with `--out` to a temporary file and returns its exit status, its
 * stderr, and whether its output equals the committed file byte for byte.
 */
export function regenerate(script: string, committed: string): { status: number | null; stderr: string; same: boolean } {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-vectors-'));
  try {
    const out = join(dir, 'v.json');
    const run = spawnSync('python3', [script, '--out', out], { encoding: 'utf8' });
    const same = run.status === 0 && readFileSync(out, 'utf8') === readFileSync(committed, 'utf8');
    return { status: run.status, stderr: run.stderr, same };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
