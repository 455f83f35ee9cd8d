// Target lines of the bench report. A line must be readable on its own: what was measured, the
// value in its unit, the target (or "no target" for a figure that is only reported) and the
// baseline it was measured against in the same run. bench/run.mjs prints them and
// scripts/bench-table.mjs copies them into docs/benchmarks.md, both through targetLine().

const UNITS = new Set(['µs', 'ms', 'x', 'KB', 'bytes']);

/**
 * A target record. `unit` is one of µs, ms, x (a ratio: the baseline's time / the row's time, or
 * the rate against the baseline's rate, so higher is better unless the label says otherwise),
 * KB, bytes. `op` and `goal` give the target ('<=' 100 for "at most 100 µs"); leave them out
 * for a figure reported without a target. `baseline` names what the value is compared with
 * (null only for absolute figures without one). `note` is printed after the value. `paired`, on
 * a line whose baseline is the floor timed in the same rounds, keeps those rounds' figures
 * ({ rounds, floorMs, rowMs }: CPU time per call) for scripts/bench-spread.mjs.
 */
export function makeTarget({ label, unit, value, op = null, goal = null, baseline = null, note = null, paired = null }) {
  if (!UNITS.has(unit)) throw new Error(`bench: target "${label}" has unknown unit ${unit}`);
  if ((op === null) !== (goal === null)) throw new Error(`bench: target "${label}" needs both op and goal`);
  let pass = null;
  if (op !== null && value !== null && value !== undefined && Number.isFinite(value)) {
    pass = op === '<=' ? value <= goal : op === '>=' ? value >= goal : op === '>' ? value > goal : op === '<' ? value < goal : null;
    if (pass === null) throw new Error(`bench: target "${label}" has unknown op ${op}`);
  }
  const t = { label, unit, value: value ?? null, op, goal, baseline, note, pass };
  return paired === null ? t : { ...t, paired };
}

/** A value with its unit, as the report prints it. */
export function formatValue(unit, v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return 'n/a';
  switch (unit) {
    case 'µs':
      return `${v.toFixed(Math.abs(v) < 10 ? 2 : 1)} µs`;
    case 'ms':
      return `${v.toFixed(Math.abs(v) < 10 ? 2 : 1)} ms`;
    case 'x':
      return `${v.toFixed(2)}x`;
    case 'KB':
      return `${v.toFixed(1)} KB`;
    default:
      return `${v.toFixed(0)} bytes`;
  }
}

/** One report line: "label: value (target op goal; baseline: name) PASS|MISS". */
export function targetLine(t) {
  const goal = t.op === null ? 'no target' : `target ${t.op} ${formatValue(t.unit, t.goal)}`;
  // Baseline rows are often named "baseline: ..." themselves; say it once.
  const base = t.baseline ? `; baseline: ${t.baseline.replace(/^baseline:?\s*/, '')}` : '';
  const note = t.note ? ` ${t.note}` : '';
  const verdict = t.op === null ? '' : t.value === null ? ' — not run' : t.pass ? ' — PASS' : ' — MISS';
  return `${t.label}: ${formatValue(t.unit, t.value)}${note} (${goal}${base})${verdict}`;
}
