// The spread of several full `npm run bench` runs: each target line's values over the runs, and
// each floor row's readings sorted by whether the machine was quiet while that row ran.
//
// One run cannot say whether a floor row that missed its target was slow or ran while the host
// was busy. Its floor can: it is timed in the same rounds as the row, and SHA-256 from prepared
// bytes on SHA-NI takes the same time on a quiet machine in every run. So a reading counts as
// quiet when the row's floor ran within `quietWithin` (1.1x) of the fastest that floor ran in
// the runs given, and busy otherwise. scripts/bench-spread.mjs prints what this computes.

/** A target line with a verdict (PASS or MISS), not a figure reported without a target. */
const judged = (t) => typeof t.pass === 'boolean';

// Results files from before the floor's times were kept as fields carry them only in the target
// line's baseline text ("... the floor 12.2 ms against 25.1 ms").
const FLOOR_TEXT = /the floor ([0-9.]+) (µs|ms) against ([0-9.]+) (µs|ms)/;
const toMs = (v, unit) => (unit === 'µs' ? v / 1000 : v);

/** The floor's and the row's CPU time per call (ms) in a floor target's shared rounds, or null. */
export function floorTimes(t) {
  if (t.paired && Number.isFinite(t.paired.floorMs)) return { floorMs: t.paired.floorMs, rowMs: t.paired.rowMs };
  const m = typeof t.baseline === 'string' ? FLOOR_TEXT.exec(t.baseline) : null;
  return m ? { floorMs: toMs(Number(m[1]), m[2]), rowMs: toMs(Number(m[3]), m[4]) } : null;
}

/**
 * The spread of `runs` (parsed results files of full runs, in the order given; each with a
 * `targets` array as bench/run.mjs writes it).
 *
 * Returns per run its date and how many judged lines missed; `lines`, every judged target line
 * in the order of the first run that has it, with its value per run (null where a run has no
 * value) and how many runs passed; and `floors`, the lines whose baseline is the floor, each
 * reading marked quiet or busy, with the totals over all of them.
 *
 * @example
 * const s = spread([run1, run2, run3]);
 * s.floors.rows.find((r) => r.label.startsWith('XL object')).quiet // [{ run: 0, value: 1.94, floorMs: 12.2, over: false }, ...]
 */
export function spread(runs, { quietWithin = 1.1 } = {}) {
  const perRun = runs.map((r, i) => {
    if (!r || !Array.isArray(r.targets)) throw new Error(`run ${i + 1} has no targets: not a results file of bench/run.mjs`);
    const t = r.targets.filter(judged);
    return { date: r.date ?? null, mode: r.mode ?? null, judged: t.length, missed: t.filter((x) => !x.pass).length };
  });
  const byLabel = new Map();
  runs.forEach((r, run) => {
    for (const t of r.targets) {
      if (!judged(t)) continue;
      let line = byLabel.get(t.label);
      if (!line) byLabel.set(t.label, (line = { label: t.label, unit: t.unit, op: t.op ?? null, goal: t.goal ?? null, readings: [] }));
      line.readings.push({ run, value: t.value, pass: t.pass, floor: floorTimes(t) });
    }
  });
  const lines = [...byLabel.values()].map((l) => ({
    label: l.label,
    unit: l.unit,
    op: l.op,
    goal: l.goal,
    values: runs.map((_, run) => l.readings.find((x) => x.run === run)?.value ?? null),
    passed: l.readings.filter((x) => x.pass).length,
    runs: l.readings.length,
  }));
  const rows = [];
  for (const l of byLabel.values()) {
    const timed = l.readings.filter((x) => x.floor !== null && Number.isFinite(x.value));
    if (timed.length === 0) continue;
    const fastest = Math.min(...timed.map((x) => x.floor.floorMs));
    const quiet = [];
    const busy = [];
    for (const x of timed) {
      const reading = { run: x.run, value: x.value, floorMs: x.floor.floorMs, over: !x.pass };
      (x.floor.floorMs <= quietWithin * fastest ? quiet : busy).push(reading);
    }
    rows.push({ label: l.label, op: l.op, goal: l.goal, fastestFloorMs: fastest, quiet, busy });
  }
  // Totals over every floor row's quiet (or busy) readings.
  const total = (side) => {
    const all = rows.flatMap((r) => r[side]);
    return { readings: all.length, over: all.filter((x) => x.over).length };
  };
  return { runs: perRun, lines, floors: { quietWithin, rows, quiet: total('quiet'), busy: total('busy') } };
}

const fmt = (v) => (v === null || !Number.isFinite(v) ? 'n/a' : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2));
const range = (values, unit) => {
  const v = values.filter((x) => x !== null && Number.isFinite(x));
  if (v.length === 0) return 'n/a';
  const u = unit === 'x' ? 'x' : unit === 'µs' || unit === 'ms' ? ` ${unit}` : '';
  const lo = Math.min(...v);
  const hi = Math.max(...v);
  // A range that starts below zero reads '-491 to 1004 µs', not '-491-1004 µs'.
  return fmt(lo) === fmt(hi) ? `${fmt(lo)}${u}` : `${fmt(lo)}${lo < 0 ? ' to ' : '-'}${fmt(hi)}${u}`;
};
const goalText = (l) => (l.op === null || l.goal === null ? 'as labelled' : `${l.op} ${fmt(l.goal)}${l.unit === 'x' ? 'x' : ` ${l.unit}`}`);
const readings = (xs) => (xs.length === 0 ? '-' : `${range(xs.map((x) => x.value), 'x')} (${xs.length}, ${xs.filter((x) => x.over).length} over)`);

/**
 * The spread as Markdown: the runs, the floor rows' quiet and busy readings, and every target
 * line that missed in at least one run (every line with `all`).
 *
 * @example
 * console.log(formatSpread(spread([run1, run2, run3])));
 */
export function formatSpread(s, { all = false } = {}) {
  const out = [];
  const dates = s.runs.map((r) => (r.date ? r.date.slice(0, 16).replace('T', ' ') : '?')).join(', ');
  out.push(`${s.runs.length} run${s.runs.length === 1 ? '' : 's'} (${dates}); target lines missed per run: ${s.runs.map((r) => `${r.missed} of ${r.judged}`).join(', ')}`);
  const partial = s.runs.filter((r) => r.mode !== null && r.mode !== 'full').length;
  if (partial > 0) out.push(`(${partial} of them not full runs: their lines are fewer and their rounds shorter)`);
  const f = s.floors;
  if (f.rows.length > 0) {
    out.push('', `Floor rows: a reading is quiet when the row's floor ran within ${f.quietWithin}x of the fastest that floor ran in these runs, busy otherwise.`, '');
    out.push('| row | target | quiet | busy |', '|---|---|---|---|');
    for (const r of f.rows) out.push(`| ${r.label.replace(/(,)? ?time \/ the floor's \(lower is closer\)$/, '').replace(/:$/, '')} | ${r.op ?? ''} ${fmt(r.goal)}x | ${readings(r.quiet)} | ${readings(r.busy)} |`);
    out.push('', `Quiet readings over their target: ${f.quiet.over} of ${f.quiet.readings}; busy: ${f.busy.over} of ${f.busy.readings}.`);
  }
  const shown = s.lines.filter((l) => all || l.passed < l.runs);
  out.push('', all ? 'Every target line:' : 'Target lines that missed in any run:', '');
  if (shown.length === 0) out.push('(none)');
  else {
    out.push('| line | target | per run | passed |', '|---|---|---|---|');
    for (const l of shown) out.push(`| ${l.label} | ${goalText(l)} | ${l.values.map((v) => fmt(v)).join(' / ')} (${range(l.values, l.unit)}) | ${l.passed} of ${l.runs} |`);
  }
  return out.join('\n');
}
