// `tapedeck diff` and `tapedeck stats`: argument handling and output; the work is in the
// modules beside this one.

import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { argsError, dashValues } from '../cli-args.ts';
import { TapedeckError } from '../errors.ts';
import { formatCliError, usageError } from '../cli-errors.ts';
import { DIFF_HELP, RERECORD_HELP, STATS_HELP } from './help.ts';
import { loadGit, loadPaths, loadTapes, RERECORD_DRAFT, type LoadedSide } from './load.ts';
import { loadPrices, PRICES_DATE } from './prices.ts';
import { renderStats } from './render-stats.ts';
import { tapeStats } from './stats.ts';
import { awsSignsFor, credentialsFrom } from './live-credentials.ts';
import { hostlessCommand, shellArg } from './hostless-hint.ts';
import { hiddenUserinfo } from '../store/url-userinfo.ts';
import { destinationOf, heldMasks, maskedQueryValue, placeRerecorded, planRerecord, rerecord, SIGV4_HEADERS, sigV4Signed, upstreamFor, withTestOf, type AwsSigner, type Placed, type Planned, type Recorder } from './rerecord.ts';
import { originKey, originOf } from '../store/origins.ts';
import { createTape, decodeOrWarn, nativeStringsFor, recordFrame, rewriteTapeWith, scanTape, type TapeHeader, type TapeRecordEntry, type TapeWarning } from '../store/tape-file.ts';
import { isRedactionSalt } from '../store/tape-codec.ts';
import { isCacheRecord, isHttpRecord, isMcpRecord, isRealtimeRecord, type HttpRecord } from '../store/records.ts';
import { REDACTED, redactor } from '../store/redact.ts';
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
  if (raw.trim() === 'none') return [];
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  // An empty list (`--fail-on "$FAIL_ON"` with the variable unset) would switch the gate off
  // without a word: only `none` says that.
  if (names.length === 0) throw new TapedeckError('E_ARG', `--fail-on names no class (got ${JSON.stringify(raw)}).`, { hint: `--fail-on takes a comma-separated list of ${FAIL_ON_NAMES.join(', ')}; --fail-on none never fails; leave it out for the default (${DEFAULT_FAIL_ON.join(',')})` });
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

/**
 * A URL option's value as its error shows it: secret query values masked as a recorded URL's
 * are, and a userinfo's password (or a user name alone, a token) as `***`, with or without the
 * scheme a mistyped value lacks (`admin:pw@gw.example`, which URL parsing takes for a scheme).
 *
 * @example
 * shownUrlArg('admin:pw@gw.example')          // 'admin:***@gw.example'
 * shownUrlArg('gw.example/?api_key=k')        // 'gw.example/?api_key=%5BREDACTED%5D'
 */
function shownUrlArg(url: string): string {
  return hiddenUserinfo(redactor().url(url));
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
function checkHosts(plan: readonly Planned[], hosts: ReadonlyMap<string, { origin: string; count: number }>, named: Named, ran: { tape: string; yes?: boolean; budget?: string; only?: string; out?: string }): void {
  const hostless = plan.filter((x) => typeof x.record.origin !== 'string');
  const nowhere = hostless.map((x) => `#${x.index}`);
  // The command to run: the user's tape and flags, the host of the API the recordings are of.
  const command = (flag: '--upstream' | '--hostless-upstream') => hostlessCommand(ran.tape, hostless.map((x) => x.record.route), flag, ran);
  const { upstream } = named;
  if (upstream === undefined) {
    if (nowhere.length === 0 || named.hostlessUpstream !== undefined) return;
    const all = nowhere.length === plan.length;
    const which = `${all ? `the recordings name no host to send their requests to` : `${nowhere.length} of the ${plan.length} recordings name no host to send ${nowhere.length === 1 ? 'its request' : 'their requests'} to`} (made before tapes stored hosts, or written by hand with a path alone; records ${nowhere.slice(0, 5).join(', ')}${nowhere.length > 5 ? ', ...' : ''})`;
    // All of them hostless: one URL for all is the plain answer. Mixed: only they need one.
    if (all) throw new TapedeckError('E_ARG', `rerecord needs --upstream: ${which}.`, { hint: command('--upstream') });
    throw new TapedeckError('E_ARG', `rerecord needs --hostless-upstream: ${which}.`, { hint: `--hostless-upstream URL sends ${nowhere.length === 1 ? 'it' : 'them'} there and every other request to the host it was recorded for: ${command('--hostless-upstream')}` });
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
 * A tape's records with where their frames are in its bytes, read as readTape reads them (a
 * record that does not decode is a warning, not a record): rerecord carries the records it does
 * not send again over to the new tape frame by frame, as they were written.
 */
async function readFrames(tape: string): Promise<{ header: TapeHeader; bytes: Buffer; records: TapeRecordEntry[]; warnings: TapeWarning[] }> {
  const scan = await scanTape(tape);
  await nativeStringsFor(scan.bytes.length);
  const records: TapeRecordEntry[] = [];
  const warnings = [...scan.warnings];
  for (const f of scan.frames) {
    const d = decodeOrWarn(scan.bytes, f, tape);
    if ('warning' in d) warnings.push(d.warning);
    else records.push({ offset: f.offset, length: f.length, value: d.value });
  }
  warnings.sort((a, b) => a.offset - b.offset);
  return { header: scan.header, bytes: scan.bytes, records, warnings };
}

/**
 * The salt the re-recorded tape is made with: the original's; none for a tape made before salts
 * (its masks are all `[REDACTED]`, and so are the new tape's); a new one when the original's
 * header was lost (its salt with it: nothing can mask as it did).
 */
function saltOf(header: TapeHeader): string | null | undefined {
  if (isRedactionSalt(header.salt)) return header.salt;
  return header.headerLost === true ? undefined : null;
}

/**
 * The mask an empty header value got under a tape's salt, or undefined for a tape without one.
 * Recorders before this release masked `cookie: ""` (the Mistral SDK sends it): such a header held
 * nothing secret, so it does not hold its request back; sent again without it (a header holding a
 * mask nothing fills is not sent), the request is the one recorded.
 *
 * @example
 * emptyValueMask({ salt: '0123456789abcdef0123456789abcdef' }) // '[REDACTED:…]'
 */
function emptyValueMask(header: TapeHeader): string | undefined {
  return isRedactionSalt(header.salt) ? redactor({ salt: header.salt }).mask('') : undefined;
}

/** A record's request header (by lowercase name) as stored, its values joined. */
function storedHeader(record: { request: { headers: Record<string, unknown> } }, name: string): string | undefined {
  for (const [k, v] of Object.entries(record.request.headers)) if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(', ') : String(v);
  return undefined;
}

/**
 * What rerecord says of the requests it does not send because they hold a masked secret
 * (heldMasks): how many, the first few by record, route and where the mask is, and how to record
 * them again.
 */
function heldText(list: readonly Planned[], held: ReadonlyMap<number, string[]>): string {
  const n = list.length;
  const first = list.slice(0, 5).map((x) => {
    const where = held.get(x.index)!;
    return `#${x.index} ${x.record.route.split('?')[0]} (${where.slice(0, 3).join(', ')}${where.length > 3 ? ', ...' : ''})`;
  });
  return (
    `tapedeck rerecord: ${n} request${n === 1 ? ' holds a secret' : 's hold secrets'} the tape keeps masked, not sent: the API would get the mask in place of the secret, and its answer would be filed for the real request. ` +
    `${n === 1 ? 'Its recording is' : 'Their recordings are'} kept as ${n === 1 ? 'it is' : 'they are'}: ${first.join('; ')}${n > 5 ? `; ${n - 5} more` : ''}.\n` +
    `tapedeck rerecord: to record ${n === 1 ? 'it' : 'them'} again, run the application with TAPEDECK_MODE=record (it sends the secrets themselves); a masked header or query value can be given with --header "Name: value" (--header "?name: value").\n`
  );
}

/**
 * The line saying which records of the original rerecord carried over to the new tape as they
 * were, by why (not HTTP, not picked, held back, failed, stopped by the budget); '' for none.
 */
function carriedText(values: readonly unknown[], replaced: ReadonlyMap<number, number>, c: { handWritten: ReadonlySet<number>; held: ReadonlyMap<number, unknown>; failed: ReadonlySet<number>; stopped: ReadonlySet<number>; planned: ReadonlySet<number>; only: string; tape: string; out: string }): string {
  const counts = new Map<string, [string, string, number]>();
  const add = (one: string, many = one) => {
    const x = counts.get(one);
    if (x) x[2]++;
    else counts.set(one, [one, many, 1]);
  };
  values.forEach((x, i) => {
    if (replaced.has(i)) return;
    if (isMcpRecord(x)) add('MCP exchange', 'MCP exchanges');
    else if (isRealtimeRecord(x)) add('realtime session', 'realtime sessions');
    else if (isCacheRecord(x)) add('ReplayCache record', 'ReplayCache records');
    else if (!isHttpRecord(x)) add('record of another kind', 'records of other kinds');
    else if (c.handWritten.has(i)) add('hand-written recording', 'hand-written recordings');
    else if (c.held.has(i)) add('holding a masked secret', 'holding masked secrets');
    else if (c.failed.has(i)) add('whose call failed', 'whose calls failed');
    else if (c.stopped.has(i)) add('stopped by the budget');
    else if (!c.planned.has(i)) add(`not picked by ${c.only}`);
    // A call recorded whose new recording was not on the new tape (not expected): kept too.
    else add('with no new recording');
  });
  const total = [...counts.values()].reduce((a, [, , n]) => a + n, 0);
  if (total === 0) return '';
  const why = [...counts.values()].map(([one, many, n]) => `${n} ${n === 1 ? one : many}`).join(', ');
  return `tapedeck rerecord: carried over ${total} record${total === 1 ? '' : 's'} unchanged, in ${total === 1 ? 'its place' : 'their places'} (${why}): ${c.out} holds every record of ${c.tape}.\n`;
}

/**
 * The last line of a rerecord run: the new tape is a draft beside the tape, so it says how to see
 * the diff again, adopt the draft (move it over the tape; commit that) or drop it, with this run's
 * paths as a shell reads them.
 *
 * @example
 * adoptHint('tapes/chat.tape', 'tapes/chat.rerecorded.tape')
 * // 'hint: tapes/chat.tape is unchanged; tapedeck diff tapes/chat.tape tapes/chat.rerecorded.tape shows ... mv tapes/chat.rerecorded.tape tapes/chat.tape ...'
 */
function adoptHint(tape: string, out: string): string {
  // A path that starts with a dash would be read as an option by mv and rm.
  const word = (p: string) => shellArg(p.startsWith('-') ? `./${p}` : p);
  const [t, o] = [word(tape), word(out)];
  return (
    `hint: ${t} is unchanged; tapedeck diff ${t} ${o} shows the diff above again (the records carried over pair as identical). ` +
    `To keep the new answers, mv ${o} ${t} and commit ${t}; to drop them, rm ${o}.\n`
  );
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
 *
 * `signer`: makes the AWS SigV4 signer from `env`'s credentials (undefined without them), for
 * recordings that were signed so (Bedrock); the command line passes the proxy's.
 */
export async function rerecordCommand(args: string[], recorder: (tape: string) => Recorder | Promise<Recorder>, env: NodeJS.ProcessEnv = process.env, signer?: (env: NodeJS.ProcessEnv) => AwsSigner | undefined): Promise<number> {
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
    if (p.length !== 1) throw usageError(`rerecord needs one tape; got ${p.length}.`, example);
    const tape = p[0]!;
    // The examples of a malformed URL name the user's tape (the URL is the example's part).
    const ran = { tape, yes: v.yes, budget: v.budget, only: v.only, out: v.out };
    const withUpstream = hostlessCommand(tape, ['POST /v1/chat/completions'], '--upstream', ran);
    const withHostless = hostlessCommand(tape, ['POST /v1/chat/completions'], '--hostless-upstream', ran);
    // Without --upstream each request goes to the host its recording names (checked below), and
    // one whose recording names none to --hostless-upstream.
    const named: Named = { upstream: v.upstream, hostlessUpstream: v['hostless-upstream'] };
    if (named.upstream !== undefined && !/^https?:\/\/[^/]/i.test(named.upstream)) throw new TapedeckError('E_ARG', `--upstream must be the live API's base URL; got ${JSON.stringify(shownUrlArg(named.upstream))}.`, { hint: withUpstream });
    if (named.hostlessUpstream !== undefined && !/^https?:\/\/[^/]/i.test(named.hostlessUpstream)) throw new TapedeckError('E_ARG', `--hostless-upstream must be the live API's base URL; got ${JSON.stringify(shownUrlArg(named.hostlessUpstream))}.`, { hint: withHostless });
    if (named.upstream !== undefined && named.hostlessUpstream !== undefined) {
      throw new TapedeckError('E_ARG', '--upstream and --hostless-upstream were both given: --upstream sends every request to its URL, --hostless-upstream only those of recordings that name no host.', {
        hint: `Keep one: --hostless-upstream ${shownUrlArg(named.hostlessUpstream)} to send every other request to the host it was recorded for, or --upstream ${shownUrlArg(named.upstream)} alone to send them all there.`,
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

    // Read with its bytes: the records not sent again are carried over to the new tape as they are.
    const original = await readFrames(tape);
    for (const w of original.warnings) process.stderr.write(`tapedeck: warning: ${tape}: ${w.code} at byte ${w.offset}: ${w.message}\n`);
    const values = original.records.map((r) => r.value);
    const hostlessOnly = v['only-hostless'] === true;
    const picked = planRerecord(values, prices, v.only, hostlessOnly);
    const { skipped } = picked;
    const handWritten = new Set(picked.handWritten);
    if (handWritten.size > 0) {
      const n = handWritten.size;
      const first = picked.handWritten.slice(0, 5).map((i) => `#${i} ${(values[i] as HttpRecord).route.split('?')[0]}`);
      process.stderr.write(
        `tapedeck rerecord: ${n} hand-written recording${n === 1 ? '' : 's'} (tapedeck add) not sent, kept as ${n === 1 ? 'it is' : 'they are'}: the API cannot be asked for a written answer (a 429, a cut stream) again, and its answer would take ${n === 1 ? 'its' : 'their'} place: ${first.join('; ')}${n > 5 ? `; ${n - 5} more` : ''}.\n`,
      );
    }
    // Requests holding a secret the tape keeps masked are not sent: the API would be asked
    // another question (the mask's text), and its answer filed for the real one. Kept as recorded.
    const held = new Map<number, string[]>();
    const emptyMask = emptyValueMask(original.header);
    for (const x of picked.plan) {
      const to = destinationOf(x.record, upstreamFor(x.record, named)) ?? '';
      const where = heldMasks(x.record, (name) => credentials(x.record.route, name, to, upstreamFor(x.record, named) !== undefined) ?? (emptyMask !== undefined && storedHeader(x.record, name) === emptyMask ? '' : undefined));
      if (where.length) held.set(x.index, where);
    }
    if (held.size) process.stderr.write(heldText(picked.plan.filter((x) => held.has(x.index)), held));
    const plan = picked.plan.filter((x) => !held.has(x.index));
    if (plan.length === 0 && held.size === 0 && handWritten.size > 0) {
      throw new TapedeckError('E_RERECORD_EMPTY', `nothing sent: every request picked in ${tape} is a hand-written recording (${handWritten.size}), which rerecord keeps as it is.`, { file: tape, hint: 'Edit a hand-written recording in its JSON file and add it again (tapedeck add --help); rerecord sends the recordings your application made.' });
    }
    if (plan.length === 0 && held.size > 0) {
      throw new TapedeckError('E_RERECORD_EMPTY', `nothing sent: every request picked in ${tape} holds a secret the tape keeps masked (${held.size}), and none can be sent again as recorded.`, { file: tape, hint: 'Record them again by running the application with TAPEDECK_MODE=record, which sends the secrets themselves.' });
    }
    if (plan.length === 0) {
      const picked = [v.only ? ` matching ${JSON.stringify(v.only)}` : '', hostlessOnly ? ' that name no host' : ''].join('');
      const flags = [v.only ? '--only' : '', hostlessOnly ? '--only-hostless' : ''].filter(Boolean).join(' and ');
      // What the records that are not HTTP are, by kind: MCP exchanges (tapedeck serve records
      // them too) are recorded again by running the session, not by rerecord. The hint names no
      // library call (a CLI hint with one is replaced by its CLI form, src/cli-errors.ts).
      const mcp = values.filter(isMcpRecord).length;
      const realtime = values.filter(isRealtimeRecord).length;
      const kinds = [mcp ? `${mcp} MCP exchange(s)` : '', realtime ? `${realtime} realtime session record(s)` : '', skipped - mcp - realtime > 0 ? `${skipped - mcp - realtime} ReplayCache record(s)` : ''].filter(Boolean).join(', ');
      const again = mcp ? `MCP exchanges are recorded again by running the session in record mode: tapedeck mcp --tape ${tape} --mode record -- <server command> (stdio), or tapedeck serve --upstream <MCP server origin> --tape ${tape} --mode record (Streamable HTTP), or, in process, with the record mode of tapeTransport and the test tape's mcp helper (docs/mcp.md).` : 'rerecord sends again the HTTP requests of tapes recorded by createFetch or tapedeck serve.';
      throw new TapedeckError('E_RERECORD_EMPTY', `${tape} has no HTTP recordings${picked} to send again${kinds ? ` (${kinds}, which hold no HTTP request)` : ''}.`, { file: tape, hint: flags ? `Check ${flags}, or leave ${v.only && hostlessOnly ? 'them' : 'it'} out (tapedeck inspect shows each recording's host, - for none).` : again });
    }
    const estimate = plan.reduce((a, x) => a + x.estimate, 0);
    const hosts = hostsOf(plan);
    checkHosts(plan, hosts, named, ran);
    const hostless = plan.filter((x) => typeof x.record.origin !== 'string').length;
    if (named.hostlessUpstream !== undefined && hostless === 0) process.stderr.write(`tapedeck rerecord: note: every recording${v.only || hostlessOnly ? ' picked' : ''} names its host; --hostless-upstream sends none to ${named.hostlessUpstream}.\n`);
    // Where each planned request goes: its recording's host, --upstream for all, or
    // --hostless-upstream for one whose recording names none.
    const destination = new Map(plan.map((x) => [x.index, destinationOf(x.record, upstreamFor(x.record, named))!]));
    // The hosts they go to, as compared: with several a request is named with where it goes (two
    // hosts' recordings look alike).
    const sentTo = new Set([...destination.values()].map((d) => originKey(originOf(d) ?? d)));
    const onHost = (p: Planned) => (named.upstream === undefined && sentTo.size > 1 ? ` on ${destination.get(p.index)}` : '');
    // SigV4-signed recordings (Bedrock) are signed again with the environment's AWS credentials:
    // no key or --header can stand for a signature, which covers the date and the body.
    const sign = signer?.(env);
    const awsSigned = plan.filter((x) => sigV4Signed(x.record));
    if (awsSigned.length > 0 && sign === undefined) {
      throw new TapedeckError('E_ARG', `nothing sent: ${awsSigned.length} of the requests picked (${awsSigned.slice(0, 3).map((x) => `#${x.index} ${x.record.route}`).join(', ')}${awsSigned.length > 3 ? ', ...' : ''}) were signed with AWS SigV4 (Bedrock), and there are no AWS credentials to sign them again.`, {
        file: tape,
        hint: 'Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary credentials; AWS_REGION for a host that names no region), as for tapedeck serve, or leave them out with --only.',
      });
    }
    const unsignable = awsSigned.filter((x) => !awsSignsFor(destination.get(x.index)!, upstreamFor(x.record, named) !== undefined));
    if (unsignable.length > 0) {
      const to = destination.get(unsignable[0]!.index)!;
      throw new TapedeckError('E_ARG', `nothing sent: ${unsignable.length} SigV4-signed request(s) would go to ${to} (#${unsignable[0]!.index} ${unsignable[0]!.record.route}); AWS credentials sign only for https:// hosts under amazonaws.com, for this machine, or for the --upstream given.`, {
        file: tape,
        hint: 'Send them to the AWS endpoint: --upstream https://bedrock-runtime.<region>.amazonaws.com (or leave them out with --only).',
      });
    }
    // A credential the tape holds masked and nothing fills would be sent to the live API as a 401.
    const unfilled = new Set<string>();
    for (const p of plan) {
      const { record } = p;
      const to = destination.get(p.index)!;
      const resigned = sigV4Signed(record);
      for (const [name, value] of Object.entries(record.request.headers)) {
        if (resigned && SIGV4_HEADERS.has(name.toLowerCase())) continue;
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
      `tapedeck rerecord: ${plan.length} request${plan.length === 1 ? '' : 's'} to ${to}${skipped ? ` (${skipped} non-HTTP record(s) not sent, kept as they are)` : ''}; ` +
        `estimated cost ${usd(estimate)} from the recorded usage at list prices of ${PRICES_DATE}${v.prices ? ` and ${v.prices}` : ''}.\n`,
    );
    if (!v.yes && budget === undefined) {
      throw new TapedeckError('E_CONFIRM', `nothing sent: rerecord makes ${plan.length} live call${plan.length === 1 ? '' : 's'} (about ${usd(estimate)}) only when told to.`, { hint: `Add --yes to make them, or --budget ${Math.max(0.01, Math.ceil(estimate * 100) / 100).toFixed(2)} to stop before spending more.` });
    }
    // Written beside the target and moved into place at the end: a crash leaves no half tape at --out.
    const partial = `${out}.partial`;
    rmSync(partial, { force: true });
    // Made here with the original's redaction salt, so that the recorder (which opens an existing
    // tape and masks under its salt) masks a secret as the original did: the same request keeps
    // its key, a secret in an answer its mask, and the records carried over stay valid.
    mkdirSync(dirname(resolve(partial)), { recursive: true });
    await createTape(partial, { salt: saltOf(original.header) });
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
      ...(sign !== undefined ? { sign } : {}),
      ...((env.AWS_REGION || env.AWS_DEFAULT_REGION) ? { region: (env.AWS_REGION || env.AWS_DEFAULT_REGION)! } : {}),
      onProgress: tty
        ? (done, total, spent) => {
            const w = 24;
            const fill = Math.round((done / total) * w);
            process.stderr.write(`\r[${'#'.repeat(fill)}${'.'.repeat(w - fill)}] ${done}/${total}  ${usd(spent)} spent`);
            if (done === total) process.stderr.write('\n');
          }
        : undefined,
    });
    // The new tape in order: each record of the original in its place, the re-recorded ones
    // replaced by their new recordings, every other carried over byte for byte (not picked,
    // held back, not HTTP, failed, stopped by the budget): moving it over the original loses
    // nothing. Rewritten in place, as a rewrite writes (a temp file renamed over it).
    const failed = new Set(result.failed.map((f) => f.index));
    const stopped = new Set(result.notSent);
    const recorded = plan.filter((x) => !failed.has(x.index) && !stopped.has(x.index)).map((x) => x.index);
    let placed: { order: Placed[]; replaced: Map<number, number> } = { order: values.map((_, i) => ({ old: i })), replaced: new Map() };
    const fresh: unknown[] = [];
    // Made above; made again should the recorder have removed it (a writer removes an empty
    // tape it made itself as it closes), so that every run ends with a whole new tape.
    if (!existsSync(partial)) await createTape(partial, { salt: saltOf(original.header) });
    await rewriteTapeWith(partial, (scan) => {
      for (const f of scan.frames) {
        const d = decodeOrWarn(scan.bytes, f, partial);
        fresh.push('value' in d ? d.value : undefined);
      }
      placed = placeRerecorded(values, recorded, fresh);
      // A new recording keeps the test its original names (withTestOf), so each test sharing the
      // tape still replays its own answer; one whose original names none is kept byte for byte.
      const took = new Map<number, number>();
      for (const [i, j] of placed.replaced) took.set(j, i);
      return [
        scan.bytes.subarray(0, scan.headerEnd),
        ...placed.order.map((x) => {
          if ('old' in x) {
            const f = original.records[x.old]!;
            return original.bytes.subarray(f.offset, f.offset + f.length);
          }
          const i = took.get(x.fresh);
          const named = i === undefined ? undefined : withTestOf(values[i], fresh[x.fresh]);
          const f = scan.frames[x.fresh]!;
          return named !== undefined ? recordFrame(named, x.fresh, partial) : scan.bytes.subarray(f.offset, f.offset + f.length);
        }),
      ];
    });
    renameSync(partial, out);
    process.stderr.write(`tapedeck rerecord: recorded ${result.recorded} of ${result.planned} into ${out}; spent about ${usd(result.spent)}.\n`);
    // Calls that failed for one reason on one host (an upstream down: every call) are one line,
    // not a line each: a tape of 200 recordings said the same 200 times.
    const byReason = new Map<string, number[]>();
    for (const f of result.failed) {
      const k = `${onHost(plan.find((x) => x.index === f.index)!)} not recorded: ${f.reason.replace(/\.$/, '')}`;
      const list = byReason.get(k);
      if (list) list.push(f.index);
      else byReason.set(k, [f.index]);
    }
    for (const [why, list] of byReason) {
      list.sort((a, b) => a - b);
      const which = list.length === 1 ? `record #${list[0]}` : `${list.length} records (${list.slice(0, 10).map((i) => `#${i}`).join(', ')}${list.length > 10 ? ', ...' : ''})`;
      process.stderr.write(`tapedeck rerecord: ${which}${why}; ${list.length === 1 ? 'its old recording is' : 'their old recordings are'} kept.\n`);
    }
    if (result.notSent.length) process.stderr.write(`tapedeck rerecord: the budget of ${usd(budget!)} stopped it before ${result.notSent.length} call(s) (records ${result.notSent.slice(0, 10).map((i) => `#${i}`).join(', ')}${result.notSent.length > 10 ? ', ...' : ''}); their old recordings are kept.\n`);
    const carried = carriedText(values, placed.replaced, { handWritten, held, failed, stopped, planned: new Set(picked.plan.map((x) => x.index)), only: [v.only ? '--only' : '', hostlessOnly ? '--only-hostless' : ''].filter(Boolean).join(' and '), tape, out });
    if (carried) process.stderr.write(carried);
    // The diff of what was re-recorded: the records carried over are the same on both sides.
    const report = driftReport(
      [{ name: out, records: values.map((x, i) => (placed.replaced.has(i) ? x : undefined)) }],
      [{ name: out, records: placed.order.map((x) => ('fresh' in x ? fresh[x.fresh] : undefined)) }],
      { old: tape, new: out },
      { failOn },
    );
    printReport(report, v.format!, v.html);
    const incomplete = result.failed.length + result.notSent.length;
    if (incomplete) {
      // The report judged what was recorded; the run itself is incomplete, whatever it says.
      process.stderr.write(`tapedeck rerecord: incomplete: ${incomplete} of ${result.planned} call(s) not recorded (exit ${RERECORD_EXIT.incomplete}); their old recordings are kept in ${out}, and the diff above compares only what was recorded.\n`);
    }
    process.stderr.write(adoptHint(tape, out));
    if (incomplete) return RERECORD_EXIT.incomplete;
    return report.summary.failing > 0 ? DIFF_EXIT.failing : DIFF_EXIT.ok;
  } catch (e) {
    process.stderr.write(formatCliError(e));
    return DIFF_EXIT.bad;
  }
}
