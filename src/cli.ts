#!/usr/bin/env node
// The tapedeck command. Subcommands grow with the project; today: version, help, and the core's
// canonicalize/hash tools, which are handy for checking what a request hashes to.

import { backend, canonicalizeJSON, hashJSON, pathHashes, requestKeys, TapedeckError, VERSION } from './index.ts';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { EXIT, reportCliError, setDebug, usageError } from './cli-errors.ts';
import { COMMAND_HELP } from './cli-help.ts';
import { importTapeJSON, writeTapeJSON } from './store/export.ts';
import { exportTapeHar } from './store/export-har.ts';
import { detectFormat, formatByName, IMPORT_FORMATS, type ImportFormat } from './store/import/read.ts';
import { importRecordings, type ImportReport } from './proxy/import.ts';
import { importCacheJSON, importRecordingsDir } from './store/migrate.ts';
import { answerFraming, answerProblem, isHttpRecord, isRealtimeRecord } from './store/records.ts';
import { summarizeRealtime } from './store/realtime-summary.ts';
import { readTape, rewriteTape } from './store/tape-file.ts';
import { decodedRecords, withTapeStream } from './store/tape-stream.ts';
import { TAPE_MAGIC } from './store/tape-codec.ts';
import { isUtf8 } from 'node:buffer';
import { normalizeRequest } from './providers/index.ts';
import { callLabel } from './mcp/tape.ts';
import { DRIFT_COMMANDS } from './drift/help.ts';

const HELP = `tapedeck ${VERSION} — record and replay LLM API calls deterministically

Usage:
  tapedeck <command> [arguments]

Commands:
  canonical [file]      Print the RFC 8785 canonical form of JSON (file or stdin)
  hash [file]           Print the SHA-256 digest of the canonical form
  paths [file]          Print message and path hashes of a JSON array of messages
                        (or of the "messages" member of a request object)
  key [file]            Print what the matcher keys an LLM request body by: provider,
                        request key, signature and the hashes of the normalized messages
  verify <tape>         Check a tape file: header, every record's frame and checksum;
                        report torn tails and damaged records with their byte offsets
  inspect <tape>        List the records: offset, size, key, status, stream, signature,
                        model and the first user message
  tree <tape> [--hashes] [--json] [--width N] [--collapse N]
                        Print the recorded conversations as a tree: turns, branches,
                        alternative answers, excerpts (docs/tree.md)
${DRIFT_COMMANDS}  prune <tape>          Compact a tape: drop damaged bytes and records that do not decode
                        (atomic rewrite under the tape lock; concurrent appends are kept)
  prune <redis-url> [--namespace NS]
                        The same for a Redis namespace (docs/redis.md)
  export <tape> [--json] [--review]
                        Print a tape as deterministic, pretty JSON (sorted keys, binary as
                        base64) for code review; --review: streams as their answer and
                        one event per line (what git diff shows; not importable)
  export <tape> --har [--origin URL]
                        Print its HTTP recordings as HAR 1.2 (devtools, Playwright's
                        routeFromHAR, Polly.js; docs/migrate.md)
  scan <tapes...> [--staged]
                        Look for anything that looks like a credential in every record
                        (headers, bodies, streams); exit 1 naming where (docs/proxy.md)
  import <src> <tape> [--force] [--ignore a,b] [--from FORMAT] [--skip-bad]
                        Write a tape from such JSON (lossless), from a directory of
                        JSON recordings (one request/response per file), a
                        DSPy-style cache.json, a HAR file (Polly.js, Playwright,
                        devtools), a VCR.py / pytest-recording cassette, nock
                        recorder output or mock-server fixtures (docs/migrate.md)
                        (refuses to overwrite without --force)
  mcp --tape FILE [--mode M] -- <server command> [args...]
                        Record/replay an MCP server over stdio: put it where the
                        MCP host starts the server (tapedeck mcp --help; docs/mcp.md)
  serve --upstream URL --tape FILE [--mode M] [--port N] [--host H] ...
                        Record/replay proxy for LLM APIs; --chaos SPEC injects faults
                        on replay (tapedeck serve --help; docs/proxy.md, docs/chaos.md)
  add <tape> <file.json>...
                        Add hand-written recordings (answers, streams, errors such as
                        429, cut streams) to a tape (docs/hand-written.md)
  init                  Make git diff show tapes as their JSON export (.gitattributes
                        and git config; docs/tape-format.md)
  push <tape> <redis-url> [--namespace NS] [--ttl S]
                        Copy a tape's records into a shared Redis store (docs/redis.md)
  pull <redis-url> <tape> [--namespace NS] [--force]
                        Write a Redis store's records to a tape (byte-exact round trip)
  version               Print the version and the active backend
  help                  Show this help

Options:
  --ignore <k1,k2>      Drop these object members (any depth) before hashing;
                        for \`key\`, request arguments to leave out
  --force               import, pull: replace an existing tape
  --from <format>       import: har | vcr | nock | fixtures (default: detected)
  --skip-bad            import: keep the good entries of a file with malformed ones
  --debug               Print the stack trace with an error
  -h, --help            Show this help; tapedeck <command> --help (or tapedeck help
                        <command>) shows that command's help
  -v, --version         Print the version

Environment:
  TAPEDECK_MODE         replay (default) | record | update | passthrough | once: how
                        createFetch, ReplayCache, serve and mcp (without --mode) treat
                        the tape (once: record when the tape does not exist, else replay)
  CACHE_MODE            The same, read when TAPEDECK_MODE is unset
  TAPEDECK_BACKEND      Force a hashing backend: wasm-simd | wasm | js
  TAPEDECK_REPLAY_ENABLED, TAPEDECK_REPLAY_MAX_ENTRIES, TAPEDECK_REPLAY_TTL_MS
                        The replay-by-trace-token store of serve (docs/replay.md)
  AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
                        serve re-signs SigV4 requests signed with this access key for
                        the upstream's host, once their signature verifies with the
                        secret (docs/proxy.md, "AWS SigV4")

Exit codes:
  0    done (verify, inspect, tree: no problems found)
  1    bad input (invalid JSON, a damaged, missing or wrong kind of file), or problems found
  2    usage: unknown command or option, a bad value, a missing argument
  130  serve stopped by a second signal without waiting for in-flight requests
  diff, stats, rerecord: 1 means answers changed, 2 bad input (tapedeck diff --help)

Errors are one line, \`tapedeck: E_CODE message\`, and a hint; --debug adds the stack trace.

Examples:
  tapedeck serve --upstream https://api.openai.com --tape tapes/app.tape --mode record
  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 npm test        # the client talks to the proxy
  tapedeck inspect tapes/app.tape | head                    # model and first message per record
  tapedeck export tapes/app.tape > app.tape.json            # reviewable JSON
  tapedeck import app.tape.json tapes/app.tape --force      # and back, byte for byte
  tapedeck import recordings/ tapes/app.tape                # a directory of JSON recordings
  tapedeck import session.har tapes/app.tape                # Polly.js / Playwright / devtools
  tapedeck import cassettes/test_chat.yaml tapes/chat.tape  # VCR.py / pytest-recording
  tapedeck export tapes/app.tape --har > app.har            # open in devtools or routeFromHAR
  tapedeck key request.json                                 # what a request is keyed by
`;

/** Writes text to stdout, resolving when stdout can take more (or has closed: a reader that stopped). */
function toStdout(text: string): Promise<void> {
  return new Promise((done) => {
    if (process.stdout.write(text)) return done();
    const go = () => {
      process.stdout.off('drain', go);
      process.stdout.off('close', go);
      done();
    };
    process.stdout.on('drain', go);
    process.stdout.on('close', go);
  });
}

function readInput(file: string | undefined): Buffer {
  if (file === undefined || file === '-') return readFileSync(0);
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
    throw new TapedeckError('E_FILE', `${file} is a directory; this command reads a JSON file (or stdin).`, { file, hint: 'Give a file, or - for stdin.' });
  }
  return readFileSync(file);
}

/** A tape argument: present, and not a directory (which would fail deep in a read). */
function tapeArg(command: string, file: string | undefined, example: string): string {
  if (!file) throw usageError(`${command} needs a tape.`, example);
  if (statSync(file, { throwIfNoEntry: false })?.isDirectory()) {
    throw new TapedeckError('E_FILE', `${file} is a directory; ${command} reads a tape file.`, { file, hint: example });
  }
  return file;
}

/** JSON text parsed, or E_JSON with the byte offset where it breaks (the core's own reader). */
function parseJSON(bytes: Buffer): unknown {
  canonicalizeJSON(bytes); // throws E_JSON / E_UTF8 / E_DUPLICATE_KEY with the offset
  return JSON.parse(bytes.toString('utf8'));
}

/** The first user message of a recorded request, as one short line. */
function firstUserText(request: unknown): string {
  if (request === undefined) return '-';
  try {
    const m = normalizeRequest(request).messages.find((x) => (x as { role?: unknown }).role === 'user') as { content?: unknown } | undefined;
    const parts = Array.isArray(m?.content) ? (m.content as { type?: string; text?: string }[]) : [];
    const text = parts.filter((p) => p.type === 'text').map((p) => p.text).join(' ');
    const line = text.replace(/\s+/g, ' ').trim();
    return line.length > 60 ? `${line.slice(0, 59)}…` : line || '-';
  } catch {
    return '-';
  }
}

/**
 * The request a record was made for: ReplayCache records hold it as `request`; the HTTP exchange
 * records of createFetch and serve (src/proxy/record.ts) hold the parsed JSON body as
 * `request.body`, next to the method and URL.
 */
function recordedRequest(v: { kind?: unknown; request?: unknown }): { request: unknown; route?: string } {
  if (v.kind === 'http' && v.request !== null && typeof v.request === 'object') {
    const r = v.request as { body?: unknown; method?: unknown; url?: unknown };
    const route = typeof r.method === 'string' && typeof r.url === 'string' ? `${r.method} ${r.url}` : undefined;
    return { request: r.body !== null && typeof r.body === 'object' && !ArrayBuffer.isView(r.body) ? r.body : undefined, route };
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
    // Lines are written ~64 KB at a time: a write per line is a system call per record.
    let out = '#\toffset\tbytes\tkey\tstatus\tstream\tsignature\tmodel\tfirst user message\n';
    const realtime: unknown[] = [];
    let i = 0;
    for await (const r of decodedRecords(t, file!)) {
      if (isRealtimeRecord(r.value)) realtime.push(r.value);
      out += inspectLine(r, i++);
      if (out.length >= 1 << 16) {
        process.stdout.write(out);
        out = '';
      }
    }
    for (const line of realtimeSessionLines(realtime)) out += `${line}\n`;
    for (const w of t.warnings) out += `${w.code} at byte ${w.offset}: ${w.message}\n`;
    process.stdout.write(out);
    // Damage is a problem found, as for verify: scripts and CI see it in the exit code.
    return t.warnings.length ? 1 : 0;
  });
}

/** One record's line of `tapedeck inspect`, its newline included. */
function inspectLine(r: { offset: number; length: number; value: unknown }, i: number): string {
  const v = (r.value ?? {}) as { key?: unknown; kind?: unknown; signature?: { toolNames?: unknown[]; messageCount?: unknown }; request?: unknown };
  const key = typeof v.key === 'string' ? v.key.slice(0, 12) : '-';
  const sig = v.signature ? `${v.signature.messageCount ?? '?'} msgs, ${v.signature.toolNames?.length ?? 0} tools` : '-';
  if (v.kind === 'realtime') {
    return `${i}\t${r.offset}\t${r.length}\t${key}\t-\tws\t-\trealtime\t${realtimeLabel(r.value)}\n`;
  }
  if (v.kind === 'mcp') {
    // MCP exchanges: the method and what it names in place of model and first message.
    const req = (v.request ?? {}) as { method?: unknown; params?: unknown };
    const method = typeof req.method === 'string' ? req.method : '?';
    return `${i}\t${r.offset}\t${r.length}\t${key}\t-\t-\t-\tmcp\t${callLabel(method, req.params)}\n`;
  }
  const { request, route } = recordedRequest(v);
  const model = typeof (request as { model?: unknown } | undefined)?.model === 'string' ? (request as { model: string }).model : '-';
  const first = firstUserText(request);
  // An answer recorded byte for byte although it is not what its content type says.
  const http = isHttpRecord(r.value) ? r.value.response : undefined;
  const problem = http ? answerProblem(http) : undefined;
  // The answer's status and framing: a 429 or a stream is told apart at a glance.
  const status = http ? String(http.status) : '-';
  const stream = http ? answerFraming(http) : '-';
  return `${i}\t${r.offset}\t${r.length}\t${key}\t${status}\t${stream}\t${sig}\t${model}\t${first === '-' && route ? route : first}${problem ? ` [answer ${problem}]` : ''}\n`;
}

async function prune(file: string | undefined): Promise<number> {
  tapeArg('prune', file, 'tapedeck prune recordings/app.tape');
  if (!file) return EXIT.usage;
  const before = (await readTape(file)).size;
  const r = await rewriteTape(file, () => true);
  const after = (await readTape(file)).size;
  process.stdout.write(`${file}: kept ${r.kept} record${r.kept === 1 ? '' : 's'}, removed ${before - after} bytes of damage\n`);
  return 0;
}

async function verify(file: string | undefined): Promise<number> {
  tapeArg('verify', file, 'tapedeck verify recordings/app.tape');
  if (!file) return EXIT.usage;
  // Every record is decoded (a payload that does not decode is damage) and let go: the tape is
  // read a window at a time, so memory does not grow with it.
  const t = await withTapeStream(file, async (s) => {
    let records = 0;
    for await (const _ of decodedRecords(s, file)) records++;
    return { header: s.header, size: s.size, warnings: s.warnings, records };
  });
  const n = t.records;
  process.stdout.write(
    `${file}: format ${t.header.formatVersion}, created ${t.header.created}, tapedeck ${t.header.tapedeckVersion}, ` +
      `${n} record${n === 1 ? '' : 's'}, ${t.size} bytes\n`,
  );
  for (const w of t.warnings) process.stdout.write(`${w.code} at byte ${w.offset}: ${w.message}\n`);
  // verify lists no records: say how many are intact, and that prune keeps exactly those.
  const intact = n === 0 ? 'no record is intact' : `the ${n} record${n === 1 ? '' : 's'} counted above ${n === 1 ? 'is' : 'are'} intact`;
  process.stdout.write(t.warnings.length ? `${t.warnings.length} problem(s); ${intact} (tapedeck prune ${file} keeps ${n === 0 ? 'the header' : n === 1 ? 'it' : 'them'} and drops the damage).\n` : n === 0 ? 'ok (no records)\n' : 'ok\n');
  return t.warnings.length ? 1 : 0;
}

function main(argv: string[]): number | Promise<number> {
  // `tapedeck <command> --help` and `tapedeck help <command>`: that command's own help.
  const asked = argv[0] === 'help' ? argv[1] : argv.some((a) => a === '-h' || a === '--help') ? argv[0] : undefined;
  if (asked !== undefined && Object.hasOwn(COMMAND_HELP, asked) && !(asked === 'prune' && argv.some((a) => /^rediss?:\/\//i.test(a)))) {
    process.stdout.write(COMMAND_HELP[asked]!);
    return 0;
  }
  if (argv[0] === 'help' && argv[1] !== undefined && ['serve', 'mcp', 'tree', 'add', 'init', 'push', 'pull', 'diff', 'stats', 'rerecord'].includes(argv[1])) return main([argv[1], '--help']);
  // serve has its own flags (--help included); loaded on demand so other commands stay light.
  // A stopped proxy ends the process even if a handle (a client's keep-alive socket, a store
  // connection) would keep it alive: the port must be free once serve has returned.
  if (argv[0] === 'serve') return import('./proxy/cli.ts').then((m) => m.serveCommand(argv.slice(1))).then((code) => process.exit(code));
  if (argv[0] === 'mcp') return import('./mcp/cli.ts').then((m) => m.mcpCommand(argv.slice(1))).then((code) => process.exit(code));
  if (argv[0] === 'tree') return import('./tree/cli.ts').then((m) => m.treeCommand(argv.slice(1)));
  if (argv[0] === 'add') return import('./proxy/add-cli.ts').then((m) => m.addCommand(argv.slice(1)));
  if (argv[0] === 'scan') return import('./store/scan-cli.ts').then((m) => m.scanCommand(argv.slice(1)));
  if (argv[0] === 'init') return import('./store/git-diff.ts').then((m) => m.initCommand(argv.slice(1)));
  if (argv[0] === 'diff') return import('./drift/cli.ts').then((m) => m.diffCommand(argv.slice(1)));
  if (argv[0] === 'stats') return import('./drift/cli.ts').then((m) => m.statsCommand(argv.slice(1)));
  // rerecord records through createFetch, which the drift layer may not import: wired here.
  if (argv[0] === 'rerecord') {
    return Promise.all([import('./drift/cli.ts'), import('./proxy/fetch.ts')]).then(([m, f]) =>
      m
        .rerecordCommand(argv.slice(1), (tape) => {
          const rec = f.createFetch({ tape, mode: 'record' });
          return { fetch: rec, close: () => rec.close() };
        })
        .then((code) => process.exit(code)),
    );
  }
  if (argv[0] === 'push') return import('./store/redis-cli.ts').then((m) => m.pushCommand(argv.slice(1)));
  if (argv[0] === 'pull') return import('./store/redis-cli.ts').then((m) => m.pullCommand(argv.slice(1)));
  // prune takes a tape or a Redis URL (with Redis options): the URL goes to the Redis command.
  if (argv[0] === 'prune' && argv.slice(1).some((a) => /^rediss?:\/\//i.test(a))) return import('./store/redis-cli.ts').then((m) => m.pruneRedisCommand(argv.slice(1)));
  const args: string[] = [];
  let ignoreKeys: string[] | undefined;
  let force = false;
  let har = false;
  let skipBad = false;
  let from: string | undefined;
  let origin: string | undefined;
  let review = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--ignore') ignoreKeys = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (a === '--har') har = true;
    else if (a === '--skip-bad') skipBad = true;
    else if (a === '--from' || a === '--origin') {
      const v = argv[++i];
      if (v === undefined || v.startsWith('-')) throw usageError(`${a} needs a value.`, a === '--from' ? 'tapedeck import session.har app.tape --from har' : 'tapedeck export app.tape --har --origin https://api.openai.com');
      if (a === '--from') from = v;
      else origin = v;
    } else if (a.startsWith('--from=')) from = a.slice(7);
    else if (a.startsWith('--origin=')) origin = a.slice(9);
    else if (a.startsWith('--ignore=')) ignoreKeys = a.slice(9).split(',').filter(Boolean);
    else if (a === '--force') force = true;
    else if (a === '--json') continue; // export prints JSON; the flag is accepted for clarity
    else if (a === '--review') review = true;
    else if (a === '-h' || a === '--help') args.unshift('help');
    else if (a === '-v' || a === '--version') args.unshift('version');
    else if (a.startsWith('-') && a !== '-') throw usageError(`Unknown option ${a}.`, 'tapedeck --help lists the options.');
    else args.push(a);
  }
  const opts = ignoreKeys ? { ignoreKeys } : undefined;
  const [cmd = 'help', file, second] = args;
  switch (cmd) {
    case 'help':
      process.stdout.write(HELP);
      return 0;
    case 'version':
      process.stdout.write(`tapedeck ${VERSION} (backend: ${backend()}, node ${process.versions.node})\n`);
      return 0;
    case 'canonical':
      process.stdout.write(canonicalizeJSON(readInput(file), opts));
      process.stdout.write('\n');
      return 0;
    case 'hash':
      process.stdout.write(`${hashJSON(readInput(file), opts)}\n`);
      return 0;
    case 'paths': {
      const input = readInput(file);
      const first = input.toString('utf8').trimStart()[0];
      const messages = first === '{' ? (parseJSON(input) as { messages?: unknown[] }).messages ?? [] : input;
      const r = pathHashes(messages, opts);
      r.messageHashes.forEach((m, i) => process.stdout.write(`${i}\t${m}\t${r.pathHashes[i]}\n`));
      process.stdout.write(`digest\t${r.digest}\n`);
      return 0;
    }
    case 'verify':
      return verify(file);
    case 'inspect':
      return inspect(file);
    case 'prune':
      return prune(file);
    case 'export':
      tapeArg('export', file, 'tapedeck export recordings/app.tape > app.tape.json');
      if (har) {
        return exportTapeHar(file!, origin === undefined ? {} : { origin }).then(({ text, skipped }) => {
          process.stdout.write(text);
          if (skipped) warn(`${skipped} record${skipped === 1 ? ' is' : 's are'} not HTTP exchanges (ReplayCache values, MCP sessions) and have no HAR form; left out.`);
          return 0;
        });
      }
      if (origin !== undefined) throw usageError('--origin goes with --har.', 'tapedeck export app.tape --har --origin https://api.openai.com');
      // Written as it is made (a large tape's JSON is never held whole), at the pace stdout takes it.
      return writeTapeJSON(file!, toStdout, { review }).then(() => 0);
    case 'import':
      if (!file || !second) throw usageError('import needs the input and the tape to write.', 'tapedeck import app.tape.json recordings/app.tape');
      if (from !== undefined && !(IMPORT_FORMATS as readonly string[]).includes(from)) throw usageError(`Unknown --from ${JSON.stringify(from)}.`, `--from ${IMPORT_FORMATS.join('|')}`);
      if (from !== undefined || recordingFormat(file) !== undefined) {
        return importRecordings(file, second, { from: from as ImportFormat | undefined, force, skipBad, ...(ignoreKeys ? { ignoreArgs: ignoreKeys } : {}), onWarning: warn }).then((report) => {
          process.stdout.write(importSummary(second, report));
          return 0;
        });
      }
      if (skipBad) throw usageError('--skip-bad goes with a HAR, VCR.py, nock or fixtures import.', 'tapedeck import session.har app.tape --skip-bad');
      return importAny(file, second, force, ignoreKeys).then(({ records, skipped, from }) => {
        process.stdout.write(`wrote ${second}: ${records} record${records === 1 ? '' : 's'} from ${from}${skipped ? ` (${skipped} skipped, see warnings)` : ''}\n`);
        return 0;
      });
    case 'key': {
      const k = requestKeys(readInput(file), ignoreKeys ? { ignoreArgs: ignoreKeys } : {});
      process.stdout.write(`provider\t${k.provider}\nkey\t${k.key}\n`);
      process.stdout.write(`signature\t${JSON.stringify(k.signature)}\t${k.signatureDigest}\n`);
      k.messageHashes.forEach((m, i) => process.stdout.write(`${i}\t${m}\t${k.pathHashes[i]}\n`));
      return 0;
    }
    default:
      throw usageError(`Unknown command ${JSON.stringify(cmd)}.`, 'tapedeck --help lists the commands.');
  }
}

/** The recording format of an import source (HAR, VCR.py, nock, fixtures), or undefined for the others. */
function recordingFormat(src: string): ImportFormat | undefined {
  if (src === '-' || statSync(src, { throwIfNoEntry: false })?.isFile() !== true) return undefined;
  // By name without reading the file (a large HAR is not read here as a whole string first).
  return formatByName(src) ?? detectFormat(src, readFileSync(src, 'utf8'))?.format;
}

/** What an import of recordings made, as the lines the command prints. */
function importSummary(out: string, r: ImportReport): string {
  const n = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`;
  const lines = [`wrote ${out}: ${n(r.records, 'record')} from a ${r.format} (${n(r.streams, 'stream')}; ${n(r.masked, 'secret')} masked)`];
  for (const x of r.routes) lines.push(`  ${String(x.records).padStart(5)}  ${x.provider}  ${x.route}`);
  if (r.skipped.length) {
    lines.push(`skipped ${n(r.skipped.length, 'entry', 'entries')}:`);
    for (const s of r.skipped) lines.push(`  ${s.where}: ${s.reason.replace(/\s+/g, ' ')}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A problem that does not stop the command (a skipped entry), as one line. */
const warn = (message: string) => process.stderr.write(`tapedeck: warning: ${message.replace(/\s+/g, ' ').trim()}\n`);

/**
 * `tapedeck import` takes three inputs and tells them apart by shape: a directory of JSON
 * recordings (one request/response per file), a DSPy-style cache.json (an object with an
 * `entries` object), or a tapedeck JSON export (an object with `header` and `records`). Anything
 * else is refused before a tape is written.
 */
async function importAny(src: string, out: string, force: boolean, ignoredArgs: string[] | undefined): Promise<{ records: number; skipped: number; from: string }> {
  const formats = 'tapedeck import takes a tapedeck JSON export (tapedeck export writes one), a DSPy-style cache.json, or a directory of JSON recordings.';
  if (src !== '-' && statSync(src, { throwIfNoEntry: false })?.isDirectory()) {
    if (!readdirSync(src).some((n) => n.endsWith('.json'))) {
      throw new TapedeckError('E_IMPORT_FORMAT', `${src} holds no *.json recordings; no tape written.`, { file: src, hint: formats });
    }
    return { ...(await importRecordingsDir(src, out, { force, ignoredArgs, onWarning: warn })), from: 'a directory of JSON recordings' };
  }
  const bytes = readInput(src);
  // The arguments swapped (a tape first), or another binary file: say so, not a JSON error
  // that quotes binary bytes.
  const name = src === '-' ? 'stdin' : src;
  if (bytes.length >= TAPE_MAGIC.length && TAPE_MAGIC.every((b, i) => bytes[i] === b)) {
    throw new TapedeckError('E_IMPORT_FORMAT', `${name} is a tape, not JSON: import reads JSON and writes the tape given second; no tape written.`, {
      file: src,
      hint: `tapedeck import <input.json> <out.tape> (input first); to turn this tape into JSON: tapedeck export ${src === '-' ? '<tape>' : src} > tape.json`,
    });
  }
  if (bytes.subarray(0, 4096).includes(0) || !isUtf8(bytes)) {
    throw new TapedeckError('E_IMPORT_FORMAT', `${name} is binary data, not JSON text; no tape written.`, { file: src, hint: formats });
  }
  const parsed = parseJSON(bytes);
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObject(parsed) && isObject(parsed.entries) && !('records' in parsed)) {
    return { ...(await importCacheJSON(src, out, { force, ignoredArgs, onWarning: warn })), from: 'a DSPy-style cache.json' };
  }
  if (isObject(parsed) && isObject(parsed.header) && Array.isArray(parsed.records)) {
    const { records } = await importTapeJSON(bytes.toString('utf8'), out, { force });
    return { records, skipped: 0, from: 'a tapedeck JSON export' };
  }
  const found = Array.isArray(parsed) ? 'an array' : isObject(parsed) ? `an object with ${Object.keys(parsed).length ? `keys ${Object.keys(parsed).slice(0, 5).join(', ')}` : 'no keys'}` : `a ${typeof parsed}`;
  throw new TapedeckError('E_IMPORT_FORMAT', `${src === '-' ? 'stdin' : src} is none of the formats import reads: found ${found}; no tape written.`, { file: src, hint: formats });
}

// `tapedeck … | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(EXIT.ok);
  process.exitCode = reportCliError(e);
});

const argv = process.argv.slice(2);
// Past `--` the words are another program's (tapedeck mcp's server command): left alone.
const dashes = argv.indexOf('--') < 0 ? argv.length : argv.indexOf('--');
setDebug(argv.slice(0, dashes).includes('--debug'));
const fail = (e: unknown) => {
  process.exitCode = reportCliError(e);
};

try {
  const code = main([...argv.slice(0, dashes).filter((a) => a !== '--debug'), ...argv.slice(dashes)]);
  if (typeof code === 'number') process.exitCode = code;
  else code.then((c) => (process.exitCode = c), fail);
} catch (e) {
  fail(e);
}
