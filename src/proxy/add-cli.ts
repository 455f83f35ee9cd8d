/**
 * `tapedeck add <tape> <file.json>...`: adds hand-written recordings (docs/hand-written.md) to a
 * tape, creating it if needed.
 */
import { readBounded, type ReadBound } from '../read-bounded.ts';
import { parseArgs } from 'node:util';
import { MAX_INPUT_BYTES, TapedeckError } from '../errors.ts';
import { canonicalizeJSON } from '../core/index.ts';
import { reportCliError } from '../cli-errors.ts';
import { argsError } from '../cli-args.ts';
import { addRecordings, type WrittenRecording } from './hand-written.ts';

export const ADD_HELP = `Usage: tapedeck add <tape> <file.json>... [options]

Add hand-written recordings to a tape (created if missing): answers written as JSON, keyed like
recorded ones, served in order after what the tape holds. Each file holds one recording or an
array of them:

  { "request":  { "url": "https://api.openai.com/v1/chat/completions", "body": { ... } },
    "response": { "status": 429, "headers": { "retry-after": "1" }, "body": { "error": { ... } } } }

A stream: "response": { "events": [{ "data": { ... } }, { "data": "[DONE]" }], "gapMs": 20 },
add "cut": true for a stream whose connection drops after its events. docs/hand-written.md.

Recordings the tape already ends with (same request, same answers) are not added again. A
request the tape holds other answers for is said on stderr: those are served first.

Options:
  --replace             Remove the tape's recordings of the same requests first, so the added
                        ones are served in their place (an answer fixed and added again)
  --ignore-arg NAME     Request argument left out of the key (as when replaying; repeatable)
  --volatile-text RE    Text replaced before keying (as when replaying; repeatable)
  -h, --help            Show this help

Exit 0: added; 1: a file that is missing, unreadable, not JSON or holds no recording, a
recording that is not valid, or a tape that cannot be written (nothing is added); 2: usage.
`;


/** A file of hand-written recordings: JSON, read as one document (the hashing core's limit). */
const ADD_INPUT: ReadBound = {
  limit: MAX_INPUT_BYTES,
  most: 'the most tapedeck add reads as one JSON document',
  hint: 'Give a JSON file of at most 64 MiB (split the recordings over several files: tapedeck add tape a.json b.json).',
};

/** E_FILE for a recording file that cannot be read: a missing file, a directory, no permission. */
function unreadable(f: string, e: NodeJS.ErrnoException): TapedeckError {
  const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a directory, not a JSON file' : (e.code ?? e.message);
  return new TapedeckError('E_FILE', `Cannot read ${f}: ${why}; nothing was added.`, {
    file: f,
    cause: e.code,
    hint: 'Check the path: tapedeck add <tape> <file.json>... takes JSON files of hand-written recordings (docs/hand-written.md).',
  });
}

/**
 * A recordings file's JSON, read as the rest of the CLI reads JSON (`tapedeck canonical`,
 * `tapedeck import`: the core's strict reader), so a fault is named by its byte, line and column
 * with an excerpt (E_JSON, E_UTF8, E_DUPLICATE_KEY...), with the file. A UTF-8 byte order mark
 * first is skipped: editors on Windows write one, and it is no part of the JSON (JSON.parse and
 * the core both refuse it, as an invisible "Unexpected token"). It is read as three spaces, so
 * every byte, line and column an error names is still the file's own.
 *
 * @example
 * recordingsJSON(readFileSync('retry.json'), 'retry.json') // [{ request: ..., response: ... }]
 * // bad: E_JSON retry.json: Invalid JSON at byte 118 (line 2, column 33): …"a": 1},⟪here⟫}}]…: expected a double-quoted object key; nothing was added.
 */
export function recordingsJSON(bytes: Uint8Array, file: string): unknown {
  const text = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? Uint8Array.from(bytes, (b, i) => (i < 3 ? 0x20 : b)) : bytes;
  try {
    canonicalizeJSON(text);
  } catch (e) {
    if (!(e instanceof TapedeckError)) throw e;
    const said = e.hint && e.message.endsWith(e.hint) ? e.message.slice(0, -e.hint.length).trim() : e.message;
    throw new TapedeckError(e.code, `${file}: ${said.replace(/\.$/, '')}; nothing was added.`, {
      ...e.details,
      file,
      hint: `${e.hint ? `${e.hint} ` : ''}Write the recordings as JSON (docs/hand-written.md).`,
    });
  }
  return JSON.parse(new TextDecoder().decode(text));
}

const ADD_OPTIONS = { replace: { type: 'boolean' }, 'ignore-arg': { type: 'string', multiple: true }, 'volatile-text': { type: 'string', multiple: true }, help: { type: 'boolean', short: 'h' } } as const;

/**
 * Runs `tapedeck add`; returns the exit code.
 *
 * @example
 * process.exitCode = await addCommand(['test/__tapes__/retry.tape', 'retry.json'])
 */
export async function addCommand(args: string[]): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args, options: ADD_OPTIONS, allowPositionals: true, strict: true });
    } catch (e) {
      const { message, didYouMean } = argsError(e, ADD_OPTIONS);
      throw new TapedeckError('E_USAGE', message, { hint: `${didYouMean}tapedeck add --help lists the options.` });
    }
    if (parsed.values.help) {
      process.stdout.write(ADD_HELP);
      return 0;
    }
    const [tape, ...files] = parsed.positionals;
    if (!tape || files.length === 0) throw new TapedeckError('E_USAGE', 'add needs a tape and at least one JSON file.', { hint: 'tapedeck add test/__tapes__/retry.tape retry.json' });
    const recordings: WrittenRecording[] = [];
    // Where each one came from: an error names the file (and the place in its array) besides
    // the number counted over all the files, which alone does not say which file to open.
    const origins: string[] = [];
    for (const f of files) {
      let bytes: Buffer;
      try {
        // Counted while read: a device or a pipe given as the file (/dev/zero) has no size to check first.
        bytes = readBounded(f, ADD_INPUT);
      } catch (e) {
        if (e instanceof TapedeckError) throw e;
        // Bad input, not usage (exit 1), as a missing input of tapedeck import is.
        throw unreadable(f, e as NodeJS.ErrnoException);
      }
      const v = recordingsJSON(bytes, f);
      // An empty array adds nothing: most likely the wrong file, or one not written yet.
      if (Array.isArray(v) && v.length === 0) {
        throw new TapedeckError('E_RECORDING', `${f} holds an empty array: no recording to add; nothing was added to ${tape}.`, {
          file: f,
          hint: 'Write at least one recording in it: [{ "request": { "url": ..., "body": ... }, "response": { "body": ... } }] (docs/hand-written.md), or leave the file out.',
        });
      }
      recordings.push(...((Array.isArray(v) ? v : [v]) as WrittenRecording[]));
      origins.push(...(Array.isArray(v) ? v.map((_, i) => `${f} [${i}]`) : [f]));
    }
    const n = await addRecordings(
      { tape, ignoreArgs: parsed.values['ignore-arg'], ...(parsed.values.replace ? { replace: true } : {}), ...(parsed.values['volatile-text'] ? { volatileText: parsed.values['volatile-text'] } : {}), onWarning: (m) => process.stderr.write(`tapedeck add: ${m.replace(/^tapedeck: /, '')}\n`) },
      recordings,
      origins,
    );
    const kept = recordings.length - n;
    process.stdout.write(`added ${n} recording${n === 1 ? '' : 's'} to ${tape}${kept > 0 ? ` (${kept} already on it as written, not added again)` : ''}\n`);
    return 0;
  } catch (e) {
    return reportCliError(e);
  }
}
