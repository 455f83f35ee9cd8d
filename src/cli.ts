#!/usr/bin/env node
// The tapedeck command: help, the options, and each command's module loaded when it runs (a
// command starts with only what it uses: `tapedeck export` of a small tape, which git runs on
// both sides of every diff, is mostly the process's start).

import { lstatSync } from 'node:fs';
import { dashPath, splitAtDashes, unspellableArgument } from './cli-args.ts';
import { exitCodesHelp, reportCliError, setDebug, usageError } from './cli-errors.ts';
import { checkUsage, exampleWith } from './cli-usage.ts';
import { COMMAND_HELP } from './cli-help.ts';
import { exitCode, watchStdout, writeOut } from './cli/stdout.ts';
import { npmExecDirectory } from './cli/npm-exec-dir.ts';
import { DRIFT_COMMANDS } from './drift/help.ts';
import { isMistypedRedisUrl, isRedisUrl, maskRedisUrl, passwordNote, typedRedisUrl } from './store/backends/redis-connection.ts';
import { TapedeckError } from './errors.ts';
import { VERSION } from './version.ts';

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
  verify <tapes...>     Check tape files (a folder: every tape under it): header, every
                        record's frame and checksum; report torn tails and damaged
                        records with their byte offsets
  verify <redis-url> [--namespace NS]
                        The same for a Redis namespace: records that do not read, by
                        their Redis hash and field (docs/redis.md)
  inspect <tape>        List the records: offset, size, key, status, stream, signature,
                        model, the first user message and the host (origin)
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
                        routeFromHAR; docs/migrate.md)
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
  init                  Make git diff show tapes as their JSON export and git merge
                        combine their recordings (.gitattributes and git config;
                        docs/tape-format.md)
  merge <base> <ours> <theirs>
                        Git's merge driver for tapes: both branches' recordings in
                        <ours>; exit 1 leaves the conflict (different salts, damage)
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
  --from <format>       import: har | vcr | nock | fixtures | talkback (default:
                        detected)
  --skip-bad            import: keep the good entries of a file with malformed ones
  --debug               Print the stack trace with an error
  -h, --help            Show this help; tapedeck <command> --help (or tapedeck help
                        <command>) shows that command's help
  -v, --version         Print the version
  --                    End of the options: the words after it are arguments, even
                        one that starts with a dash (tapedeck verify -- -old.tape)

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
${exitCodesHelp()}

Errors are one line, \`tapedeck: E_CODE message\`, and a hint; --debug adds the stack trace.

Examples:
  tapedeck serve --upstream https://api.openai.com --tape tapes/app.tape --mode record
  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 npm test        # the client talks to the proxy
  tapedeck inspect tapes/app.tape | head                    # model, first message, host per record
  tapedeck export tapes/app.tape > app.tape.json            # reviewable JSON
  tapedeck import app.tape.json tapes/app.tape --force      # and back, byte for byte
  tapedeck import recordings/ tapes/app.tape                # a directory of JSON recordings
  tapedeck import session.har tapes/app.tape                # Polly.js / Playwright / devtools
  tapedeck import cassettes/test_chat.yaml tapes/chat.tape  # VCR.py / pytest-recording
  tapedeck export tapes/app.tape --har > app.har            # open in devtools or routeFromHAR
  tapedeck key request.json                                 # what a request is keyed by
`;

/** Commands that read a tape file only (push, pull, verify and prune also take a Redis URL). */
const TAPE_ONLY = ['inspect', 'export', 'tree', 'rerecord', 'stats', 'diff', 'scan', 'merge'];
/**
 * Commands that write a tape file only: given a Redis URL, import wrote a local file named after
 * it (`./redis:/host:port/0?namespace=...`) and said it wrote the store. (`add` writes through
 * the recording engine, which takes a store URL: it adds to the namespace.)
 */
const WRITES_TAPE = ['import'];

/**
 * E_ARG for a Redis URL given to a command that reads or writes a tape file: how to get one, or
 * get it into the store, with the namespace the user gave (`?namespace=` or `--namespace`).
 */
function tapeOnly(cmd: string, url: string, argv: readonly string[]): TapedeckError {
  const masked = maskRedisUrl(url);
  // The store as the command to run takes it: `<password>` where the password goes, said so.
  const store = typedRedisUrl(masked.replace(/\?.*$/, ''));
  let ns: string | null | undefined;
  try {
    ns = new URL(url).searchParams.get('namespace');
  } catch {
    ns = undefined;
  }
  const flag = argv.findIndex((a) => a === '--namespace' || a.startsWith('--namespace='));
  ns ??= flag < 0 ? undefined : argv[flag]!.includes('=') ? argv[flag]!.slice(12) : argv[flag + 1];
  const namespace = ns ? ` --namespace ${ns}` : '';
  return new TapedeckError('E_ARG', `tapedeck ${cmd} takes a tape file, not a Redis store (${masked}).`, {
    hint: WRITES_TAPE.includes(cmd)
      ? `Write a tape file, then copy it into the store: tapedeck ${cmd} ... file.tape, then tapedeck push file.tape '${store}'${namespace}${passwordNote(store)}.`
      : `For a Redis store run tapedeck pull '${store}' file.tape${namespace} first, then tapedeck ${cmd} file.tape${passwordNote(store)}.`,
  });
}

/** Whether a path names anything on disk (a link that leads nowhere too). */
function onDisk(p: string): boolean {
  try {
    return lstatSync(p, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/**
 * Refuses (E_FILE) a path argument Node.js could not decode: it holds U+FFFD where the name had
 * bytes that are not UTF-8, and names no file, so reading by it says "not found" of a file that
 * exists and writing by it makes a file under another name than the one printed. The words after
 * `mcp ... --` are the server's command line, not tapedeck's paths.
 */
function refuseUnspellable(argv: readonly string[]): void {
  const words = argv[0] === 'mcp' ? splitAtDashes(argv).before : argv;
  const word = unspellableArgument(words, onDisk);
  if (word === undefined) return;
  // The shell's `?` matches the byte Node.js could not decode: the command that renames it.
  const glob = word.replaceAll('\uFFFD', '?');
  const [from, to] = /^[\w./?+-]+$/.test(glob) ? [glob, word.replaceAll('\uFFFD', '_')] : ['<file>', '<utf-8 name>'];
  throw new TapedeckError('E_FILE', `The path ${JSON.stringify(word)} is not valid UTF-8: Node.js reads it with U+FFFD (\uFFFD) in place of the bytes it cannot decode, so tapedeck cannot name that file to read or write it.`, {
    file: word,
    hint: `Rename the file to a UTF-8 name (mv ${from} ${to}) and give that; a file to write needs a UTF-8 name too.`,
  });
}

/**
 * An import error whose hint says "give the format with --from", with the formats --from takes;
 * when --from was given, that it may be the wrong one and that leaving it out detects the format.
 */
function withFormats(e: unknown, from: string | undefined, formats: readonly string[]): unknown {
  const ask = 'give the format with --from.';
  if (!(e instanceof TapedeckError) || typeof e.details.hint !== 'string' || !e.details.hint.endsWith(ask)) return e;
  const hint = e.details.hint;
  const message = e.message.endsWith(hint) ? e.message.slice(0, -hint.length).trim() : e.message;
  const given = from === undefined ? '' : ` (--from ${from} read it as ${from}; without --from the format is detected)`;
  return new TapedeckError(e.code, message, { ...e.details, hint: `${hint.slice(0, -ask.length)}give the format it is in with --from ${formats.join('|')}${given}.` });
}

function main(argv: string[]): number | Promise<number> {
  // `tapedeck <command> --help` and `tapedeck help <command>`: that command's own help.
  // A path that Node.js could not decode is refused before any command reads or writes by it.
  refuseUnspellable(argv);
  // `tapedeck help -- export`: help takes no option, so `--` only ends them.
  if (argv[0] === 'help' && argv.includes('--')) {
    const at = argv.indexOf('--');
    argv = argv.filter((_, i) => i !== at);
  }
  // Past `--` a word is an argument, `-h` too (a file of that name).
  const options = splitAtDashes(argv).before;
  const asked = argv[0] === 'help' ? argv[1] : options.some((a) => a === '-h' || a === '--help') ? argv[0] : undefined;
  if (asked !== undefined && Object.hasOwn(COMMAND_HELP, asked) && !((asked === 'prune' || asked === 'verify') && argv.some(isRedisUrl))) {
    process.stdout.write(COMMAND_HELP[asked]!);
    return 0;
  }
  const ownHelp = ['serve', 'mcp', 'tree', 'add', 'init', 'push', 'pull', 'diff', 'stats', 'rerecord'];
  // A file whose name starts with a dash, for every command (the name as given, and how to give it).
  const dashed = argv[0] === 'help' ? undefined : dashPath(argv, onDisk);
  if (dashed !== undefined) {
    const cmd = argv[0] === dashed ? '<command>' : argv[0];
    throw usageError(`Unknown option ${dashed}.`, `A file whose name starts with a dash is given as ./${dashed}, or after -- (which ends the options): tapedeck ${cmd} -- ${dashed}.`);
  }
  if (argv[0] === 'help' && argv[1] !== undefined && ownHelp.includes(argv[1])) return main([argv[1], '--help']);
  // A topic that is no command is an error, not the general help with exit 0 (a script asking
  // for `help realtime` would read that as an answer).
  if (argv[0] === 'help' && argv[1] !== undefined) {
    const features: Record<string, string> = { realtime: 'serve', chaos: 'serve', proxy: 'serve', redis: 'serve', har: 'import', vcr: 'import', nock: 'import' };
    const near = features[argv[1].toLowerCase()];
    throw usageError(
      `There is no command ${JSON.stringify(argv[1])} to show help for.`,
      `${near ? `that is part of tapedeck ${near}: tapedeck help ${near}; ` : ''}tapedeck help <command>, the command one of: ${[...new Set([...Object.keys(COMMAND_HELP), ...ownHelp])].sort().join(', ')}`,
    );
  }
  // serve has its own flags (--help included); loaded on demand so other commands stay light.
  // A stopped proxy ends the process even if a handle (a client's keep-alive socket, a store
  // connection) would keep it alive: the port must be free once serve has returned.
  // These read a tape file; a Redis URL was taken for a missing path (E_TAPE_NOT_FOUND, E_FILE).
  const url = TAPE_ONLY.includes(argv[0] ?? '') || WRITES_TAPE.includes(argv[0] ?? '') ? argv.slice(1).find(isRedisUrl) : undefined;
  if (url !== undefined) throw tapeOnly(argv[0]!, url, argv);
  if (argv[0] === 'serve') return import('./proxy/cli.ts').then((m) => m.serveCommand(argv.slice(1))).then((code) => process.exit(exitCode(code)));
  if (argv[0] === 'mcp') return import('./mcp/cli.ts').then((m) => m.mcpCommand(argv.slice(1))).then((code) => process.exit(exitCode(code)));
  if (argv[0] === 'tree') return import('./tree/cli.ts').then((m) => m.treeCommand(argv.slice(1), { utf8: writeOut }));
  if (argv[0] === 'add') return import('./proxy/add-cli.ts').then((m) => m.addCommand(argv.slice(1)));
  if (argv[0] === 'scan') return import('./store/scan-cli.ts').then((m) => m.scanCommand(argv.slice(1)));
  if (argv[0] === 'init') return import('./store/git-diff.ts').then((m) => m.initCommand(argv.slice(1)));
  if (argv[0] === 'merge') return import('./cli/merge.ts').then((m) => m.mergeCommand(argv.slice(1)));
  if (argv[0] === 'diff') return import('./drift/cli.ts').then((m) => m.diffCommand(argv.slice(1)));
  if (argv[0] === 'stats') return import('./drift/cli.ts').then((m) => m.statsCommand(argv.slice(1)));
  // rerecord records through createFetch, which the drift layer may not import: wired here.
  if (argv[0] === 'rerecord') {
    return Promise.all([import('./drift/cli.ts'), import('./proxy/fetch.ts'), import('./proxy/aws-resign.ts'), import('./proxy/sigv4.ts')]).then(([m, f, aws, sigv4]) =>
      m
        .rerecordCommand(
          argv.slice(1),
          (tape) => {
            const rec = f.createFetch({ tape, mode: 'record' });
            // Under a prefix, recorded as the proxy recorded it: the request path after the prefix.
            return { fetch: (url, init, upstreamPath) => (upstreamPath ? f.fetchUnder(rec, url, init, upstreamPath) : rec(url, init)), close: () => rec.close() };
          },
          process.env,
          // Bedrock recordings are signed again with the AWS credentials tapedeck serve re-signs with.
          (env) => {
            const creds = aws.awsCredentialsFromEnv(env);
            return creds && ((req, scope) => sigv4.signSigV4(req, creds, scope));
          },
        )
        .then((code) => process.exit(exitCode(code))),
    );
  }
  if (argv[0] === 'push') return import('./store/redis-cli.ts').then((m) => m.pushCommand(argv.slice(1)));
  if (argv[0] === 'pull') return import('./store/redis-cli.ts').then((m) => m.pullCommand(argv.slice(1)));
  // prune takes a tape or a Redis URL (with Redis options): the URL goes to the Redis command,
  // and so does a mistyped one (`redis:/host`), which it tells how to write.
  const aboutRedis = (a: string) => isRedisUrl(a) || isMistypedRedisUrl(a);
  if (argv[0] === 'prune' && argv.slice(1).some(aboutRedis)) return import('./store/redis-cli.ts').then((m) => m.pruneRedisCommand(argv.slice(1)));
  // verify too: a namespace is checked by its own command (what replay errors on Redis name).
  if (argv[0] === 'verify' && argv.slice(1).some(aboutRedis)) return import('./store/redis-cli.ts').then((m) => m.verifyRedisCommand(argv.slice(1)));
  const args: string[] = [];
  /** The options given, as their names (`--ignore` for `--ignore=a,b`), checked once the command is known. */
  const given: string[] = [];
  let ignoreKeys: string[] | undefined;
  let route: string | undefined;
  let force = false;
  let har = false;
  let skipBad = false;
  let from: string | undefined;
  let origin: string | undefined;
  /** import's --redact-header / --redact-field / --redact-query, as serve spells them (repeatable). */
  const redact: { headers?: string[]; fields?: string[]; query?: string[] } = {};
  let review = false;
  let textconv = false;
  let helpOrVersion = false;
  /** Past `--`: every word is an argument (`tapedeck verify -- -weird.tape`). */
  let optionsEnded = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (optionsEnded) {
      args.push(a);
      continue;
    }
    if (a === '--') {
      optionsEnded = true;
      continue;
    }
    if (a.startsWith('-') && a !== '-') given.push(a.replace(/=.*$/s, ''));
    if (a === '--ignore' || a.startsWith('--ignore=')) {
      // As for --from: a value never starts with a dash, so `--ignore --force` is a missing
      // value, not a key named "--force" (which left the command without its --force).
      const v = a === '--ignore' ? argv[++i] : a.slice(9);
      ignoreKeys = (v ?? '').split(',').filter(Boolean);
      if (v === undefined || v.startsWith('-') || ignoreKeys.length === 0) {
        // The hint is the command typed (before or after the option: the first word that is no option).
        const cmd = args[0] ?? argv.slice(i + 1).find((w) => !w.startsWith('-'));
        throw usageError('--ignore needs a value.', exampleWith(cmd, cmd === 'import' ? '--ignore user,metadata' : '--ignore id,created') ?? 'tapedeck hash request.json --ignore id,created');
      }
    } else if (a === '--route' || a.startsWith('--route=')) {
      route = a === '--route' ? argv[++i] : a.slice(8);
      if (route === undefined || route === '') throw usageError('--route needs a value.', "tapedeck key body.json --route 'POST /v1beta/models/gemini-2.5-flash:generateContent'");
    } else if (/^--redact-(?:header|field|query)(?:=|$)/.test(a)) {
      const flag = a.replace(/=.*$/s, '');
      const v = a === flag ? argv[++i] : a.slice(flag.length + 1);
      if (v === undefined || v === '' || v.startsWith('-')) throw usageError(`${flag} needs a value.`, `tapedeck import session.har app.tape ${flag} ${flag === '--redact-header' ? 'x-acme-signature' : flag === '--redact-field' ? 'ssn' : 'sig'} (repeat the flag for more names)`);
      (redact[flag === '--redact-header' ? 'headers' : flag === '--redact-field' ? 'fields' : 'query'] ??= []).push(v);
    } else if (a === '--har') har = true;
    else if (a === '--skip-bad') skipBad = true;
    else if (a === '--from' || a === '--origin') {
      const v = argv[++i];
      if (v === undefined || v.startsWith('-')) throw usageError(`${a} needs a value.`, a === '--from' ? 'tapedeck import session.har app.tape --from har' : 'tapedeck export app.tape --har --origin https://api.openai.com');
      if (a === '--from') from = v;
      else origin = v;
    } else if (a.startsWith('--from=')) from = a.slice(7);
    else if (a.startsWith('--origin=')) origin = a.slice(9);
    else if (a === '--force') force = true;
    else if (a === '--json') continue; // export prints JSON; the flag is accepted for clarity
    else if (a === '--review') review = true;
    else if (a === '--textconv') textconv = true;
    else if (a === '-h' || a === '--help') {
      args.unshift('help');
      helpOrVersion = true;
    } else if (a === '-v' || a === '--version') {
      args.unshift('version');
      helpOrVersion = true;
    } else if (!a.startsWith('-') || a === '-') args.push(a);
  }
  const [cmd = 'help', file, second] = args;
  checkUsage(cmd, args, given, helpOrVersion, { har, review });
  // import writes its second argument: a third word (a glob that matched two files, an option
  // without its dashes) is refused rather than dropped, lest the wrong file become the tape.
  if (cmd === 'import' && args.length > 3) {
    throw usageError(`import takes the input and the tape; ${JSON.stringify(args[3])} is one argument too many.`, 'tapedeck import session.har app.tape (one input a run: tapedeck import a.har a.tape && tapedeck import b.har b.tape)');
  }
  switch (cmd) {
    case 'help':
      process.stdout.write(HELP);
      return 0;
    case 'version':
      return import('./core/index.ts').then(({ backend }) => {
        process.stdout.write(`tapedeck ${VERSION} (backend: ${backend()}, node ${process.versions.node})\n`);
        return 0;
      });
    case 'canonical':
    case 'hash':
    case 'paths':
    case 'key':
      return import('./cli/core.ts').then((m) => m.coreCommand(cmd, file, ignoreKeys, route));
    case 'export':
      // Straight to its module: git runs `export --textconv` twice per changed tape, and the other
      // tape commands' modules (providers, MCP, realtime) are most of a start it does not need.
      return import('./cli/export.ts').then((m) => m.exportCommand(file, { har, review, textconv, ...(origin !== undefined ? { origin } : {}) }));
    case 'verify':
    case 'inspect':
    case 'prune':
    case 'import':
      return import('./cli/tape.ts').then((m) =>
        m.tapeCommand(cmd, file, second, { ...(cmd === 'verify' && args.length > 2 ? { more: args.slice(2) } : {}), ...(ignoreKeys ? { ignoreKeys } : {}), force, har, skipBad, review, textconv, ...(from !== undefined ? { from } : {}), ...(origin !== undefined ? { origin } : {}), ...(Object.keys(redact).length > 0 ? { redact } : {}) }).catch(async (e: unknown) => {
          throw cmd === 'import' ? withFormats(e, from, (await import('./store/import/read.ts')).IMPORT_FORMATS) : e;
        }),
      );
    default:
      // checkUsage has refused every other word.
      throw usageError(`Unknown command ${JSON.stringify(cmd)}.`, 'tapedeck --help lists the commands.');
  }
}

// npx in a workspace package's sub-folder: paths are the user's, relative to where they typed
// the command (src/cli/npm-exec-dir.ts). A folder that cannot be entered leaves things as npm set them.
const typedIn = npmExecDirectory(process.env, process.cwd());
if (typedIn !== undefined) {
  try {
    process.chdir(typedIn);
  } catch {
    // Removed or not enterable since: the command runs where npm started it.
  }
}

const argv = process.argv.slice(2);
// `tapedeck … | head` closes the pipe early: that is the reader's choice, not an error (the exit
// code stays the command's verdict: scan's findings, verify's damage). Output that cannot be
// written (a full disk) is E_OUTPUT and a failure whatever the command returns: exit 1, or 2
// for diff, stats and rerecord, whose 1 means "answers changed".
watchStdout(['diff', 'stats', 'rerecord'].includes(argv[0] ?? '') ? 2 : 1);
// Past `--` the words are another program's (tapedeck mcp's server command): left alone.
const dashes = argv.indexOf('--') < 0 ? argv.length : argv.indexOf('--');
setDebug(argv.slice(0, dashes).includes('--debug'));
const fail = (e: unknown) => {
  process.exitCode = exitCode(reportCliError(e));
};

try {
  const code = main([...argv.slice(0, dashes).filter((a) => a !== '--debug'), ...argv.slice(dashes)]);
  if (typeof code === 'number') process.exitCode = exitCode(code);
  else code.then((c) => (process.exitCode = exitCode(c)), fail);
} catch (e) {
  fail(e);
}
