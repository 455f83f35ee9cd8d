// The CLI's tape commands: verify, inspect, prune, export and import. Loaded when one of them
// runs, so the other commands start without the store's readers; the importers and the HAR
// writer load only for import and export --har (and the YAML parser only for a VCR.py cassette).
import { EXIT } from '../cli-errors.ts';
import { escapeTerminal } from '../drift/escape.ts';
import { holdsKeyedMask } from '../store/keyed-mask.ts';
import { callLabel } from '../mcp/tape.ts';
import { cancelledAfter } from '../mcp/cancelled.ts';
import type { McpRecord } from '../store/records.ts';
import { normalizeRequest } from '../providers/index.ts';
import { damageInOrder } from '../store/damage-order.ts';
import { writerFor } from '../store/chunked-write.ts';
import { summarizeRealtime } from '../store/realtime-summary.ts';
import { answerFraming, answerProblem, isHttpRecord, isRealtimeRecord } from '../store/records.ts';
import { newerRecordText, newerRecordVersion, UPGRADE_COMMAND } from '../store/record-version.ts';
import { newerKeySpec, newerKeyText, newerKeyWhat } from '../store/newer-key-spec.ts';
import { rewriteTape } from '../store/tape-file.ts';
import { byProcess, interruptedRecordRuns, interruptedRunMessage } from '../store/tape-writers.ts';
import { decodedRecords, withTapeStream } from '../store/tape-stream.ts';
import { exportCommand } from './export.ts';
import { writeOut } from './stdout.ts';
import { tapeArg } from './tape-arg.ts';
import { statSync } from 'node:fs';
import { formatCliError } from '../cli-errors.ts';
import { TapedeckError } from '../errors.ts';
import { tapesUnder } from '../store/tape-files.ts';

/** The tape command names this module runs. */
export type TapeCommand = 'verify' | 'inspect' | 'prune' | 'export' | 'import';

/** The options main() parsed that the tape commands take. */
export interface TapeCommandOptions {
  ignoreKeys?: string[];
  force: boolean;
  har: boolean;
  skipBad: boolean;
  from?: string;
  origin?: string;
  review: boolean;
  /** export as git's textconv (tapedeck init writes it): never fatal, problems shown as text. */
  textconv: boolean;
  /** import's extra redaction rules (--redact-header, --redact-field, --redact-query). */
  redact?: { headers?: string[]; fields?: string[]; query?: string[] };
  /** verify's tapes and folders after the first (`tapedeck verify tapes/ more.tape`). */
  more?: string[];
}

/**
 * Runs one tape command with its positional arguments and returns its exit code.
 *
 * @example
 * await tapeCommand('verify', 'recordings/app.tape', undefined, { force: false, har: false, skipBad: false, review: false, textconv: false })
 */
export async function tapeCommand(cmd: TapeCommand, file: string | undefined, second: string | undefined, o: TapeCommandOptions): Promise<number> {
  switch (cmd) {
    case 'verify':
      return o.more?.length || (file !== undefined && statSync(file, { throwIfNoEntry: false })?.isDirectory()) ? verifyMany([file!, ...(o.more ?? [])]) : verify(file);
    case 'inspect':
      return inspect(file);
    case 'prune':
      return prune(file);
    case 'export':
      return exportCommand(file, o);
    case 'import':
      return (await import('./import.ts')).importCommand(file, second, o);
  }
}

/**
 * The model and first user message of a recorded request, as one short line each ('-' where
 * there is none). Normalized for its route, as matching does: Gemini and Bedrock name the model
 * in the URL, and their messages' parts are not OpenAI's.
 */
function modelAndFirstText(request: unknown, endpoint: { method: string; url: string } | undefined): { model: string; first: string } {
  const asked = (request as { model?: unknown } | undefined)?.model;
  let model = typeof asked === 'string' ? asked : '-';
  if (request === undefined) return { model, first: '-' };
  try {
    const n = normalizeRequest(request, endpoint ? { endpoint } : {});
    if (typeof n.view.model === 'string') model = n.view.model;
    const m = n.messages.find((x) => (x as { role?: unknown }).role === 'user') as { content?: unknown } | undefined;
    const parts = Array.isArray(m?.content) ? (m.content as { type?: string; text?: string }[]) : [];
    // An embeddings view (Gemini's, Ollama's) holds its inputs as `input`, whatever the body named them.
    const text = parts.filter((p) => p.type === 'text').map((p) => p.text).join(' ') || inputText(request) || inputText(n.view);
    return { model, first: shortLine(text) };
  } catch {
    // A body no provider shape keys (Bedrock Titan's `inputText`): the model its URL names, its text.
    const named = /^\/model\/([^/?]+)\//.exec(endpoint?.url ?? '')?.[1];
    if (model === '-' && named !== undefined) model = safeDecode(named);
    return { model, first: shortLine(inputText(request)) };
  }
}

const shortLine = (text: string): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line || '-';
};

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The text of a request that has no messages: an embeddings call's `input` (its first string
 * when a list), a speech call's `input`, a completion's `prompt`, Bedrock Titan's `inputText`. Without it such a row showed
 * its route where the first user message goes.
 */
function inputText(request: unknown): string {
  const r = (request ?? {}) as { input?: unknown; prompt?: unknown; inputText?: unknown };
  for (const v of [r.input, r.prompt, r.inputText]) {
    if (typeof v === 'string') return v;
    if (Array.isArray(v) && typeof v[0] === 'string') return v.length > 1 ? `${v[0]} (+${v.length - 1} more)` : v[0];
  }
  return '';
}

/**
 * The request a record was made for: ReplayCache records hold it as `request`; the HTTP exchange
 * records of createFetch and serve (src/proxy/record.ts) hold the parsed JSON body as
 * `request.body`, next to the method and URL.
 */
function recordedRequest(v: { kind?: unknown; request?: unknown }): { request: unknown; route?: string; endpoint?: { method: string; url: string } } {
  if (v.kind === 'http' && v.request !== null && typeof v.request === 'object') {
    const r = v.request as { body?: unknown; method?: unknown; url?: unknown };
    const endpoint = typeof r.method === 'string' && typeof r.url === 'string' ? { method: r.method, url: r.url } : undefined;
    const body = r.body !== null && typeof r.body === 'object' && !ArrayBuffer.isView(r.body) ? r.body : undefined;
    return { request: body, ...(endpoint ? { route: `${endpoint.method} ${endpoint.url}`, endpoint } : {}) };
  }
  return { request: v.request };
}

/** A realtime record in one cell: the session's connect, a part's frames and end, a blob's size. */
function realtimeLabel(v: unknown): string {
  if (!isRealtimeRecord(v)) return '(malformed realtime record)';
  if (v.role === 'session') return `session ${v.sid.slice(0, 8)}: ${v.provider} ${v.url}`;
  if (v.role === 'blob') return `audio ${v.key.slice(5, 17)}, ${v.data.length} bytes`;
  const end = v.end ? `; ended by the ${v.end.by} (${v.end.code}${v.end.cut ? ', cut' : ''})` : '';
  return `part ${v.n} of ${v.sid.slice(0, 8)}: ${v.frames.length} frames${end}`;
}

/** One line per realtime session after the records: frames, responses, audio and tokens. */
function realtimeSessionLines(values: unknown[]): string[] {
  const sum = summarizeRealtime(values);
  if (sum.sessions.length === 0) return [];
  const secs = (x: number) => `${x.toFixed(1)} s`;
  return [
    `realtime sessions: ${sum.sessions.length}, audio stored once per content: ${sum.blobs} blob(s), ${sum.blobBytes} bytes`,
    ...sum.sessions.map((x) => {
      const end = x.end ? `ended by the ${x.end.by} (${x.end.code}${x.end.cut ? ', cut' : ''})` : 'cut (no end recorded)';
      return `  ${x.sid.slice(0, 8)} ${x.provider} ${x.url}: ${x.clientFrames} client / ${x.serverFrames} server frames, ${x.responses} response(s), ${x.toolCalls.length} tool call(s), audio in ${secs(x.audioIn.seconds)} out ${secs(x.audioOut.seconds)}, tokens ${x.tokensIn} in ${x.tokensOut} out, ${end}`;
    }),
  ];
}

async function inspect(file: string | undefined): Promise<number> {
  tapeArg('inspect', file, 'tapedeck inspect recordings/app.tape');
  // Record by record as the tape is read a window at a time: only realtime records are kept,
  // for the sessions' summary at the end.
  return withTapeStream(file!, async (t) => {
    // Lines are written ~64 KB at a time (a write per line is a system call per record), each
    // encoded as it is made (see utf8ChunkedWriter). An awaited write: a slow reader holds the
    // listing back, a failed write stops it.
    const listing = writerFor({ utf8: writeOut });
    const out = async (text: string): Promise<void> => {
      const written = listing.out(text);
      if (written) await written;
    };
    // New columns go at the end: scripts read the columns by position (`cut -f8`).
    await out('#\toffset\tbytes\tkey\tstatus\tstream\tsignature\tmodel\tfirst user message\torigin\n');
    const realtime: unknown[] = [];
    let i = 0;
    // The frames damage took are numbered where they lie, as scan numbers them: a record keeps
    // its number whichever command names it. Their damage is told below the records.
    const regionsBefore = damageInOrder(t.warnings, t.bytes);
    const damageRows = async (limit: number): Promise<void> => {
      for (const d of await regionsBefore(limit)) {
        for (let k = 0; k < d.frames.length; k++) {
          const at = d.frames[k]!;
          const length = (d.frames[k + 1] ?? d.end - d.start) - at;
          await out(`${i++}\t${d.start + at}\t${length}\t-\t-\t-\t-\t-\t[damaged, not read: ${d.warning.code} at byte ${d.warning.offset} below]\t-\n`);
        }
      }
    };
    for await (const r of decodedRecords(t, file!)) {
      await damageRows(r.offset);
      if (isRealtimeRecord(r.value)) realtime.push(r.value);
      // Awaited only when the line handed a chunk over (see chunkedWriter). Recorded text (a
      // pasted page's ESC sequences, a bidi override) is shown escaped, never run by the terminal.
      const written = listing.out(escapeTerminal(inspectLine(r, i++)));
      if (written) await written;
    }
    await damageRows(t.size);
    for (const line of realtimeSessionLines(realtime)) await out(`${escapeTerminal(line)}\n`);
    for (const w of t.warnings) await out(`${w.code} at byte ${w.offset}: ${w.message}\n`);
    await listing.flush();
    // Damage is a problem found, as for verify: scripts and CI see it in the exit code.
    return t.warnings.length ? 1 : 0;
  });
}

/** One record's line of `tapedeck inspect`, its newline included. */
function inspectLine(r: { offset: number; length: number; value: unknown }, i: number): string {
  const v = (r.value ?? {}) as { key?: unknown; kind?: unknown; signature?: { toolNames?: unknown[]; messageCount?: unknown }; request?: unknown };
  const key = typeof v.key === 'string' ? v.key.slice(0, 12) : '-';
  const sig = v.signature ? `${v.signature.messageCount ?? '?'} msgs, ${v.signature.toolNames?.length ?? 0} tools` : '-';
  // A newer tapedeck's record: its fields may mean other things here, so only that is said.
  const newer = newerRecordVersion(r.value);
  if (newer) return `${i}\t${r.offset}\t${r.length}\t${key}\t-\t-\t-\t-\t[${newer.name.replace(/^an? /, '')} of record version ${newer.version}: upgrade tapedeck to read it]\t-\n`;
  if (v.kind === 'realtime') {
    return `${i}\t${r.offset}\t${r.length}\t${key}\t-\tws\t-\trealtime\t${realtimeLabel(r.value)}\t-\n`;
  }
  if (v.kind === 'mcp') {
    // MCP exchanges: the method and what it names in place of model and first message.
    const req = (v.request ?? {}) as { method?: unknown; params?: unknown };
    const method = typeof req.method === 'string' ? req.method : '?';
    // A request the client cancelled has no answer: said, so it is not read as one that hung.
    const cancelled = cancelledAfter(v as unknown as McpRecord);
    const label = `${callLabel(method, req.params)}${cancelled === undefined ? '' : ` (cancelled by the client after ${Math.round(cancelled)} ms)`}`;
    return `${i}\t${r.offset}\t${r.length}\t${key}\t-\t-\t-\tmcp\t${label}\t-\n`;
  }
  const { request, route, endpoint } = recordedRequest(v);
  const { model, first } = modelAndFirstText(request, endpoint);
  // An answer recorded byte for byte although it is not what its content type says.
  const http = isHttpRecord(r.value) ? r.value.response : undefined;
  const problem = http ? answerProblem(http) : undefined;
  // The answer's status and framing: a 429 or a stream is told apart at a glance.
  const status = http ? String(http.status) : '-';
  const stream = http ? answerFraming(http) : '-';
  // The host it was recorded for: two hosts' recordings of one request differ only here. '-' for
  // a record that names none (written before origins were stored, or by hand with a path alone).
  // With the upstream's path prefix after it when the proxy forwarded under one: where it went.
  const under = isHttpRecord(r.value) && typeof r.value.upstreamPath === 'string' ? r.value.upstreamPath : '';
  const origin = isHttpRecord(r.value) && typeof r.value.origin === 'string' ? r.value.origin + under : '-';
  return `${i}\t${r.offset}\t${r.length}\t${key}\t${status}\t${stream}\t${sig}\t${model}\t${first === '-' && route ? route : first}${problem ? ` [answer ${problem}]` : ''}\t${origin}\n`;
}

/**
 * What a lost header took with it: its redaction salt, under which `masked` records hold keyed
 * masks (`[REDACTED:…]`). Intact as records, they no longer match a live request with those
 * values (its mask is made under the new salt), so they are said to need recording again.
 */
function saltLost(masked: number): string {
  return `The header held the tape's redaction salt, lost with it: ${masked} record${masked === 1 ? ' holds' : 's hold'} values masked under it (keyed masks), which a request with those values no longer matches under a new salt; restore the tape from version control, or record ${masked === 1 ? 'that call' : 'those calls'} again.\n`;
}

async function prune(file: string | undefined): Promise<number> {
  tapeArg('prune', file, 'tapedeck prune recordings/app.tape');
  if (!file) return EXIT.usage;
  // Read before the rewrite: a missing tape is E_TAPE_NOT_FOUND, not a lock file made for it.
  // With its header lost, the salt its keyed masks were made under is lost: counted, to say so.
  const masked = await withTapeStream(file, async (s) => {
    // A salt the damaged header still held whole is kept (tape-codec.ts): nothing lost then.
    if (s.header.headerLost !== true || s.header.salt !== undefined) return 0;
    let n = 0;
    for await (const f of s.frames()) if (holdsKeyedMask(f.payload)) n++;
    return n;
  });
  // What was removed is counted by the rewrite under the tape's lock, from the file it rewrote:
  // appends made meanwhile are not counted as damage, nor a new header as bytes removed.
  const r = await rewriteTape(file, () => true);
  const header = r.freshHeader === 'empty' ? '; wrote a header (the file was empty)' : r.freshHeader === 'damaged' ? '; wrote a fresh header (the old one was damaged)' : '';
  await writeOut(`${file}: kept ${r.kept} record${r.kept === 1 ? '' : 's'}, removed ${r.damageBytes} bytes of damage${header}\n${r.freshHeader === 'damaged' && masked > 0 ? saltLost(masked) : ''}`);
  return 0;
}

/**
 * `tapedeck verify` of several tapes or folders of tapes (a CI step, a pre-commit hook: `tapedeck
 * verify tapes/`): each tape checked and reported as one tape is, a tape that cannot be read at
 * all said with its error and counted, then one line naming the tapes with problems. Exit 1 when
 * any tape has one, so no tape is passed unchecked.
 */
async function verifyMany(paths: readonly string[]): Promise<number> {
  const tapes: string[] = [];
  for (const p of paths) {
    const found = statSync(p, { throwIfNoEntry: false })?.isDirectory() ? tapesUnder(p) : [p];
    // A folder without tapes is a wrong path (or a missing checkout), not a pass.
    if (found.length === 0) throw new TapedeckError('E_FILE', `${p} holds no .tape files; verify found nothing to check there.`, { file: p, hint: 'Name the folder the tapes are in, or the tapes themselves: tapedeck verify tapes/' });
    tapes.push(...found);
  }
  const failed: string[] = [];
  for (const tape of tapes) {
    try {
      if ((await verify(tape)) !== EXIT.ok) failed.push(tape);
    } catch (e) {
      // A usage mistake (an empty path) is the command line's, not a tape's: exit 2 as for one tape.
      if (!(e instanceof TapedeckError) || e.code === 'E_OUTPUT' || e.code === 'E_USAGE') throw e;
      // One tape that does not read (a missing file, a newer format, converted line endings)
      // does not stop the check of the others.
      await writeOut(`${tape}: ${formatCliError(e).replace(/^tapedeck: /, '')}`);
      failed.push(tape);
    }
  }
  const n = tapes.length;
  await writeOut(
    failed.length === 0
      ? `${n} tape${n === 1 ? '' : 's'} verified: ok\n`
      : `${n} tape${n === 1 ? '' : 's'} verified: ${failed.length} with problems (${failed.slice(0, 5).join(', ')}${failed.length > 5 ? ', ...' : ''})\n`,
  );
  return failed.length === 0 ? EXIT.ok : EXIT.failed;
}

async function verify(file: string | undefined): Promise<number> {
  tapeArg('verify', file, 'tapedeck verify recordings/app.tape');
  if (!file) return EXIT.usage;
  // Every record is decoded (a payload that does not decode is damage) and let go: the tape is
  // read a window at a time, so memory does not grow with it.
  const t = await withTapeStream(file, async (s) => {
    let records = 0;
    // With the header lost, its redaction salt is too (unless it still read whole): records
    // holding keyed masks are counted.
    let masked = 0;
    const lost = s.header.headerLost === true && s.header.salt === undefined;
    // Records of a record version newer than this tapedeck reads: intact, but replay cannot
    // serve them (E_TAPE_VERSION), so they are problems to list, with the upgrade.
    const newer: { code: string; offset: number; message: string }[] = [];
    // Records keyed under a newer request key spec: this tapedeck cannot check their keys, nor
    // key a request as they were keyed. Counted, and the first named (one line for them all).
    let keyed = 0;
    let firstKeyed: { offset: number; index: number; version: number; what: string } | undefined;
    for await (const r of decodedRecords(s, file, lost ? (p) => void (holdsKeyedMask(p) && masked++) : undefined)) {
      const n = newerRecordVersion(r.value);
      if (n) newer.push({ code: 'E_TAPE_VERSION', offset: r.offset, message: `record ${records} ${newerRecordText(n)}` });
      else {
        const version = newerKeySpec(r.value);
        if (version !== undefined && keyed++ === 0) firstKeyed = { offset: r.offset, index: records, version, what: newerKeyWhat(r.value) };
      }
      records++;
    }
    if (firstKeyed) newer.push({ code: 'E_TAPE_VERSION', offset: firstKeyed.offset, message: newerKeyText(keyed, { name: `record ${firstKeyed.index}`, version: firstKeyed.version, what: escapeTerminal(firstKeyed.what) }) });
    return { header: s.header, size: s.size, warnings: s.warnings, records, masked, newer, keyed };
  });
  const n = t.records;
  const them = n === 1 ? 'it' : 'them';
  // A lost header has no creation time or version to print, and none for prune to keep.
  const lost = t.header.headerLost === true;
  const empty = lost && t.size === 0;
  const about = empty
    ? 'empty (0 bytes: no header, no records)'
    : `${lost ? 'header damaged (creation time and tapedeck version unknown)' : `format ${t.header.formatVersion}, created ${t.header.created}, tapedeck ${t.header.tapedeckVersion}`}, ${n} record${n === 1 ? '' : 's'}, ${t.size} bytes`;
  let out = `${file}: ${about}\n`;
  // In file order, damage and newer records alike (sort is stable: damage first at one offset).
  for (const w of [...t.warnings, ...t.newer].sort((a, b) => a.offset - b.offset)) out += `${w.code} at byte ${w.offset}: ${w.message}\n`;
  // verify lists no records: say how many are intact, and what prune would do with the tape.
  const intact = empty ? 'the file is empty' : n === 0 ? 'no record is intact' : `the ${n} record${n === 1 ? '' : 's'} counted above ${n === 1 ? 'is' : 'are'} intact`;
  const pruned = empty
    ? 'writes a header, making it an empty tape'
    : lost
      ? `writes a fresh header${n === 0 ? '' : `, keeps ${them}`} and drops the damage`
      : `keeps ${n === 0 ? 'the header' : them} and drops the damage`;
  // Newer record versions (one line each) and records of a newer key spec (one line for all).
  const kk = t.keyed;
  const k = t.newer.length - (kk > 0 ? 1 : 0);
  // A record run that did not close left its re-recordings after the recordings they were to
  // replace: intact records, so nothing above says so, and the note lives only beside the tape
  // (<tape>.writers/, not committed). Said here, so the tape is not committed as it is.
  const interrupted = byProcess(await interruptedRecordRuns(file)).map((ws) => interruptedRunMessage(file, ws));
  for (const m of interrupted) out += `TAPEDECK_INTERRUPTED_RUN: ${m}\n`;
  // prune keeps a newer record (it copies intact frames as they are): only an upgrade reads it.
  const upgrade = k === 0 ? '' : `, ${k === n ? (n === 1 ? 'it' : 'all of them') : `${k} of them`} of a record version newer than this tapedeck reads: upgrade tapedeck to read ${k === 1 ? 'it' : 'them'} (${UPGRADE_COMMAND})`;
  // Not "ok": a pre-commit hook or CI that runs verify is told that some keys went unchecked.
  const keys = kk === 0 ? '' : `, ${kk === n ? (n === 1 ? 'but it is' : 'but all of them are') : `${kk} of them`} keyed under a newer request key spec than this tapedeck knows: upgrade tapedeck to verify ${kk === 1 ? 'its key' : 'their keys'}${k === 0 ? ` (${UPGRADE_COMMAND})` : ''}`;
  const problems = t.warnings.length + k + kk + interrupted.length;
  out += t.warnings.length
    ? `${problems} problem(s); ${intact}${upgrade}${keys} (tapedeck prune ${file} ${pruned}).\n`
    : k + kk > 0
      ? `${problems} problem(s); ${intact}${upgrade}${keys}; tapedeck prune keeps ${k + kk === 1 ? 'it' : 'them'}.\n`
      : interrupted.length > 0
        ? `${problems} problem(s): the ${n} record${n === 1 ? '' : 's'} ${n === 1 ? 'is' : 'are'} intact, but replay serves the recordings the run was to replace first.\n`
        : n === 0
          ? 'ok (no records)\n'
          : 'ok\n';
  if (t.masked > 0) out += saltLost(t.masked);
  await writeOut(out);
  return problems ? 1 : 0;
}
