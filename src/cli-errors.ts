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
  /** The input was bad (invalid JSON, a damaged or missing tape, a file of the wrong kind), verify/tree found problems, or stdout could not be written (E_OUTPUT). */
  failed: 1,
  /** Usage: an unknown command, option or value (a bad --chaos SPEC too), an argument missing or one too many. */
  usage: 2,
  /** serve: a second SIGINT/SIGTERM stopped it without waiting for in-flight requests. */
  interrupted: 130,
} as const;

// E_CHAOS_SPEC: a bad --chaos SPEC (serve, mcp) is a bad value on the command line like any other
// (the x-tapedeck-chaos header's E_CHAOS_SPEC is an HTTP 400 answer, never an exit code).
const USAGE_CODES = new Set(['E_USAGE', 'E_ARG', 'E_MODE', 'E_CHAOS_SPEC']);

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
  E_LISTEN: 'Stop what listens there, or give another port with --port (--port 0 takes any free one), or another address with --host.',
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

/** A library hint that names an API call or an options object is no help on a command line. */
const API_HINT = /\w\(\)|\{\s*\w+\s*:|\bimport[A-Z]\w*\b|\bexport[A-Z]\w*\b/;

/** Node's file system errors as TapedeckErrors with the path and what to do. */
function fromErrno(e: NodeJS.ErrnoException): TapedeckError | undefined {
  const path = e.path ?? '';
  switch (e.code) {
    case 'ENOENT':
      return new TapedeckError('E_FILE', `No such file or directory: ${path}.`, { file: path, hint: 'Check the path.' });
    case 'EISDIR':
      return new TapedeckError('E_FILE', `${path || 'The input'} is a directory; this command reads a file.`, {
        file: path,
        hint: 'Give a file; tapedeck import <dir> <tape> reads a directory of JSON recordings.',
      });
    case 'ENOTDIR':
      return new TapedeckError('E_FILE', `A part of ${path} is not a directory.`, { file: path, hint: 'Check the path.' });
    case 'EACCES':
    case 'EPERM':
      return new TapedeckError('E_FILE', `Permission denied: ${path}.`, { file: path, hint: 'Check the file permissions.' });
    default:
      return undefined;
  }
}

/** Any thrown value as a TapedeckError; `E_INTERNAL` for what tapedeck did not expect. */
export function toCliError(e: unknown): TapedeckError {
  if (e instanceof TapedeckError) return e;
  const errno = e instanceof Error ? fromErrno(e as NodeJS.ErrnoException) : undefined;
  if (errno) return errno;
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
  const cliHint = PATH_HINTS.has(err.code) && aboutRedis(err) && libraryHint ? undefined : CLI_HINTS[err.code];
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
