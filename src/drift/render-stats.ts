// `tapedeck stats` as a terminal table.

import { escapeTerminal } from './escape.ts';
import { PRICES_DATE } from './prices.ts';
import type { Stats, StatsRow } from './stats.ts';

const int = (x: number) => x.toLocaleString('en-US');
const usd = (x: number | null) => (x === null ? 'n/a' : x < 0.01 && x > 0 ? `$${x.toFixed(4)}` : `$${x.toFixed(2)}`);
const secs = (ms: number) => (ms >= 60_000 ? `${(ms / 60_000).toFixed(1)} min` : `${(ms / 1000).toFixed(1)} s`);

/**
 * The stats as a table: one row per provider and model, then the total.
 *
 * @example
 * process.stdout.write(renderStats(tapeStats(tapes, prices), { pricesFile: undefined }))
 */
export function renderStats(s: Stats, opts: { pricesFile?: string }): string {
  const head = ['PROVIDER', 'MODEL', 'CALLS', 'ERRORS', 'TOKENS IN', 'TOKENS OUT', 'LIVE COST', 'RECORDED TIME'];
  const line = (r: Pick<StatsRow, 'calls' | 'errors' | 'tokensIn' | 'tokensOut' | 'cost' | 'recordedMs'>, provider: string, model: string) => [provider, model, int(r.calls), int(r.errors), int(r.tokensIn), int(r.tokensOut), usd(r.cost), secs(r.recordedMs)];
  // A Bedrock ARN's region and account say nothing about the model and would widen the column by half.
  const shown = (m: string) => m.replace(/^arn:aws[\w-]*:bedrock:[^:]*:[^:]*:/, 'arn:…:');
  const rows = [head, ...s.rows.map((r) => line(r, escapeTerminal(r.provider), escapeTerminal(shown(r.model)))), line(s.total, 'total', '')];
  const widths = head.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  const exchanges = (s.mcp ?? []).reduce((n, r) => n + r.exchanges, 0);
  const other = (s.notCounted ?? []).reduce((n, r) => n + r.records, 0);
  let out = `${s.tapes} tape${s.tapes === 1 ? '' : 's'}, ${int(s.total.calls)} recorded call${s.total.calls === 1 ? '' : 's'}`;
  if (s.mcp) out += `, ${int(exchanges)} MCP exchange${exchanges === 1 ? '' : 's'} (below)`;
  // Records of kinds no table counts: said, so that "0 recorded calls" is not taken for an empty tape.
  if (other) out += `; ${int(other)} record${other === 1 ? '' : 's'} not counted (${s.notCounted!.map((k) => `${escapeTerminal(k.kind)}: ${int(k.records)}`).join(', ')})`;
  out += '\n\n';
  out += rows.map(fmt).join('\n') + '\n\n';
  out += `Live cost: list prices per million tokens ${opts.pricesFile ? `from the defaults of ${PRICES_DATE} and ${opts.pricesFile}` : `of ${PRICES_DATE} (--prices FILE for yours)`}.`;
  if (s.unpriced.length) out += ` No price for ${s.unpriced.map(escapeTerminal).join(', ')}: left out of the total.`;
  if (s.total.withoutUsage) out += ` ${int(s.total.withoutUsage)} call(s) reported no token usage.`;
  out += `\nReplay saves the recorded time: ${secs(s.total.recordedMs)} of live calls.\n`;
  if (s.realtime) {
    const rh = ['REALTIME', 'SESSIONS', 'RESPONSES', 'TOKENS IN', 'TOKENS OUT', 'AUDIO IN', 'AUDIO OUT'];
    const rr = [rh, ...s.realtime.map((r) => [r.provider, int(r.sessions) + (r.cut ? ` (${r.cut} cut)` : ''), int(r.responses), int(r.tokensIn), int(r.tokensOut), `${r.audioInSeconds.toFixed(1)} s`, `${r.audioOutSeconds.toFixed(1)} s`])];
    const w = rh.map((_, i) => Math.max(...rr.map((r) => r[i]!.length)));
    out += '\n' + rr.map((r) => r.map((c, i) => (i >= 1 ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join('  ').trimEnd()).join('\n') + '\n';
  }
  if (s.mcp) {
    const mh = ['MCP', 'EXCHANGES', 'ERRORS', 'RECORDED TIME'];
    const total = s.mcp.reduce((t, r) => ({ exchanges: t.exchanges + r.exchanges, errors: t.errors + r.errors, recordedMs: t.recordedMs + r.recordedMs }), { exchanges: 0, errors: 0, recordedMs: 0 });
    const mr = [mh, ...s.mcp.map((r) => [escapeTerminal(r.call), int(r.exchanges), int(r.errors), secs(r.recordedMs)]), ['total', int(total.exchanges), int(total.errors), secs(total.recordedMs)]];
    const w = mh.map((_, i) => Math.max(...mr.map((r) => r[i]!.length)));
    out += '\n' + mr.map((r) => r.map((c, i) => (i >= 1 ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join('  ').trimEnd()).join('\n') + '\n';
  }
  return out;
}
