// `tapedeck diff` and `tapedeck stats`: argument handling and output; the work is in the
// modules beside this one.

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { TapedeckError } from '../errors.ts';
import { formatCliError, usageError } from '../cli-errors.ts';
import { DIFF_HELP, STATS_HELP } from './help.ts';
import { loadGit, loadPaths, loadTapes, type LoadedSide } from './load.ts';
import { loadPrices, PRICES_DATE } from './prices.ts';
import { renderStats } from './render-stats.ts';
import { tapeStats } from './stats.ts';
import { DEFAULT_FAIL_ON, driftReport, FAIL_ON_NAMES, type FailOn } from './report.ts';
import { renderHtml } from './render-html.ts';
import { renderMarkdown } from './render-markdown.ts';
import { renderTerminal, useColour } from './render-terminal.ts';

/** Exit codes of `tapedeck diff`. */
export const DIFF_EXIT = { ok: 0, failing: 1, bad: 2 } as const;

function failOnList(raw: string | undefined): FailOn[] {
  if (raw === undefined) return [...DEFAULT_FAIL_ON];
  if (raw.trim() === 'none' || raw.trim() === '') return [];
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = names.filter((n) => !(FAIL_ON_NAMES as readonly string[]).includes(n));
  if (bad.length) throw new TapedeckError('E_ARG', `--fail-on: unknown class ${bad.map((b) => JSON.stringify(b)).join(', ')}.`, { hint: `--fail-on takes a comma-separated list of ${FAIL_ON_NAMES.join(', ')}, or none` });
  return names as FailOn[];
}

function warnDamage(side: LoadedSide): void {
  for (const { tape, warning } of side.warnings) process.stderr.write(`tapedeck: warning: ${tape}: ${warning.code} at byte ${warning.offset}: ${warning.message}\n`);
}

/**
 * Runs `tapedeck diff` with the arguments after the command name; returns the exit code (0
 * nothing in --fail-on changed, 1 something did, 2 bad input).
 *
 * @example
 * process.exitCode = await diffCommand(['tapes/', '--format', 'markdown'])
 */
export async function diffCommand(args: string[]): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({
        args,
        allowPositionals: true,
        options: {
          git: { type: 'string' },
          format: { type: 'string', default: 'terminal' },
          html: { type: 'string' },
          'fail-on': { type: 'string' },
          'usage-tolerance': { type: 'string' },
          help: { type: 'boolean', short: 'h', default: false },
        },
      });
    } catch (e) {
      throw usageError(`diff: ${(e as Error).message}`, 'tapedeck diff --help lists the options.');
    }
    const { values: v, positionals: p } = parsed;
    if (v.help) {
      process.stdout.write(DIFF_HELP);
      return DIFF_EXIT.ok;
    }
    if (!['terminal', 'markdown', 'json'].includes(v.format!)) {
      throw new TapedeckError('E_ARG', `--format must be terminal, markdown or json; got ${JSON.stringify(v.format)}.`, { hint: '--format markdown' });
    }
    const failOn = failOnList(v['fail-on']);
    let usageTolerance: number | undefined;
    if (v['usage-tolerance'] !== undefined) {
      usageTolerance = Number(v['usage-tolerance']);
      if (!(usageTolerance >= 0 && usageTolerance <= 1)) throw new TapedeckError('E_ARG', `--usage-tolerance must be a number from 0 to 1; got ${JSON.stringify(v['usage-tolerance'])}.`, { hint: '--usage-tolerance 0.2' });
    }
    let loaded;
    let labels;
    if (p.length === 2) {
      if (v.git !== undefined) throw usageError('diff: --git compares one tape or folder with its committed version; two paths were given.', 'tapedeck diff tapes/ --git HEAD, or tapedeck diff old.tape new.tape');
      loaded = await loadPaths(p[0]!, p[1]!);
      labels = { old: p[0]!, new: p[1]! };
    } else if (p.length === 1) {
      const rev = v.git ?? 'HEAD';
      loaded = await loadGit(p[0]!, rev);
      labels = { old: `${rev}:${p[0]}`, new: p[0]! };
    } else {
      throw usageError(`diff needs two tapes or folders, or one with --git; got ${p.length} paths.`, 'tapedeck diff old.tape new.tape, or tapedeck diff tapes/');
    }
    warnDamage(loaded.before);
    warnDamage(loaded.after);
    const report = driftReport(loaded.before.tapes, loaded.after.tapes, labels, { failOn, ...(usageTolerance !== undefined ? { usageTolerance } : {}) });
    if (v.format === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else if (v.format === 'markdown') process.stdout.write(renderMarkdown(report));
    else process.stdout.write(renderTerminal(report, { colour: useColour(process.stdout), width: process.stdout.columns }));
    if (v.html !== undefined) {
      writeFileSync(v.html, renderHtml(report));
      process.stderr.write(`tapedeck: wrote ${v.html}\n`);
    }
    return report.summary.failing > 0 ? DIFF_EXIT.failing : DIFF_EXIT.ok;
  } catch (e) {
    // Exit 1 means "answers changed", so every failure to compare is 2.
    process.stderr.write(formatCliError(e));
    return DIFF_EXIT.bad;
  }
}

/**
 * Runs `tapedeck stats` with the arguments after the command name; returns the exit code (0, or
 * 2 for bad input).
 *
 * @example
 * process.exitCode = await statsCommand(['tapes/', '--format', 'json'])
 */
export async function statsCommand(args: string[]): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args, allowPositionals: true, options: { prices: { type: 'string' }, format: { type: 'string', default: 'terminal' }, help: { type: 'boolean', short: 'h', default: false } } });
    } catch (e) {
      throw usageError(`stats: ${(e as Error).message}`, 'tapedeck stats --help lists the options.');
    }
    const { values: v, positionals: p } = parsed;
    if (v.help) {
      process.stdout.write(STATS_HELP);
      return 0;
    }
    if (v.format !== 'terminal' && v.format !== 'json') throw new TapedeckError('E_ARG', `--format must be terminal or json; got ${JSON.stringify(v.format)}.`, { hint: '--format json' });
    if (p.length === 0) throw usageError('stats needs at least one tape or folder.', 'tapedeck stats tapes/');
    const prices = loadPrices(v.prices);
    const side = await loadTapes(p);
    warnDamage(side);
    const stats = tapeStats(side.tapes, prices);
    if (v.format === 'json') process.stdout.write(`${JSON.stringify({ version: 1, pricesDate: PRICES_DATE, ...(v.prices ? { pricesFile: v.prices } : {}), ...stats }, null, 2)}\n`);
    else process.stdout.write(renderStats(stats, { pricesFile: v.prices }));
    return 0;
  } catch (e) {
    process.stderr.write(formatCliError(e));
    return 2;
  }
}
