// The drift report as a terminal table: one line per recording that changed, coloured by class
// when the output is a terminal (plain when piped or NO_COLOR is set), and a summary line.

import type { DriftClass } from './classify.ts';
import { DRIFT_CLASSES } from './classify.ts';
import { escapeTerminal } from './escape.ts';
import { foldOneSided, isFolded } from './fold.ts';
import { entryHost, failOnText, manyHosts, type DriftReport } from './report.ts';
import { inlineDiff, showsChange } from './text-diff.ts';
import { uncomparedPhrase } from './uncompared.ts';

const CODES: Record<DriftClass | 'added' | 'removed', string> = {
  status: '31;1',
  structure: '35;1',
  'tool-calls': '31',
  finish: '33;1',
  text: '33',
  stream: '36',
  benign: '32',
  identical: '2',
  added: '34',
  removed: '34',
};

/** Whether to colour: a terminal, and NO_COLOR unset (https://no-color.org). */
export function useColour(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
// Recorded text on one line, its control characters shown rather than run.
const line = (s: string) => escapeTerminal(s.replace(/\r\n?|\n/g, ' ⏎ '));

/** The class counts as one phrase: `3 identical, 1 text`. */
export function countsPhrase(r: DriftReport): string {
  const parts = DRIFT_CLASSES.filter((c) => r.summary.primary[c] > 0).map((c) => `${r.summary.primary[c]} ${c}`);
  return parts.length ? parts.join(', ') : 'none';
}

/**
 * The report as terminal text (identical pairs are counted, not listed).
 *
 * @example
 * process.stdout.write(renderTerminal(report, { colour: useColour(process.stdout) }))
 */
export function renderTerminal(r: DriftReport, opts: { colour: boolean; width?: number }): string {
  const paint = (cls: keyof typeof CODES, s: string) => (opts.colour ? `\x1b[${CODES[cls]}m${s}\x1b[0m` : s);
  const marks = opts.colour ? { del: (s: string) => `\x1b[31;9m${s}\x1b[0m`, ins: (s: string) => `\x1b[32;4m${s}\x1b[0m` } : undefined;
  const width = opts.width ?? 160;
  const s = r.summary;
  let out = `tapedeck diff ${line(r.old)} -> ${line(r.new)}: ${s.pairs} pair${s.pairs === 1 ? '' : 's'} (${countsPhrase(r)}), ${s.added} added, ${s.removed} removed\n`;
  // A HOST column only when the recordings were made for several hosts (see manyHosts).
  const hosts = manyHosts(r);
  // Many recordings of a tape added or removed: one line for them (fold.ts).
  // Identical pairs are counted, not listed, but for copies a record run kept: stale, prunable.
  const rows = foldOneSided(r.entries.filter((e) => e.primary !== 'identical' || e.kept)).map((e) =>
    isFolded(e)
      ? { ...e, tape: line(e.tape), route: line(e.route), host: '-', summary: line(e.summary), idx: `${e.first}-${e.last}`, cls: e.status, classes: [] as string[], details: undefined }
      : { ...e, tape: line(e.tape), route: line(e.route), host: line(entryHost(e) ?? '-'), summary: line(e.summary), idx: String(e.new?.index ?? e.old?.index ?? ''), cls: e.primary || e.status },
  );
  if (rows.length) {
    const tapeW = Math.min(28, Math.max(4, ...rows.map((e) => e.tape.length)));
    const routeW = Math.min(34, Math.max(5, ...rows.map((e) => e.route.length)));
    const hostW = hosts ? Math.min(32, Math.max(4, ...rows.map((e) => e.host.length))) : 0;
    const hostCell = (s: string) => (hosts ? `${pad(clip(s, hostW), hostW)} ` : '');
    out += `\n${pad('CLASS', 11)} ${pad('TAPE', tapeW)} ${pad('#', 5)} ${pad('ROUTE', routeW)} ${hostCell('HOST')}WHAT CHANGED\n`;
    for (const e of rows) {
      const { cls, idx } = e;
      const head = `${paint(cls as keyof typeof CODES, pad(cls, 11))} ${pad(clip(e.tape, tapeW), tapeW)} ${pad(idx, 5)} ${pad(clip(e.route, routeW), routeW)} ${hostCell(e.host)}`;
      const more = e.classes.length > 1 ? ` [${e.classes.slice(1).join(', ')}]` : '';
      out += `${head}${clip(e.summary + more, Math.max(30, width - 20 - tapeW - routeW - (hosts ? hostW + 1 : 0)))}\n`;
      if (e.details?.text && e.classes.includes('text') && showsChange(e.details.text.ops)) {
        out += `${' '.repeat(12)}${inlineDiff(e.details.text.ops.map(([op, t]) => [op, escapeTerminal(t)]), marks, 30).replace(/\s*\n\s*/g, ' ⏎ ').slice(0, 400)}${opts.colour ? '\x1b[0m' : ''}\n`;
      }
    }
  }
  const failOn = failOnText(s.failOn, ',');
  // Records no entry compared: said, so that "nothing fails" is never said of them too.
  const unseen = uncomparedPhrase(s.notCompared ?? []);
  if (s.failing) out += `\n${s.failing} failing (fail-on: ${failOn})${unseen ? `; ${unseen}` : ''}\n`;
  else out += unseen ? `\nnothing fails among the compared recordings (fail-on: ${failOn}); ${unseen}\n` : `\nnothing fails (fail-on: ${failOn})\n`;
  return out;
}
