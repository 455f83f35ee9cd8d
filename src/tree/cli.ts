// `tapedeck tree <tape>`: prints a tape's recordings as a conversation tree.

import { statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { argsError, dashValues } from '../cli-args.ts';
import { TapedeckError } from '../errors.ts';
import { reportCliError, usageError } from '../cli-errors.ts';
import { treeLines } from './format.ts';
import { loadTree } from './load.ts';
import { writerFor, type OutputSink } from '../store/chunked-write.ts';
import type { ConversationTree } from './tree.ts';

const USAGE = `Usage: tapedeck tree <tape> [--width N] [--collapse N] [--hashes] [--json]

Prints the tape's recorded conversations as a tree: one line per message (turn number, role,
excerpt), branches where conversations diverge, every recorded answer marked with its position
among the alternatives for the same prompt, model and recording time, and, on a tape recorded for
several hosts, the host(s) that gave it.

  --width N      longest excerpt, in characters (default 72)
  --collapse N   unbranched runs longer than N messages show their ends only (default 40; 0: never)
  --hashes       show each message's path hash (first 12 hex digits)
  --json         print the exchanges (path, parent, prompt and response hashes, the hosts that
                 gave the answer) as JSON lines
`;

function count(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) {
    throw new TapedeckError('E_ARG', `--${name} must be a non-negative integer; got ${JSON.stringify(raw)}.`, { hint: `e.g. --${name} 40` });
  }
  return Number(raw);
}

/**
 * Runs `tapedeck tree` with the arguments after the command name; returns the exit code
 * (0 printed, 1 the tape had damage or unplaceable records, 2 usage error). `write` takes the
 * output a piece at a time and resolves when it can take more (the CLI passes its stdout writer,
 * which reports a failed write as E_OUTPUT).
 *
 * @example
 * process.exitCode = await treeCommand(['recordings/chat.tape', '--hashes'], async (text) => void process.stdout.write(text))
 */
export async function treeCommand(args: string[], write: OutputSink): Promise<number> {
  let parsed;
  const options = {
    width: { type: 'string' },
    collapse: { type: 'string' },
    hashes: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  } as const;
  try {
    // A negative value (`--width -5`) reaches the flag's own check, which says what it must be.
    parsed = parseArgs({ args: dashValues(args, options), allowPositionals: true, options });
  } catch (e) {
    const { message, didYouMean } = argsError(e, options);
    return reportCliError(usageError(`tree: ${message}`, `${didYouMean}tapedeck tree --help lists the options.`));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] === '') {
    return reportCliError(usageError('tree needs exactly one tape.', 'tapedeck tree recordings/chat.tape'));
  }
  let width: number;
  let collapse: number;
  try {
    width = count('width', values.width, 72);
    collapse = count('collapse', values.collapse, 40);
  } catch (e) {
    return reportCliError(e);
  }
  const file = positionals[0]!;
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
    return reportCliError(new TapedeckError('E_FILE', `${file} is a directory; tree reads a tape file.`, { file, hint: 'tapedeck tree recordings/chat.tape' }));
  }
  // Printed, never served: the answers' values are not kept (~10% of a large tape's tree).
  const { tree, tapeWarnings } = await loadTree(file, { keepValues: false });
  const lines = values.json ? jsonLines(tree) : titled(file, treeLines(tree, { width: Math.max(8, width), hashes: values.hashes, collapse: collapse === 0 ? Infinity : collapse }));
  // (`tapedeck tree big.tape | head` closing the pipe early is handled where the command starts.)
  // Written in pieces of ~64 KB as the lines are made, as the exports write: one write per line
  // would cost a system call each, one for the whole tree held all of it (17 million
  // characters, twice over, for a 100,000-recording tape).
  const { out, flush } = writerFor(write);
  for (const line of lines) {
    const written = out(`${line}\n`);
    if (written) await written;
  }
  await flush();
  for (const w of tapeWarnings) process.stderr.write(`${w.code} at byte ${w.offset}: ${w.message}\n`);
  for (const line of skippedLines(tree)) process.stderr.write(`${line}\n`);
  for (const line of unplacedLines(tree)) process.stderr.write(`${line}\n`);
  return tapeWarnings.length + tree.warnings.length > 0 ? 1 : 0;
}

/**
 * The records the tree could not place: the first of each reason in full, where it is, then the
 * others left out for that reason in one line. An eval's tape of its own values ({ answer,
 * score }) has one reason for every record, which was the same line again for each.
 */
function unplacedLines(tree: ConversationTree): string[] {
  const byReason = new Map<string, ConversationTree['warnings']>();
  for (const w of tree.warnings) {
    const reason = `${w.code}: ${w.message}`;
    const same = byReason.get(reason);
    if (same) same.push(w);
    else byReason.set(reason, [w]);
  }
  const out: string[] = [];
  for (const [reason, [first, ...more]] of byReason) {
    out.push(`record ${first!.index}${first!.offset === undefined ? '' : ` at byte ${first!.offset}`} not placed: ${reason}`);
    if (more.length === 0) continue;
    const n = more.map((w) => w.index);
    const which = n.length <= 12 ? n.join(', ') : `${n.slice(0, 10).join(', ')}, …, ${n[n.length - 1]}`;
    const records = (k: number) => (k === 1 ? 'record' : 'records');
    out.push(`... and ${more.length.toLocaleString('en-US')} more ${records(more.length)} not placed for the same reason: ${records(n.length)} ${which}`);
  }
  return out;
}

// What tree.skipped says of a record, and how the summary names one and several of them.
const SKIPPED_NAMES: Record<string, [string, string]> = {
  'an embeddings call, not a conversation': ['embeddings call, not conversation', 'embeddings calls, not conversations'],
  'a token count, not a conversation': ['token count, not conversation', 'token counts, not conversations'],
  'an MCP exchange, not a conversation': ['MCP exchange, not conversation', 'MCP exchanges, not conversations'],
  'a realtime session, not a conversation': ['realtime session, not conversation', 'realtime sessions, not conversations'],
  'a byte-exact replay entry, not a conversation': ['byte-exact replay entry, not conversation', 'byte-exact replay entries, not conversations'],
};

/** One line per kind of call the tree left out (embeddings calls, token counts), with their record numbers. */
function skippedLines(tree: ConversationTree): string[] {
  const byKind = new Map<string, number[]>();
  for (const w of tree.skipped) {
    const list = byKind.get(w.message);
    if (list) list.push(w.index);
    else byKind.set(w.message, [w.index]);
  }
  return [...byKind].map(([message, records]) => {
    const n = records.length;
    const [one, many] = SKIPPED_NAMES[message] ?? [message, message];
    return `${n} record${n === 1 ? '' : 's'} not shown: ${n === 1 ? one : many} (records ${records.slice(0, 10).join(', ')}${n > 10 ? ', …' : ''})`;
  });
}

/** The exchanges as JSON lines (`--json`). */
function* jsonLines(tree: ConversationTree): Generator<string> {
  for (const x of tree.exchanges()) {
    const a = x.alternative;
    // `origins`: each host the answer was recorded from with its count (origin null for recordings
    // that name none); [] when none names one.
    const origins = a.origins.map((o) => ({ origin: o.origin ?? null, recordings: o.recordings }));
    yield JSON.stringify({ pathHash: x.pathHash, parentHash: x.parentHash, promptHash: x.promptHash, responseHash: x.responseHash, responsePathHash: a.node.pathHash, alternative: a.index, key: a.key ?? null, model: a.model ?? null, recordedAt: a.recordedAt ?? null, depth: a.prompt.depth, origins });
  }
}

/** The tape's name, then the tree's lines. */
function* titled(file: string, lines: Iterable<string>): Generator<string> {
  yield file;
  yield* lines;
}
