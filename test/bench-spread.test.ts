// The spread of several benchmark runs (bench/spread.mjs, scripts/bench-spread.mjs): each floor
// reading sorted quiet or busy by its own floor's time, misses counted from the verdicts.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { floorTimes, formatSpread, spread } from '../bench/spread.mjs';
import { makeTarget } from '../bench/targets.mjs';

const run = promisify(execFile);
const SCRIPT = join(import.meta.dirname, '..', 'scripts', 'bench-spread.mjs');

/** A floor target line as bench/run.mjs writes it, with or without its figures as fields. */
function floorLine(label: string, value: number, floorMs: number, fields = true) {
  const rowMs = value * floorMs;
  return makeTarget({
    label: `${label}, time / the floor's (lower is closer)`,
    unit: 'x',
    value,
    op: '<=',
    goal: 2,
    baseline: `the floor (node:crypto SHA-256 of the prepared bytes) timed in the same rounds as the row, interleaved, order alternated: median ratio of 9 rounds in CPU time, the floor ${floorMs.toFixed(1)} ms against ${rowMs.toFixed(1)} ms`,
    paired: fields ? { rounds: 9, floorMs, rowMs } : null,
  });
}

const speedLine = (value: number) => makeTarget({ label: 'L raw full hash set, speed vs the best baseline', unit: 'x', value, op: '>=', goal: 3, baseline: 'sss+node:crypto 18.0 ms' });
const figure = makeTarget({ label: 'index memory per recording', unit: 'bytes', value: 120 });

// Three runs. XL's floor: 10.0 ms (fastest), 10.9 ms (within 1.1x: quiet), 13.0 ms (busy).
const runs = [
  { date: '2026-12-01T10:00:00Z', mode: 'full', targets: [floorLine('XL object full hash set', 1.9, 10), speedLine(3.5), figure] },
  { date: '2026-12-01T11:00:00Z', mode: 'full', targets: [floorLine('XL object full hash set', 2.05, 10.9), speedLine(2.9), figure] },
  // An older results file: the floor's figures only in the line's text.
  { date: '2026-12-01T12:00:00Z', mode: 'full', targets: [floorLine('XL object full hash set', 2.2, 13, false), speedLine(3.1), figure] },
];

describe('spread of benchmark runs', () => {
  it('counts each run\'s misses from the verdicts, leaving out figures without a target', () => {
    const s = spread(runs);
    expect(s.runs.map((r: { judged: number; missed: number }) => [r.judged, r.missed])).toEqual([
      [2, 0],
      [2, 2],
      [2, 1],
    ]);
    expect(s.lines.map((l: { label: string }) => l.label)).not.toContain('index memory per recording');
    const speed = s.lines.find((l: { label: string }) => l.label.startsWith('L raw'));
    expect(speed.values).toEqual([3.5, 2.9, 3.1]);
    expect(speed.passed).toBe(2);
  });

  it('sorts a floor reading quiet when its floor ran within 1.1x of the fastest, busy otherwise', () => {
    const s = spread(runs);
    const [xl] = s.floors.rows;
    expect(xl.fastestFloorMs).toBe(10);
    expect(xl.quiet.map((r: { run: number; over: boolean }) => [r.run, r.over])).toEqual([
      [0, false],
      [1, true],
    ]);
    expect(xl.busy.map((r: { run: number; over: boolean; floorMs: number }) => [r.run, r.over, r.floorMs])).toEqual([[2, true, 13]]);
    expect(s.floors.quiet).toEqual({ readings: 2, over: 1 });
    expect(s.floors.busy).toEqual({ readings: 1, over: 1 });
    // A stricter window puts the 10.9 ms reading among the busy ones.
    const strict = spread(runs, { quietWithin: 1.05 });
    expect(strict.floors.quiet).toEqual({ readings: 1, over: 0 });
    expect(strict.floors.busy).toEqual({ readings: 2, over: 2 });
  });

  it('reads the floor\'s time from the fields or, in older files, from the line\'s text', () => {
    expect(floorTimes(runs[0]!.targets[0])).toEqual({ floorMs: 10, rowMs: 19 });
    const old = floorTimes(runs[2]!.targets[0]);
    expect(old.floorMs).toBeCloseTo(13, 6);
    expect(old.rowMs).toBeCloseTo(28.6, 6);
    expect(floorTimes(makeTarget({ label: 'x', unit: 'x', value: 1, baseline: 'the floor 85.2 µs against 120.0 µs' })).floorMs).toBeCloseTo(0.0852, 9);
    expect(floorTimes(speedLine(3))).toBeNull();
  });

  it('prints the floor rows and the lines that missed, and every line with all', () => {
    const text = formatSpread(spread(runs));
    expect(text).toContain('target lines missed per run: 0 of 2, 2 of 2, 1 of 2');
    expect(text).toContain('| XL object full hash set | <= 2.00x | 1.90-2.05x (2, 1 over) | 2.20x (1, 1 over) |');
    expect(text).toContain('| L raw full hash set, speed vs the best baseline | >= 3.00x | 3.50 / 2.90 / 3.10 (2.90-3.50x) | 2 of 3 |');
    // A range below zero reads 'a to b'.
    const latency = (value: number) => makeTarget({ label: 'added p50', unit: 'µs', value, op: '<=', goal: 500 });
    expect(formatSpread(spread([{ targets: [latency(-491)] }, { targets: [latency(1004)] }]))).toContain('| added p50 | <= 500 µs | -491 / 1004 (-491 to 1004 µs) | 1 of 2 |');
    // Two values that print alike read as one.
    expect(formatSpread(spread([{ targets: [latency(12.34)] }, { targets: [latency(12.341)] }]), { all: true })).toContain('| added p50 | <= 500 µs | 12.3 / 12.3 (12.3 µs) | 2 of 2 |');
    const passing = spread([runs[0]!]);
    expect(formatSpread(passing)).toContain('(none)');
    expect(formatSpread(passing, { all: true })).toContain('| L raw full hash set, speed vs the best baseline |');
  });

  it('refuses what is not a results file, naming it', () => {
    expect(() => spread([{ date: 'x' }])).toThrow(/run 1 has no targets/);
  });
});

describe('scripts/bench-spread.mjs', () => {
  it('prints the spread of the files given, and says which file is not a results file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-spread-'));
    try {
      const files = runs.map((r, i) => {
        const f = join(dir, `run${i + 1}.json`);
        writeFileSync(f, JSON.stringify(r));
        return f;
      });
      const { stdout } = await run(process.execPath, [SCRIPT, ...files]);
      expect(stdout).toContain('Quiet readings over their target: 1 of 2; busy: 1 of 1.');
      const bad = join(dir, 'notes.json');
      writeFileSync(bad, '{"rows": []}');
      const failed = await run(process.execPath, [SCRIPT, files[0]!, bad]).then(
        () => null,
        (e: { code: number; stderr: string }) => e,
      );
      expect(failed?.code).toBe(2);
      expect(failed?.stderr).toBe(`bench-spread: ${bad} has no "targets": not a results file of npm run bench\n`);
      const window = await run(process.execPath, [SCRIPT, files[0]!, '--quiet-within', 'soon']).then(
        () => null,
        (e: { code: number; stderr: string }) => e,
      );
      expect(window?.stderr).toMatch(/--quiet-within must be a number of at least 1/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
