// A row's distance to the SHA-256 floor, timed in rounds shared with the floor (bench/run.mjs
// for the workloads' rows, bench/match.mjs for requestDigests). Timed in rows of their own, a
// row and the floor ran seconds apart, so a change of load between them moved the ratio (the XL
// floor ran in 12 ms in one full run and 20 ms in another; L-intl objects read 1.95-6.99x over
// three runs on the shared machine, 1.78-1.94x in shared rounds).

let sink; // keeps results observable

/** Median of an array of numbers (the upper middle of an even count). */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s[s.length >> 1];
}

/** Wall time of one call of fn, from enough calls to run `ms` milliseconds. */
export function perCall(fn, ms) {
  for (let n = 1; ; n *= 2) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) sink = fn();
    const t = performance.now() - t0;
    if (t >= ms || n >= 1 << 20) return t / n;
  }
}

/** Rounds of a full run and of `--quick`: batch length, bounds on the number of rounds. */
export const FLOOR_ROUNDS = { full: { batchMs: 2, minRounds: 3, maxRounds: 41 }, quick: { batchMs: 0.5, minRounds: 1, maxRounds: 5 } };

/**
 * The row's distance to the floor, timed in the same rounds: each round one batch of the row's
 * calls and one of the floor's, the row first in even rounds and the floor first in odd ones, so
 * that neither always runs in the state (caches, garbage) the other leaves. `rowMs` and `floorMs`
 * estimate one call of each (they size the batches and, with `budgetMs`, the number of rounds).
 * Returns the median of the rounds' ratios (row CPU time per call / floor CPU time per call),
 * each side's median CPU time per call in those rounds, and the median of the wall-time ratios.
 * CPU time, because with more runnable processes than cores a batch of a few milliseconds often
 * waits out another process's time slice: in wall time one run read M raw at 4.18x the floor
 * (0.28 ms a call in its batches against 0.09 ms in its tinybench samples). The process's CPU
 * time (process.cpuUsage, µs resolution) counts the collector's helper threads too; a thread's
 * own time is not to be had at this resolution from Node 20 (/proc/thread-self/schedstat moves
 * at the scheduler's ticks).
 *
 * @example
 * const { ratio, rounds } = timeAgainstFloor(() => lib.pathHashes(bytes), floorFn, { rowMs: 3.5, floorMs: 2.1, budgetMs: 400, ...FLOOR_ROUNDS.full });
 */
export function timeAgainstFloor(rowFn, floorFn, { rowMs, floorMs, budgetMs, batchMs, minRounds, maxRounds }) {
  const calls = (ms) => Math.max(1, Math.round(batchMs / Math.max(ms, 1e-6)));
  const nRow = calls(rowMs);
  const nFloor = calls(floorMs);
  const roundMs = nRow * rowMs + nFloor * floorMs;
  const rounds = Math.min(maxRounds, Math.max(minRounds, Math.floor(budgetMs / roundMs)));
  // CPU time and wall time of one call, from a batch of n.
  const batch = (fn, n) => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) sink = fn();
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    return [(c.user + c.system) / 1000 / n, wall / n];
  };
  const rowTimes = [];
  const floorTimes = [];
  const ratios = [];
  const wallRatios = [];
  batch(floorFn, nFloor); // the row ran last: the floor's code and data warm again too
  for (let r = 0; r < rounds; r++) {
    let a;
    let b;
    if (r & 1) {
      b = batch(floorFn, nFloor);
      a = batch(rowFn, nRow);
    } else {
      a = batch(rowFn, nRow);
      b = batch(floorFn, nFloor);
    }
    rowTimes.push(a[0]);
    floorTimes.push(b[0]);
    ratios.push(a[0] / b[0]);
    wallRatios.push(a[1] / b[1]);
  }
  void sink;
  return { ratio: median(ratios), rowMs: median(rowTimes), floorMs: median(floorTimes), wallRatio: median(wallRatios), rounds };
}

/** The baseline text of a floor target line: how the floor was timed and both sides' time. */
export function floorRoundsNote(p, fmtTime) {
  return `the floor (node:crypto SHA-256 of the prepared bytes) timed in the same rounds as the row, interleaved, order alternated: median ratio of ${p.rounds} rounds in CPU time, the floor ${fmtTime(p.floorMs)} against ${fmtTime(p.rowMs)}`;
}

/** The shared rounds' figures a floor target line keeps beside its text (see makeTarget's `paired`). */
export function pairedFigures(p) {
  return { rounds: p.rounds, floorMs: p.floorMs, rowMs: p.rowMs };
}
