#!/usr/bin/env node
// Prints bench/results/latest.json as the Markdown tables docs/benchmarks.md carries, so its
// numbers are always a copy of one real run (paste the output between the bench markers there).
//   node scripts/bench-table.mjs [results.json]   (default: bench/results/latest.json)
import { readFileSync } from 'node:fs';
import { targetLine } from '../bench/targets.mjs';

const file = process.argv[2] ?? new URL('../bench/results/latest.json', import.meta.url);
const r = JSON.parse(readFileSync(file, 'utf8'));
if (r.mode !== 'full' || (r.filter && r.filter.length)) {
  console.error(`bench-table: ${process.argv[2] ?? 'latest.json'} is from a ${r.mode} run${r.filter ? ` filtered by ${r.filter}` : ''}; run \`npm run bench\` first.`);
  process.exit(1);
}
const fmt = (ms) => (ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(ms < 0.01 ? 2 : 1)} µs`);
const lines = [
  `Full run of ${r.date.slice(0, 10)}, Node ${r.node}, ${r.cpu} (${r.cpuCount} cores), ${r.elapsedSeconds.toFixed(0)} s. ` +
    'p50 per call; ratio = best canonical baseline p50 for the same input form (object or raw bytes) / row p50.',
  '',
  '| workload | input | wasm-simd | wasm | js | best baseline (sss+node:crypto) | wasm-simd vs baseline |',
  '|---|---|---|---|---|---|---|',
];
for (const [name, w] of Object.entries(r.workloads)) {
  for (const input of ['object', 'raw']) {
    const rows = r.rows.filter((x) => x.workload === name && x.input === input && !/\dx hashValue/.test(x.name));
    const by = (b) => rows.find((x) => x.backend === b);
    const simd = by('wasm-simd');
    if (!simd) continue;
    const base = r.rows.find((x) => x.workload === name && x.input === input && x.name.startsWith(simd.baseline));
    const size = w.bytes >= 1e6 ? `${(w.bytes / 1e6).toFixed(2)} MB` : `${(w.bytes / 1e3).toFixed(1)} KB`;
    lines.push(
      `| ${name} (${size}) | ${input} | ${fmt(simd.p50Ms)} | ${fmt(by('wasm').p50Ms)} | ${fmt(by('js').p50Ms)} | ${base ? fmt(base.p50Ms) : '-'} | ${simd.ratio >= 1 ? `${simd.ratio.toFixed(2)}x faster` : `${(1 / simd.ratio).toFixed(2)}x slower`} |`,
    );
  }
}
lines.push('', `Targets (default backend, ${r.defaultBackend}; x = baseline time / tapedeck time unless the line says otherwise):`, '');
for (const t of r.targets) lines.push(`- ${targetLine(t)}`);
if (r.match) {
  lines.push('', `Matcher (${r.match.rows[0].label.replace(/^.*?, /, '')}):`, '');
  lines.push('| row | p50 | p99 | vs baseline |', '|---|---|---|---|');
  for (const m of r.match.rows) {
    const vs = m.label === m.baseline ? '(baseline)' : `${m.ratio >= 1 ? `${m.ratio.toFixed(m.ratio > 100 ? 0 : 2)}x faster` : `${(1 / m.ratio).toFixed(2)}x slower`} than ${m.baseline.replace(/, 1,000,000 recordings$/, '')}`;
    lines.push(`| ${m.label} | ${fmt(m.p50)} | ${fmt(m.p99)} | ${vs} |`);
  }
}
if (r.tape) {
  lines.push('', 'Tape (each ratio against the baseline named, measured in the same run):', '');
  lines.push('| row | value | vs baseline |', '|---|---|---|');
  for (const t of r.tape.rows) {
    const v = t.perSecond !== undefined ? `${t.perSecond.toFixed(0)}/s` : t.ms !== undefined ? `${t.ms.toFixed(1)} ms` : `${t.us.toFixed(1)} µs`;
    const vs = t.ratio === null ? '' : t.label === t.baseline ? '(baseline)' : `${t.ratio.toFixed(2)}x ${t.perSecond !== undefined ? 'the rate of' : 'faster than'} ${t.baseline.replace(/^baseline: /, '')}`;
    lines.push(`| ${t.label} | ${v} | ${vs} |`);
  }
}
if (r.tree) {
  lines.push('', 'Conversation tree and replay store (ratio = time / baseline time, lower is better):', '');
  lines.push('| row | value | time vs baseline |', '|---|---|---|');
  for (const t of r.tree.rows) {
    const v = t.ms !== undefined ? `${t.ms.toFixed(2)} ms` : `${t.us.toFixed(2)} µs`;
    lines.push(`| ${t.label} | ${v} | ${t.label === t.baseline ? '(baseline)' : `${t.ratio.toFixed(2)}x of ${t.baseline}`} |`);
  }
}
if (r.proxy) {
  lines.push('', 'Proxy replay over HTTP (autocannon, loopback; added p50 = p50 minus the plain node:http baseline server):', '');
  lines.push('| server | connections | req/s | p50 | p99 | added p50 |', '|---|---|---|---|---|---|');
  for (const p of r.proxy.rows) {
    lines.push(`| ${p.impl} | ${p.connections} | ${p.rps.toFixed(0)} | ${fmt(p.p50)} | ${fmt(p.p99)} | ${p.addedP50 === null ? '(baseline)' : p.addedP50 < 0 ? `0 (p50 ${fmt(-p.addedP50)} below the baseline's: noise)` : fmt(p.addedP50)} |`);
  }
}
console.log(lines.join('\n'));
