/**
 * How every `tapedeck` command reports a failure: one line `tapedeck: E_CODE message`, then a
 * `hint:` line that names a command or flag (never an API call), and no stack trace unless
 * `--debug` was given. Exit codes are documented in `tapedeck --help` and the README.
 */
import { cliFormsOf } from './cli-help.ts';
import { TapedeckError } from './errors.ts';

/** Exit codes of the `tapedeck` command. */
export const EXIT = {
  /** Done; for verify and tree: no problems found. */
  ok: 0,
  /** The input was bad (invalid JSON, a damaged or missing tape, a file of the wrong kind or too large), verify/tree found problems, a git command outside a git repository, or stdout could not be written (E_OUTPUT). */
  failed: 1,
  /** Usage: an unknown command, option or value (a bad --chaos SPEC too), options that do not go together, an argument missing or one too many. */
  usage: 2,
  /** serve: a second SIGINT/SIGTERM stopped it without waiting for in-flight requests. */
  interrupted: 130,
} as const;

/**
 * The exit codes as `tapedeck --help` prints them and docs/api.md's CLI table states them: one
 * text for both (test/cli/exit-codes.test.ts holds the docs to it), then what the table does not
 * say per code.
 */
export const EXIT_CODE_TABLE: readonly (readonly [code: number, meaning: string])[] = [
  [EXIT.ok, 'done (verify, inspect, tree, scan, export: no problems found)'],
  [
    EXIT.failed,
    'bad input (invalid JSON, a missing, damaged or wrong kind of file, input over its size limit, a path the system refuses), ' +
      'problems found (verify, inspect, tree, scan, export: a damaged tape, a credential), init or scan --staged outside a git repository, ' +
      'or output that could not be written (E_OUTPUT: a full disk)',
  ],
  [EXIT.usage, 'usage: an unknown command or option, a bad option value (--chaos SPEC too), options that do not go together (--chaos in record mode), a missing argument or one too many'],
  [EXIT.interrupted, 'serve stopped by a second SIGINT or SIGTERM without waiting for in-flight requests'],
];

/** What the exit code table leaves to each command, said after it. */
export const EXIT_CODE_NOTES: readonly string[] = [
  'diff, stats and rerecord have their own (docs/drift.md): 0 nothing in --fail-on changed, 1 something did (diff, rerecord), 2 bad input or usage, 3 rerecord stopped by its budget or with calls not recorded.',
  "A reader that stops early (| head) changes no exit code: it is the command's verdict.",
  "Usage errors are E_USAGE for the command line's words (an unknown command or option, an argument missing or one too many) and E_ARG for a value that is wrong (an option's, a Redis URL's), whatever the command; options that do not go together exit 2 too (E_CHAOS_MODE for --chaos in record mode).",
];

/**
 * The exit codes as `tapedeck --help` lists them: the table, then the notes, wrapped to the
 * help's width.
 *
 * @example
 * exitCodesHelp().split('\n')[0] // '  0    done (verify, inspect, tree, scan, export: no problems found)'
 */
export function exitCodesHelp(): string {
  const wrap = (text: string, first: string, rest: string): string => {
    const lines: string[] = [];
    let line = first;
    for (const word of text.split(' ')) {
      if (line.length + word.length + 1 > 88 && line.trim() !== '' && line !== first) {
        lines.push(line);
        line = rest;
      }
      line += line === first || line === rest ? word : ` ${word}`;
    }
    lines.push(line);
    return lines.join('\n');
  };
  return [...EXIT_CODE_TABLE.map(([code, meaning]) => wrap(meaning, `  ${String(code).padEnd(5)}`, ' '.repeat(7))), ...EXIT_CODE_NOTES.map((n) => wrap(n, '  ', '    '))].join('\n');
}

// E_USAGE is said of the command line's words (an unknown command or option, an argument missing
// or one too many), E_ARG of a value that is wrong (an option's, a URL's): both are usage.
// E_CHAOS_SPEC: a bad --chaos SPEC (serve, mcp) is a bad value on the command line like any other
// (the x-tapedeck-chaos header's E_CHAOS_SPEC is an HTTP 400 answer, never an exit code), and
// E_CHAOS_MODE is --chaos with a recording --mode: flags that do not go together, as --tape with
// --store (E_ARG).
const USAGE_CODES = new Set(['E_USAGE', 'E_ARG', 'E_MODE', 'E_CHAOS_SPEC', 'E_CHAOS_MODE']);

let debug = false;

/** `--debug`: print stack traces too. */
export function setDebug(on: boolean): void {
  debug = on;
}

/** A usage error: what is wrong, and the command line that would work. */
export function usageError(message: string, example: string): TapedeckError {
  return new TapedeckError('E_USAGE', message, { hint: example });
}

// Hints the library gives in API terms (createTape(), { force: true }), said as a CLI user acts.
const CLI_HINTS: Record<string, string> = {
  E_TAPE_EXISTS: 'Add --force to replace it, or give another path.',
  E_TAPE_NOT_FOUND: 'Check the path; a tape is created by recording (TAPEDECK_MODE=record, or tapedeck serve --mode record).',
  E_TAPE_IMPORT: 'tapedeck import reads what tapedeck export writes: fix the value at that JSON path, or export the tape again.',
  E_TAPE_TYPE: 'The tape holds a class the program that wrote it registered; export it from that program.',
  E_CHAOS_MODE: 'Inject faults in replay mode (--mode replay), or add --chaos-live to inject them in front of the live API too; faults are never recorded.',
};

/**
 * Codes whose command-line hint speaks of a tape path: an error about a Redis namespace (its
 * `file` a redis:// location) keeps its own hint, which names the URL and --namespace instead.
 */
const PATH_HINTS: ReadonlySet<string> = new Set(['E_TAPE_NOT_FOUND', 'E_TAPE_EXISTS']);
// The pattern of store/backends/redis-connection.ts's isRedisUrl, which this base-layer module may not import.
const aboutRedis = (err: TapedeckError): boolean => typeof err.details.file === 'string' && /^rediss?:\/\//i.test(err.details.file);

/**
 * E_LISTEN's hint fitted to why serve cannot listen, which the library's hint tells by the command
 * line it names: `--host` for an address that is not this machine's or a name that does not
 * resolve (EADDRNOTAVAIL, ENOTFOUND), `--port 0` for a port in use (EADDRINUSE), `--port 8080`
 * for a port below 1024 (EACCES). One hint for all said "Stop what listens there" of an address
 * where nothing can listen.
 */
function listenHint(libraryHint: string | undefined): string | undefined {
  const forms = libraryHint === undefined ? undefined : cliFormsOf(libraryHint);
  if (forms?.includes('--host')) return "Give another address with --host: one of this machine's (ip addr lists them), 127.0.0.1 for this machine only, or 0.0.0.0 for every interface.";
  if (forms?.includes('--port 0')) return 'Stop what listens there, or give another port with --port (--port 0 takes any free one), or another address with --host.';
  if (forms?.includes('--port')) return 'Give a port from 1024 up with --port (--port 8080), or --port 0 for any free one.';
  return undefined;
}

/** The command line's hint for an error, where the library's would not do; undefined keeps the library's. */
function cliHintFor(err: TapedeckError, libraryHint: string | undefined): string | undefined {
  if (PATH_HINTS.has(err.code) && aboutRedis(err) && libraryHint) return undefined;
  // A command's own hint naming its flag (rerecord's "give another --out") says more than "path".
  if (err.code === 'E_TAPE_EXISTS' && libraryHint !== undefined && /--out\b/.test(libraryHint)) return undefined;
  if (err.code === 'E_LISTEN') return listenHint(libraryHint);
  // A tape that cannot be read or written for a reason of its path or disk (too long a name, a
  // link loop): that reason's fix, not "check permissions and free disk space".
  const cause = typeof err.details.cause === 'string' ? err.details.cause : undefined;
  // Only in place of the generic hint: one the library fitted to the tape (a read-only file
  // system: copy the tape elsewhere, or replay it) says more.
  const generic = libraryHint === undefined || libraryHint.startsWith('Check permissions and free disk space');
  if (err.code === 'E_TAPE_IO' && generic && cause !== undefined && Object.hasOwn(PATH_ERRNOS, cause)) return PATH_ERRNOS[cause]!.hint;
  return CLI_HINTS[err.code];
}

/** A library hint that names an API call or an options object is no help on a command line. */
const API_HINT = /\w\(\)|\{\s*\w+\s*:|\bimport[A-Z]\w*\b|\bexport[A-Z]\w*\b/;

/**
 * What the system's errno means for a path the user gave, and the fix: the file-system errors a
 * command line meets because of its paths, disks and limits (not tapedeck's doing, so never
 * "a bug in tapedeck"). `what` takes the path ('' when the system named none).
 */
const PATH_ERRNOS: Readonly<Record<string, { what: (path: string) => string; hint: string }>> = {
  ENOENT: { what: (p) => `No such file or directory: ${p || 'the path'}.`, hint: 'Check the path.' },
  ENOTDIR: { what: (p) => `A part of ${p || 'the path'} is not a directory.`, hint: 'Check the path.' },
  EACCES: { what: (p) => `Permission denied: ${p || 'the path'}.`, hint: 'Check the file permissions.' },
  EPERM: { what: (p) => `Permission denied: ${p || 'the path'}.`, hint: 'Check the file permissions.' },
  ENAMETOOLONG: {
    what: (p) => `The path ${p} is too long for the file system (a name of more than 255 bytes, or a whole path of more than 4096).`,
    hint: 'Give a shorter name: rename the file or a folder on its path, or run from a folder nearer to it.',
  },
  ELOOP: {
    what: (p) => `${p || 'The path'} goes through too many symbolic links (a link that leads back to itself, directly or through others).`,
    hint: 'Check the links on the path (ls -l) and point them at the file itself.',
  },
  EROFS: { what: (p) => `${p || 'The path'} is on a read-only file system.`, hint: 'Give a path on a writable disk, or remount this one read-write.' },
  ENOSPC: { what: (p) => `No space left on the disk of ${p || 'the path'}.`, hint: 'Free space there, or give a path on another disk.' },
  EDQUOT: { what: (p) => `The disk quota is used up where ${p || 'the path'} is.`, hint: 'Free space within the quota, or give a path on another disk.' },
  EFBIG: { what: (p) => `${p || 'The file'} would be larger than the file system allows.`, hint: 'Give a path on a file system that takes larger files.' },
  EMFILE: {
    what: (p) => `Too many open files${p ? ` (opening ${p})` : ''}: the limit of open files of this process is reached.`,
    hint: 'Raise the limit (ulimit -n 4096) and run the command again; if it comes back with a few files, report it with --debug.',
  },
  ENFILE: { what: (p) => `Too many open files on this system${p ? ` (opening ${p})` : ''}.`, hint: 'Close programs that hold many files, then run the command again.' },
  ENXIO: { what: (p) => `${p || 'The path'} is a device, socket or pipe with nothing behind it (no such device or address).`, hint: 'Give a regular file.' },
  ENODEV: { what: (p) => `${p || 'The path'} is a device that cannot be read or written as a file.`, hint: 'Give a regular file.' },
  EBUSY: { what: (p) => `${p || 'The path'} is busy: the system is using it (a mount point, a locked file).`, hint: 'Give another path, or run the command again once it is free.' },
  ETXTBSY: { what: (p) => `${p || 'The file'} is a program being run, which cannot be written.`, hint: 'Give another path.' },
  EEXIST: { what: (p) => `${p || 'The path'} already exists.`, hint: 'Give another path, or move it away first.' },
  EIO: { what: (p) => `The disk or device failed reading or writing ${p || 'the path'} (input/output error).`, hint: 'Check the disk (dmesg shows the error); copy the file to a sound disk and run the command there.' },
};

/** Node's file system errors as TapedeckErrors with the path and what to do. */
function fromErrno(e: NodeJS.ErrnoException): TapedeckError | undefined {
  const path = e.path ?? '';
  if (e.code === 'EISDIR') {
    return new TapedeckError('E_FILE', `${path || 'The input'} is a directory; this command reads a file.`, {
      file: path,
      hint: 'Give a file; tapedeck import <dir> <tape> reads a directory of JSON recordings.',
    });
  }
  const known = e.code === undefined ? undefined : PATH_ERRNOS[e.code];
  if (known === undefined) return undefined;
  return new TapedeckError('E_FILE', known.what(path), { file: path, errno: e.code, hint: known.hint });
}

/**
 * Node's own limits on what one read may hold, met by a file too large to read whole (a string
 * of more than ~512 MiB, a file of more than 2 GiB): the input's size, not a bug.
 */
function fromSizeLimit(e: Error & { code?: unknown }): TapedeckError | undefined {
  if (e.code !== 'ERR_STRING_TOO_LONG' && e.code !== 'ERR_FS_FILE_TOO_LARGE') return undefined;
  return new TapedeckError('E_TOO_LARGE', `A file is too large to read whole: ${e.message.replace(/\.?$/, '.')}`, {
    hint: 'Give a smaller file (split it); a HAR written one entry a line (as Playwright and devtools write it) is imported entry by entry, whatever its size.',
  });
}

/** Any thrown value as a TapedeckError; `E_INTERNAL` for what tapedeck did not expect. */
export function toCliError(e: unknown): TapedeckError {
  if (e instanceof TapedeckError) return e;
  const known = e instanceof Error ? (fromErrno(e as NodeJS.ErrnoException) ?? fromSizeLimit(e)) : undefined;
  if (known) return known;
  const message = e instanceof Error ? e.message : String(e);
  return new TapedeckError('E_INTERNAL', message, { hint: 'This is a bug in tapedeck: run the command again with --debug and report the stack trace.' });
}

/** The exit code for a failure. */
export function exitCodeFor(e: unknown): number {
  return USAGE_CODES.has(toCliError(e).code) ? EXIT.usage : EXIT.failed;
}

/**
 * The text printed for a failure: `tapedeck: E_CODE message`, a hint line, and with `--debug`
 * the stack trace.
 *
 * @example
 * process.stderr.write(formatCliError(new TapedeckError('E_TAPE_EXISTS', 'out.tape exists.')))
 * // tapedeck: E_TAPE_EXISTS out.tape exists.
 * // hint: Add --force to replace it, or give another path.
 */
export function formatCliError(e: unknown): string {
  const err = toCliError(e);
  const libraryHint = typeof err.details.hint === 'string' ? err.details.hint : undefined;
  const cliHint = cliHintFor(err, libraryHint);
  const hint = cliHint ?? (libraryHint && !API_HINT.test(libraryHint) ? libraryHint : libraryHint && cliFormsOf(libraryHint));
  let message = err.message.replace(/\s+/g, ' ').trim();
  // Library messages carry their hint at the end; the hint line says it instead.
  if (libraryHint && message.endsWith(libraryHint)) message = message.slice(0, -libraryHint.length).trim();
  let out = `tapedeck: ${err.code} ${message}\n`;
  if (hint) out += `hint: ${hint}\n`;
  if (debug) out += `${e instanceof Error && e.stack ? e.stack : String(e)}\n`;
  return out;
}

/** Failures already printed: one that travels on (a failed write of stdout) is printed once. */
const reported = new WeakSet<object>();

/** Prints a failure to stderr (once for the same error) and returns its exit code. */
export function reportCliError(e: unknown): number {
  if (typeof e !== 'object' || e === null || !reported.has(e)) process.stderr.write(formatCliError(e));
  if (typeof e === 'object' && e !== null) reported.add(e);
  return exitCodeFor(e);
}

/**
 * A problem that does not stop the command (a skipped entry), as one line on stderr.
 *
 * @example
 * warn('2 records are not HTTP exchanges and have no HAR form; left out.')
 */
export function warn(message: string): void {
  process.stderr.write(`tapedeck: warning: ${message.replace(/\s+/g, ' ').trim()}\n`);
}
