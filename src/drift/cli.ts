// `tapedeck diff` and `tapedeck stats`: argument handling and output; the work is in the
// modules beside this one.

import { existsSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { argsError, dashValues } from '../cli-args.ts';
import { TapedeckError } from '../errors.ts';
import { formatCliError, usageError } from '../cli-errors.ts';
import { DIFF_HELP, RERECORD_HELP, STATS_HELP } from './help.ts';
import { loadGit, loadPaths, loadTapes, RERECORD_DRAFT, type LoadedSide } from './load.ts';
import { loadPrices, PRICES_DATE } from './prices.ts';
import { renderStats } from './render-stats.ts';
import { tapeStats } from './stats.ts';
import { credentialsFrom } from './live-credentials.ts';
import { destinationOf, maskedQueryValue, planRerecord, rerecord, upstreamFor, type Planned, type Recorder } from './rerecord.ts';
import { originKey, originOf } from '../store/origins.ts';
import { createTape, readTape } from '../store/tape-file.ts';
import { REDACTED } from '../store/redact.ts';
import { queryDecode } from '../store/query-pairs.ts';
import type { DriftReport } from './report.ts';
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

/**
 * Says what damage the tapes read had (each warning, then how to act on it); true when a
 * recording was lost to it, so the command exits as for bad input after its report: a report
 * that leaves recordings out cannot pass a check (a diff would count them as removed, which
 * fails nothing by default).
 */
function warnDamage(...sides: LoadedSide[]): boolean {
  const damaged = new Set<string>();
  for (const { tape, warning } of sides.flatMap((s) => s.warnings)) {
    process.stderr.write(`tapedeck: warning: ${tape}: ${warning.code} at byte ${warning.offset}: ${warning.message}\n`);
    // Notes (keys of an older version, an interrupted run) and an empty file lose no recording.
    if (!warning.code.startsWith('TAPEDECK_') && warning.code !== 'E_TAPE_EMPTY') damaged.add(tape);
  }
  const list = [...damaged];
  // The command only for a file on disk (a committed version, `HEAD:x.tape`, is none).
  const verify = list.length === 1 && existsSync(list[0]!) ? `tapedeck verify ${list[0]}` : `tapedeck verify on ${list.length === 1 ? 'the tape' : 'each tape'}`;
  if (list.length > 0) process.stderr.write(`hint: the report leaves the damaged recordings out, so it is no pass: ${verify} lists the damage; restore ${list.length === 1 ? 'the tape' : 'the tapes'} from version control or record ${list.length === 1 ? 'it' : 'them'} again.\n`);
  return list.length > 0;
}

/** A side whose warnings name their tapes by path (a diff's sides name them as they pair them: a file by its base name, a folder's tapes inside it). */
function warningsAt(side: LoadedSide, path: string): LoadedSide {
  const dir = statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  return { ...side, warnings: side.warnings.map((w) => ({ ...w, tape: dir ? join(path, w.tape) : path })) };
}

/**
 * Says which tapes of the folders could not be read at all (left out of the report); true when
 * there were any, so the command exits as for bad input after reporting on the rest.
 */
function reportUnreadable(command: string, ...sides: LoadedSide[]): boolean {
  const all = sides.flatMap((s) => s.unreadable);
  for (const { tape, error } of all) process.stderr.write(`tapedeck ${command}: ${tape} left out: ${error.code}: ${error.message.split('\n')[0]}\n`);
  if (all.length > 0) process.stderr.write(`hint: check ${all.length === 1 ? 'it' : 'them'} with tapedeck verify, then restore ${all.length === 1 ? 'it' : 'them'} from version control or record ${all.length === 1 ? 'it' : 'them'} again; the report above leaves ${all.length === 1 ? 'it' : 'them'} out.\n`);
  return all.length > 0;
}

// The options of every command that prints a drift report.
const REPORT_OPTIONS = {
  format: { type: 'string', default: 'terminal' },
  html: { type: 'string' },
  'fail-on': { type: 'string' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** parseArgs, with what it rejects said as a usage error of `command`. */
function parse<O extends ParseArgsConfig['options']>(command: string, args: string[], options: O) {
  try {
    // A negative value (`--budget -1`) reaches the flag's own check, which says what it must be.
    return parseArgs({ args: dashValues(args, options ?? {}), allowPositionals: true, options });
  } catch (e) {
    const { message, didYouMean } = argsError(e, options ?? {});
    throw usageError(`${command}: ${message}`, `${didYouMean}tapedeck ${command} --help lists the options.`);
  }
}

function checkFormat(format: string | undefined): void {
  if (!['terminal', 'markdown', 'json'].includes(format!)) {
    throw new TapedeckError('E_ARG', `--format must be terminal, markdown or json; got ${JSON.stringify(format)}.`, { hint: '--format markdown' });
  }
}

function printReport(report: DriftReport, format: string, html: string | undefined): void {
  if (format === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else if (format === 'markdown') process.stdout.write(renderMarkdown(report));
  else process.stdout.write(renderTerminal(report, { colour: useColour(process.stdout), width: process.stdout.columns }));
  if (html !== undefined) {
    writeFileSync(html, renderHtml(report));
    process.stderr.write(`tapedeck: wrote ${html}\n`);
  }
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
    const parsed = parse('diff', args, { git: { type: 'string' }, 'usage-tolerance': { type: 'string' }, ...REPORT_OPTIONS });
    const { values: v, positionals: p } = parsed;
    if (v.help) {
      process.stdout.write(DIFF_HELP);
      return DIFF_EXIT.ok;
    }
    checkFormat(v.format);
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
    const damaged = p.length === 2 ? warnDamage(warningsAt(loaded.before, p[0]!), warningsAt(loaded.after, p[1]!)) : warnDamage(loaded.before, warningsAt(loaded.after, p[0]!));
    const report = driftReport(loaded.before.tapes, loaded.after.tapes, labels, { failOn, ...(usageTolerance !== undefined ? { usageTolerance } : {}) });
    printReport(report, v.format!, v.html);
    // A tape left out, or a recording lost to damage, could hide any change: not a pass,
    // whatever the rest says.
    if (reportUnreadable('diff', loaded.before, loaded.after) || damaged) return DIFF_EXIT.bad;
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
    const parsed = parse('stats', args, { prices: { type: 'string' }, format: { type: 'string', default: 'terminal' }, help: { type: 'boolean', short: 'h', default: false } });
    const { values: v, positionals: p } = parsed;
    if (v.help) {
      process.stdout.write(STATS_HELP);
      return 0;
    }
    if (v.format !== 'terminal' && v.format !== 'json') throw new TapedeckError('E_ARG', `--format must be terminal or json; got ${JSON.stringify(v.format)}.`, { hint: '--format json' });
    if (p.length === 0) throw usageError('stats needs at least one tape or folder.', 'tapedeck stats tapes/');
    const prices = loadPrices(v.prices);
    const side = await loadTapes(p);
    const damaged = warnDamage(side);
    const stats = tapeStats(side.tapes, prices);
    if (v.format === 'json') process.stdout.write(`${JSON.stringify({ version: 1, pricesDate: PRICES_DATE, ...(v.prices ? { pricesFile: v.prices } : {}), ...stats }, null, 2)}\n`);
    else process.stdout.write(renderStats(stats, { pricesFile: v.prices }));
    return reportUnreadable('stats', side) || damaged ? 2 : 0;
  } catch (e) {
    process.stderr.write(formatCliError(e));
    return 2;
  }
}

/** Exit codes of `tapedeck rerecord` beyond those of diff. */
export const RERECORD_EXIT = { ...DIFF_EXIT, incomplete: 3 } as const;

const usd = (x: number) => `$${x < 0.01 && x > 0 ? x.toFixed(4) : x.toFixed(2)}`;

/** The hosts the planned recordings were made for, as compared (originKey), with how many each; recordings that name none are not counted. */
function hostsOf(plan: readonly Planned[]): Map<string, { origin: string; count: number }> {
  const hosts = new Map<string, { origin: string; count: number }>();
  for (const { record } of plan) {
    if (typeof record.origin !== 'string') continue;
    const k = originKey(record.origin);
    const h = hosts.get(k);
    if (h) h.count++;
    else hosts.set(k, { origin: record.origin, count: 1 });
  }
  return hosts;
}

/** What the command line names for where requests go: --upstream for all, --hostless-upstream for those of recordings with no host. */
interface Named {
  upstream: string | undefined;
  hostlessUpstream: string | undefined;
}

/**
 * Refuses a plan that cannot go where its recordings were made before anything is sent: without
 * --upstream or --hostless-upstream, recordings that name no host (tapes written before hosts
 * were stored); with --upstream, recordings of several hosts (all sent to one, every new answer
 * filed for that one). --hostless-upstream sends the first kind somewhere and leaves the others
 * to their own hosts, so it is the fix wherever the two kinds are mixed.
 */
function checkHosts(plan: readonly Planned[], hosts: ReadonlyMap<string, { origin: string; count: number }>, named: Named, examples: { upstream: string; hostless: string }): void {
  const nowhere = plan.filter((x) => typeof x.record.origin !== 'string').map((x) => `#${x.index}`);
  const { upstream } = named;
  if (upstream === undefined) {
    if (nowhere.length === 0 || named.hostlessUpstream !== undefined) return;
    const all = nowhere.length === plan.length;
    const which = `${all ? `the recordings name no host to send their requests to` : `${nowhere.length} of the ${plan.length} recordings name no host to send ${nowhere.length === 1 ? 'its request' : 'their requests'} to`} (made before tapes stored hosts, or written by hand with a path alone; records ${nowhere.slice(0, 5).join(', ')}${nowhere.length > 5 ? ', ...' : ''})`;
    // All of them hostless: one URL for all is the plain answer. Mixed: only they need one.
    if (all) throw new TapedeckError('E_ARG', `rerecord needs --upstream: ${which}.`, { hint: examples.upstream });
    throw new TapedeckError('E_ARG', `rerecord needs --hostless-upstream: ${which}.`, { hint: `--hostless-upstream URL sends ${nowhere.length === 1 ? 'it' : 'them'} there and every other request to the host it was recorded for: ${examples.hostless}` });
  }
  if (hosts.size > 1) {
    const list = [...hosts.values()].map((h) => `${h.origin} (${h.count})`).join(', ');
    throw new TapedeckError('E_ARG', `The recordings were made for ${hosts.size} hosts, ${list}: --upstream would send every request to ${upstream} and file every new answer for it.`, {
      // With recordings that name no host, leaving --upstream out alone would stop at them.
      hint:
        nowhere.length > 0
          ? `Give it as --hostless-upstream ${upstream} instead: the ${nowhere.length} recording${nowhere.length === 1 ? ' that names' : 's that name'} no host go there, each other to the host it was recorded for.`
          : `Leave --upstream out to send each request to the host it was recorded for, or re-record one host's at a time: --only ${new URL([...hosts.values()][0]!.origin).host}`,
    });
  }
}

/**
 * Runs `tapedeck rerecord`: sends a tape's requests again to the live API, records the answers
 * into a new tape through `recorder` (the command line passes createFetch in record mode), then
 * prints the diff. Returns the exit code: 0 / 1 as diff, 2 bad input or not confirmed, 3 when
 * the budget stopped it or calls failed (the new tape holds what was recorded).
 *
 * @example
 * process.exitCode = await rerecordCommand(['tapes/chat.tape', '--upstream', 'https://api.openai.com', '--budget', '0.50'], (tape) => createFetch({ tape, mode: 'record' }))
 * process.exitCode = await rerecordCommand(['tapes/mixed.tape', '--hostless-upstream', 'https://api.openai.com', '--yes'], (tape) => createFetch({ tape, mode: 'record' }))
 */
export async function rerecordCommand(args: string[], recorder: (tape: string) => Recorder | Promise<Recorder>, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    const parsed = parse('rerecord', args, {
      upstream: { type: 'string' },
      'hostless-upstream': { type: 'string' },
      only: { type: 'string' },
      'only-hostless': { type: 'boolean', default: false },
      out: { type: 'string' },
      yes: { type: 'boolean', default: false },
      budget: { type: 'string' },
      concurrency: { type: 'string' },
      retries: { type: 'string' },
      prices: { type: 'string' },
      header: { type: 'string', multiple: true, default: [] },
      force: { type: 'boolean', default: false },
      ...REPORT_OPTIONS,
    });
    const { values: v, positionals: p } = parsed;
    if (v.help) {
      process.stdout.write(RERECORD_HELP);
      return 0;
    }
    const example = 'tapedeck rerecord tapes/chat.tape --budget 0.50';
    const withUpstream = 'tapedeck rerecord tapes/chat.tape --upstream https://api.openai.com --budget 0.50';
    const withHostless = 'tapedeck rerecord tapes/chat.tape --hostless-upstream https://api.openai.com --budget 0.50';
    if (p.length !== 1) throw usageError(`rerecord needs one tape; got ${p.length}.`, example);
    const tape = p[0]!;
    // Without --upstream each request goes to the host its recording names (checked below), and
    // one whose recording names none to --hostless-upstream.
    const named: Named = { upstream: v.upstream, hostlessUpstream: v['hostless-upstream'] };
    if (named.upstream !== undefined && !/^https?:\/\/[^/]/i.test(named.upstream)) throw new TapedeckError('E_ARG', `--upstream must be the live API's base URL; got ${JSON.stringify(named.upstream)}.`, { hint: withUpstream });
    if (named.hostlessUpstream !== undefined && !/^https?:\/\/[^/]/i.test(named.hostlessUpstream)) throw new TapedeckError('E_ARG', `--hostless-upstream must be the live API's base URL; got ${JSON.stringify(named.hostlessUpstream)}.`, { hint: withHostless });
    if (named.upstream !== undefined && named.hostlessUpstream !== undefined) {
      throw new TapedeckError('E_ARG', '--upstream and --hostless-upstream were both given: --upstream sends every request to its URL, --hostless-upstream only those of recordings that name no host.', {
        hint: `Keep one: --hostless-upstream ${named.hostlessUpstream} to send every other request to the host it was recorded for, or --upstream ${named.upstream} alone to send them all there.`,
      });
    }
    checkFormat(v.format);
    const failOn = failOnList(v['fail-on']);
    const num = (name: string, raw: string | undefined, ok: (x: number) => boolean, eg: string) => {
      if (raw === undefined) return undefined;
      const x = Number(raw);
      if (raw.trim() === '' || !ok(x)) throw new TapedeckError('E_ARG', `--${name}: ${JSON.stringify(raw)} is not valid.`, { hint: `e.g. --${name} ${eg}` });
      return x;
    };
    const budget = num('budget', v.budget, (x) => x >= 0, '0.50');
    const concurrency = num('concurrency', v.concurrency, (x) => Number.isInteger(x) && x >= 1 && x <= 64, '4');
    const retries = num('retries', v.retries, (x) => Number.isInteger(x) && x >= 0, '5');
    if (statSync(tape, { throwIfNoEntry: false })?.isDirectory()) throw new TapedeckError('E_FILE', `${tape} is a folder; rerecord reads one tape.`, { file: tape, hint: example });
    const out = v.out ?? tape.replace(/(\.tape)?$/, RERECORD_DRAFT);
    if (resolve(out) === resolve(tape)) throw new TapedeckError('E_ARG', 'rerecord never writes over the tape it reads: --out must name another file.', { file: out, hint: `--out ${tape.replace(/(\.tape)?$/, '.new.tape')}, then review the diff and move it into place` });
    if (existsSync(out) && !v.force) throw new TapedeckError('E_TAPE_EXISTS', `${out} exists.`, { file: out, hint: 'Add --force to replace it, or give another --out.' });
    const credentials = credentialsFrom(env, v.header ?? [], v.upstream !== undefined);
    const prices = loadPrices(v.prices);

    const original = await readTape(tape);
    for (const w of original.warnings) process.stderr.write(`tapedeck: warning: ${tape}: ${w.code} at byte ${w.offset}: ${w.message}\n`);
    const values = original.records.map((r) => r.value);
    const hostlessOnly = v['only-hostless'] === true;
    const { plan, skipped } = planRerecord(values, prices, v.only, hostlessOnly);
    if (plan.length === 0) {
      const picked = [v.only ? ` matching ${JSON.stringify(v.only)}` : '', hostlessOnly ? ' that name no host' : ''].join('');
      const flags = [v.only ? '--only' : '', hostlessOnly ? '--only-hostless' : ''].filter(Boolean).join(' and ');
      throw new TapedeckError('E_RERECORD_EMPTY', `${tape} has no HTTP recordings${picked} to send again${skipped ? ` (${skipped} ReplayCache record(s) hold no HTTP request)` : ''}.`, { file: tape, hint: flags ? `Check ${flags}, or leave ${v.only && hostlessOnly ? 'them' : 'it'} out (tapedeck inspect shows each recording's host, - for none).` : 'rerecord replays tapes recorded by createFetch or tapedeck serve.' });
    }
    const estimate = plan.reduce((a, x) => a + x.estimate, 0);
    const hosts = hostsOf(plan);
    checkHosts(plan, hosts, named, { upstream: withUpstream, hostless: withHostless });
    const hostless = plan.filter((x) => typeof x.record.origin !== 'string').length;
    if (named.hostlessUpstream !== undefined && hostless === 0) process.stderr.write(`tapedeck rerecord: note: every recording${v.only || hostlessOnly ? ' picked' : ''} names its host; --hostless-upstream sends none to ${named.hostlessUpstream}.\n`);
    // Where each planned request goes: its recording's host, --upstream for all, or
    // --hostless-upstream for one whose recording names none.
    const destination = new Map(plan.map((x) => [x.index, destinationOf(x.record, upstreamFor(x.record, named))!]));
    // The hosts they go to, as compared: with several a request is named with where it goes (two
    // hosts' recordings look alike).
    const sentTo = new Set([...destination.values()].map((d) => originKey(originOf(d) ?? d)));
    const onHost = (p: Planned) => (named.upstream === undefined && sentTo.size > 1 ? ` on ${destination.get(p.index)}` : '');
    // A credential the tape holds masked and nothing fills would be sent to the live API as a 401.
    const unfilled = new Set<string>();
    for (const p of plan) {
      const { record } = p;
      const to = destination.get(p.index)!;
      for (const [name, value] of Object.entries(record.request.headers)) {
        if (String(value).includes(REDACTED) && credentials(record.route, name.toLowerCase(), to, upstreamFor(record, named) !== undefined) === undefined) unfilled.add(`${name} (${record.route}${onHost(p)})`);
      }
      // Masked query values (a `?token=`, Gemini's `?key=`): sent masked unless something fills them.
      const q = record.request.url.indexOf('?');
      for (const pair of q < 0 ? [] : record.request.url.slice(q + 1).split('&')) {
        const eq = pair.indexOf('=');
        // A name as meant, or as written when its escapes are malformed (as liveUrl reads it).
        if (eq > 0 && maskedQueryValue(pair.slice(eq + 1)) && credentials(record.route, `?${queryDecode(pair.slice(0, eq))}`, to, upstreamFor(record, named) !== undefined) === undefined) unfilled.add(`?${pair.slice(0, eq)}= (${record.route.split('?')[0]}${onHost(p)})`);
      }
    }
    // Keys from the environment go to their provider's host only: another host needs --header.
    const ownHostsOnly = named.upstream === undefined ? " (a key from the environment goes only to its provider's own host: for another, --header with --only that host)" : '';
    if (unfilled.size) process.stderr.write(`tapedeck rerecord: warning: no credential for ${[...unfilled].slice(0, 4).join(', ')}: set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY, or --header "Name: value"${ownHostsOnly}; what nothing fills is sent masked, and the API will refuse it.\n`);
    if (named.upstream !== undefined && hosts.size === 1) {
      // The new recordings name where they were sent: another host's requests will not find them.
      const [recorded] = hosts.values();
      const upstreamOrigin = originOf(named.upstream);
      if (upstreamOrigin !== undefined && originKey(upstreamOrigin) !== originKey(recorded!.origin)) {
        // Moving the host's recordings may not be the point: only the hostless ones needed a URL.
        const instead = hostless > 0 ? `; --hostless-upstream instead of --upstream sends only the ${hostless} that name${hostless === 1 ? 's' : ''} no host there` : '';
        process.stderr.write(`tapedeck rerecord: note: the recordings were made for ${recorded!.origin}; the new ones are made for ${upstreamOrigin}, where --upstream sends them, and answer requests to that host only (docs/matching.md, "Hosts")${instead}.\n`);
      }
    }
    // One host: named with the path prefix its requests go under when they share one. Several:
    // each recorded host with its count, and where the hostless ones go.
    const under = new Set(destination.values());
    const groups = [...hosts.values()].map((h) => `${h.count} to ${h.origin}`);
    if (hostless > 0 && named.hostlessUpstream !== undefined) groups.push(`${hostless} hostless to ${destinationOf(plan.find((x) => typeof x.record.origin !== 'string')!.record, named.hostlessUpstream)}`);
    const to =
      named.upstream ??
      (under.size === 1 ? [...under][0]! : hostless === 0 && hosts.size === 1 ? [...hosts.values()][0]!.origin : `${sentTo.size} host${sentTo.size === 1 ? '' : 's'} (${groups.join(', ')})`);
    process.stderr.write(
      `tapedeck rerecord: ${plan.length} request${plan.length === 1 ? '' : 's'} to ${to}${skipped ? ` (${skipped} non-HTTP record(s) skipped)` : ''}; ` +
        `estimated cost ${usd(estimate)} from the recorded usage at list prices of ${PRICES_DATE}${v.prices ? ` and ${v.prices}` : ''}.\n`,
    );
    if (!v.yes && budget === undefined) {
      throw new TapedeckError('E_CONFIRM', `nothing sent: rerecord makes ${plan.length} live call${plan.length === 1 ? '' : 's'} (about ${usd(estimate)}) only when told to.`, { hint: `Add --yes to make them, or --budget ${Math.max(0.01, Math.ceil(estimate * 100) / 100).toFixed(2)} to stop before spending more.` });
    }
    // Written beside the target and moved into place at the end: a crash leaves no half tape at --out.
    const partial = `${out}.partial`;
    rmSync(partial, { force: true });
    const tty = process.stderr.isTTY === true;
    const result = await rerecord(plan, {
      ...(named.upstream !== undefined ? { upstream: named.upstream } : {}),
      ...(named.hostlessUpstream !== undefined ? { hostlessUpstream: named.hostlessUpstream } : {}),
      recorder: await recorder(partial),
      prices,
      ...(budget !== undefined ? { budget } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      ...(retries !== undefined ? { retries } : {}),
      credentials,
      onProgress: tty
        ? (done, total, spent) => {
            const w = 24;
            const fill = Math.round((done / total) * w);
            process.stderr.write(`\r[${'#'.repeat(fill)}${'.'.repeat(w - fill)}] ${done}/${total}  ${usd(spent)} spent`);
            if (done === total) process.stderr.write('\n');
          }
        : undefined,
    });
    // The recorder writes a tape only once it has a record. With none (every call failed, or the
    // budget allowed none) the new tape is still written, empty, so that what is printed is
    // true and the run ends as docs/drift.md says for any incomplete one: the tape holds what
    // was recorded (nothing) and the diff shows every answer removed.
    if (!existsSync(partial)) await createTape(partial);
    renameSync(partial, out);
    process.stderr.write(`tapedeck rerecord: recorded ${result.recorded} of ${result.planned} into ${out}; spent about ${usd(result.spent)}.\n`);
    for (const f of result.failed) process.stderr.write(`tapedeck rerecord: record #${f.index}${onHost(plan.find((x) => x.index === f.index)!)} not recorded: ${f.reason}\n`);
    if (result.notSent.length) process.stderr.write(`tapedeck rerecord: the budget of ${usd(budget!)} stopped it before ${result.notSent.length} call(s) (records ${result.notSent.slice(0, 10).map((i) => `#${i}`).join(', ')}${result.notSent.length > 10 ? ', ...' : ''}).\n`);
    // The diff of what was planned: records --only left out are not "removed".
    const planned = new Set(plan.map((x) => x.index));
    const after = await readTape(out);
    const report = driftReport(
      [{ name: out, records: values.map((x, i) => (planned.has(i) ? x : undefined)) }],
      [{ name: out, records: after.records.map((r) => r.value) }],
      { old: tape, new: out },
      { failOn },
    );
    printReport(report, v.format!, v.html);
    if (result.failed.length || result.notSent.length) {
      // The report judged what was recorded; the run itself is incomplete, whatever it says.
      process.stderr.write(`tapedeck rerecord: incomplete: ${result.failed.length + result.notSent.length} of ${result.planned} call(s) not recorded (exit ${RERECORD_EXIT.incomplete}); the diff above compares only what was.\n`);
      return RERECORD_EXIT.incomplete;
    }
    return report.summary.failing > 0 ? DIFF_EXIT.failing : DIFF_EXIT.ok;
  } catch (e) {
    process.stderr.write(formatCliError(e));
    return DIFF_EXIT.bad;
  }
}
