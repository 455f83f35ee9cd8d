// The command line's standard output, and what happens when it cannot be written. A write that
// fails (a full disk, an I/O error on the file stdout is redirected to) is a failure of the
// command: reported once as E_OUTPUT with the system's reason, and the run exits as a failure
// whatever the command returns, so output cut short never looks done. A reader that stopped
// reading (EPIPE: `tapedeck export t.tape | head`) chose to: that is no failure, and the rest of
// the output is dropped, but the command still runs to its end and exits with the code its
// result deserves. Ending at once with 0 (as before) made `tapedeck scan leaky.tape | head -1`
// pass under `set -o pipefail`: the exit code is the verdict of scan, verify, diff and inspect.
import { fstatSync, writeSync } from 'node:fs';
import { EXIT, reportCliError } from '../cli-errors.ts';
import { TapedeckError } from '../errors.ts';

let failure: TapedeckError | undefined;
/** The reader closed the pipe (EPIPE): what is left to write is dropped, the run goes on. */
let readerGone = false;
/** The exit code of a run whose output failed (watchStdout's argument). */
let failedExit: number = EXIT.failed;

/**
 * E_OUTPUT for a failed write to stdout: the system's reason and its errno, and what to do.
 *
 * @example
 * outputError(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })).message
 * // 'The output could not be written: no space left on device (ENOSPC); what was written of it is incomplete. …'
 */
export function outputError(e: NodeJS.ErrnoException): TapedeckError {
  // Node says `ENOSPC: no space left on device, write`: the words between code and syscall.
  const reason = /^E[A-Z0-9]+: (.*?)(?:, \w+)?$/.exec(e.message)?.[1] ?? e.message;
  const full = e.code === 'ENOSPC' || e.code === 'EDQUOT' || e.code === 'EFBIG';
  return new TapedeckError('E_OUTPUT', `The output could not be written: ${reason}${e.code ? ` (${e.code})` : ''}; what was written of it is incomplete.`, {
    errno: e.code,
    hint: full ? 'Free space where the output goes, or send it elsewhere (> another/disk/out.json).' : 'Check the file or device the output goes to, or send it elsewhere (> another/path).',
  });
}

/** The output failure, reported once (the first: later writes fail for the same reason). */
function failed(e: NodeJS.ErrnoException): TapedeckError {
  if (failure === undefined) {
    failure = outputError(e);
    reportCliError(failure);
    process.exitCode = failedExit;
  }
  return failure;
}

/**
 * Listens for stdout's errors for the whole run: call once, at start. EPIPE (the reader is gone)
 * drops the rest of the output and leaves the exit code to the command's result; any other error
 * is E_OUTPUT, reported on stderr, and makes the exit code `exit` (1; 2 for the commands whose 1
 * means something found).
 *
 * @example
 * watchStdout(1);
 * process.stdout.write(text); // to a full disk: `tapedeck: E_OUTPUT …`, exit 1
 */
export function watchStdout(exit: number = EXIT.failed): void {
  failedExit = exit;
  if (stdoutIsFile()) writeWholeToFile();
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    // Node ignores SIGPIPE; the stream is destroyed, and later process.stdout.write calls (the
    // commands that write directly) go nowhere without another error.
    if (e.code === 'EPIPE') readerGone = true;
    else failed(e);
  });
}

/** Whether stdout is a regular file (`> out.txt`), which Node writes with one writeSync per write. */
function stdoutIsFile(): boolean {
  try {
    return fstatSync(1).isFile();
  } catch {
    return false;
  }
}

/**
 * Stdout to a file: Node writes each chunk with one writeSync and takes a short write (a disk
 * that fills up partway) for the whole, so a command that writes its output at once (tree,
 * inspect, diff) left it cut with no error and exit 0. Each write is finished here, its
 * remaining bytes written until the system says why it cannot (ENOSPC): that is E_OUTPUT.
 */
function writeWholeToFile(): void {
  const write = (chunk: string | Uint8Array, encoding?: BufferEncoding | ((e?: Error | null) => void), cb?: (e?: Error | null) => void): boolean => {
    const done = typeof encoding === 'function' ? encoding : cb;
    if (failure === undefined) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8') : chunk;
      try {
        for (let at = 0; at < bytes.length; ) at += writeSync(1, bytes, at, bytes.length - at);
      } catch (e) {
        failed(e as NodeJS.ErrnoException);
      }
    }
    done?.(failure ?? null);
    return true;
  };
  process.stdout.write = write as typeof process.stdout.write;
}

/**
 * The exit code a command's own code becomes: watchStdout's once stdout failed, whatever the
 * command returned (it may not have noticed: a write's error arrives after the write returns).
 *
 * @example
 * process.exitCode = exitCode(await command()); // 1 after `> /dev/full`
 */
export function exitCode(code: number): number {
  return failure === undefined ? code : failedExit;
}

/**
 * Writes text, or its UTF-8 bytes, to stdout; resolves when stdout can take more (at once while
 * its buffer has room, else on 'drain': a slow reader holds the writer back), rejects with the
 * E_OUTPUT error once the output cannot be written, so a long export stops soon after a failed
 * write instead of converting the rest of the tape for nothing.
 *
 * @example
 * await writeTapeJSON('chat.tape', { utf8: writeOut });
 */
export function writeOut(text: string | Uint8Array): Promise<void> {
  if (failure !== undefined) return Promise.reject(failure);
  // Nobody reads any more: the command goes on to its result (its exit code) without writing.
  if (readerGone) return Promise.resolve();
  if (process.stdout.write(text)) return Promise.resolve();
  return new Promise((done, fail) => {
    const off = () => {
      process.stdout.off('drain', go);
      process.stdout.off('close', go);
      process.stdout.off('error', stop);
    };
    const go = () => {
      off();
      if (failure !== undefined) fail(failure);
      else done();
    };
    const stop = (e: NodeJS.ErrnoException) => {
      off();
      // EPIPE: the reader is gone (watchStdout notes it), no failure; anything else is one.
      if (e.code === 'EPIPE') {
        readerGone = true;
        done();
      } else fail(failed(e));
    };
    process.stdout.on('drain', go);
    process.stdout.on('close', go);
    process.stdout.on('error', stop);
  });
}
