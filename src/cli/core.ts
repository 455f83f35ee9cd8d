// The CLI's core commands: canonical, hash, paths and key, which show what a request
// canonicalizes and hashes to. Loaded when one of them runs, so the other commands start
// without the matcher and the providers.
import { statSync } from 'node:fs';
import { isatty } from 'node:tty';
import { canonicalizeJSON, hashJSON, MAX_INPUT_BYTES, pathHashes, requestKeys, TapedeckError } from '../index.ts';
import { routeEndpoint } from '../providers/index.ts';
import { readBounded } from '../read-bounded.ts';

/** The core command names this module runs. */
export type CoreCommand = 'canonical' | 'hash' | 'paths' | 'key';

/**
 * Runs one core command on a file (or stdin: undefined or '-') and returns its exit code. `key`
 * keys the body with `route` (`POST /v1beta/models/gemini-2.5-flash:generateContent`, a
 * record's `route`) when given: Gemini and Bedrock name the model in the URL.
 *
 * @example
 * coreCommand('hash', 'request.json', undefined) // prints the digest, returns 0
 * coreCommand('key', 'body.json', undefined, 'POST /model/amazon.nova-lite-v1%3A0/converse')
 */
export function coreCommand(cmd: CoreCommand, file: string | undefined, ignoreKeys: string[] | undefined, route?: string): number {
  checkSource(cmd, file);
  const opts = ignoreKeys ? { ignoreKeys } : undefined;
  switch (cmd) {
    case 'canonical':
      process.stdout.write(canonicalizeJSON(readInput(file), opts));
      process.stdout.write('\n');
      return 0;
    case 'hash':
      process.stdout.write(`${hashJSON(readInput(file), opts)}\n`);
      return 0;
    case 'paths': {
      const input = readInput(file);
      const r = pathHashes(messagesOf(input, file), opts);
      r.messageHashes.forEach((m, i) => process.stdout.write(`${i}\t${m}\t${r.pathHashes[i]}\n`));
      process.stdout.write(`digest\t${r.digest}\n`);
      return 0;
    }
    case 'key': {
      const input = readInput(file);
      const k = requestKeys(input, { ...(ignoreKeys ? { ignoreArgs: ignoreKeys } : {}), ...(route !== undefined ? { endpoint: endpointOf(route) } : {}) });
      // Gemini and Bedrock bodies name no model: their tape key is the body keyed with its URL.
      if (route === undefined && !namesModel(input)) {
        process.stderr.write(`tapedeck key: the body names no model; a Gemini or Bedrock request is keyed with the model and operation its URL names, so this is not the key its tape holds. Give the request's method and path (a record's "route" in tapedeck export): --route 'POST /v1beta/models/gemini-2.5-flash:generateContent'\n`);
      }
      process.stdout.write(`provider\t${k.provider}\nkey\t${k.key}\n`);
      process.stdout.write(`signature\t${JSON.stringify(k.signature)}\t${k.signatureDigest}\n`);
      k.messageHashes.forEach((m, i) => process.stdout.write(`${i}\t${m}\t${k.pathHashes[i]}\n`));
      return 0;
    }
  }
}

/**
 * What the command is to read, checked before reading: an empty word is no path, and with no
 * file and a terminal on stdin, reading it would wait for the user to type JSON, which looks like
 * a hang: E_USAGE saying what the command reads (as `jq` prints its usage). `-` asks for the
 * terminal on purpose: {@link readInput} reads it, saying how to end the input.
 * (isatty, not process.stdin: making that stream puts the terminal in non-blocking mode, and the
 * synchronous read that follows fails with EAGAIN.)
 */
function checkSource(cmd: CoreCommand, file: string | undefined): void {
  // An empty word (an unset shell variable) is no path: reading it said "No such file: the path".
  if (file === '') {
    throw new TapedeckError('E_USAGE', `tapedeck ${cmd} was given an empty path.`, { hint: `tapedeck ${cmd} request.json, or - for stdin (an empty word is what a shell variable that is not set gives).` });
  }
  if (file !== undefined || !isatty(0)) return;
  throw new TapedeckError('E_USAGE', `tapedeck ${cmd} reads JSON from a file or a pipe, and stdin is a terminal.`, {
    hint: `tapedeck ${cmd} request.json, or cat request.json | tapedeck ${cmd}; tapedeck ${cmd} - reads what you type (end it with Ctrl-D).`,
  });
}

/** A `--route` value (`POST /path`) as the endpoint a body is keyed with, else E_ARG saying its form. */
function endpointOf(route: string): { method: string; url: string } {
  const e = routeEndpoint(route.trim());
  if (!/^[A-Z]+$/.test(e.method) || !e.url.startsWith('/')) {
    throw new TapedeckError('E_ARG', `--route ${JSON.stringify(route)} is not a method and a path.`, { hint: "--route 'POST /v1beta/models/gemini-2.5-flash:generateContent': the request's method and path (a record's \"route\" in tapedeck export)" });
  }
  return e;
}

/** Whether a JSON request object has a string `model` member. */
function namesModel(input: Buffer): boolean {
  if (input.toString('utf8').trimStart()[0] !== '{') return true;
  try {
    return typeof (JSON.parse(input.toString('utf8')) as { model?: unknown }).model === 'string';
  } catch {
    return true; // requestKeys already said what is wrong with it
  }
}

/**
 * What `tapedeck paths` hashes: the file's message list, a JSON array as it is, or the
 * `messages` array of a request object. A request without one (a Responses `input`, a
 * `prompt`), or whose `messages` is not an array, is E_NOT_ARRAY naming the file and member:
 * hashing `[]` in its place, or the text of a string as if it were the list, printed digests of
 * something the file does not hold.
 *
 * @example
 * messagesOf(readInput('request.json'), 'request.json') // [{ role: 'user', content: 'hi' }]
 */
export function messagesOf(input: Buffer, file: string | undefined): unknown[] | Buffer {
  if (input.toString('utf8').trimStart()[0] !== '{') return input;
  const messages = (parseJSON(input) as { messages?: unknown }).messages;
  if (Array.isArray(messages)) return messages;
  const name = file === undefined || file === '-' ? 'stdin' : file;
  const hint = 'Give a JSON array of messages, or a request whose "messages" member is that array; `tapedeck key` keys requests of every shape (a Responses "input", a "prompt").';
  if (messages === undefined) {
    throw new TapedeckError('E_NOT_ARRAY', `${name}: the request object has no "messages" member, so there is no message list to hash.`, { file: name, path: '$.messages', hint });
  }
  // The library's reader finds the member in the bytes, for the offset (line and column) of it.
  let offset: number | undefined;
  try {
    pathHashes(input, { member: 'messages' });
  } catch (e) {
    if (e instanceof TapedeckError) offset = e.offset;
  }
  const kind = messages === null ? 'null' : typeof messages === 'object' ? 'an object' : `a ${typeof messages}`;
  const at = offset === undefined ? '' : ` (byte ${offset})`;
  throw new TapedeckError('E_NOT_ARRAY', `${name}: the "messages" member${at} is ${kind}, not an array of messages.`, {
    file: name,
    path: '$.messages',
    ...(offset === undefined ? {} : { offset }),
    hint,
  });
}

/**
 * A JSON file's bytes, or stdin's for undefined or '-': at most 64 MiB, the hashing core's limit
 * (MAX_INPUT_BYTES), counted while reading whatever the file is (a pipe or a device such as
 * /dev/stdin has no size to check first), else E_TOO_LARGE naming it. A directory is refused with
 * E_FILE. A UTF-8 byte order mark first (Windows editors write one) is no part of the JSON: it is
 * read as three spaces, as tapedeck import and add read it, so every byte, line and column an
 * error names is still the file's own.
 *
 * @example
 * readInput('request.json') // <Buffer 7b 22 6d ...>
 * readInput('/dev/zero')    // throws E_TOO_LARGE: /dev/zero holds more than 64 MiB ...
 */
export function readInput(file: string | undefined): Buffer {
  const path = file ?? '-';
  // Typed at a terminal (`tapedeck hash -`, `tapedeck import - out.tape`): the input ends at Ctrl-D.
  if (path === '-' && isatty(0)) process.stderr.write('tapedeck: reading JSON from the terminal; end it with Ctrl-D.\n');
  if (path !== '-' && statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    throw new TapedeckError('E_FILE', `${path} is a directory; this command reads a JSON file (or stdin).`, { file: path, hint: 'Give a file, or - for stdin.' });
  }
  const bytes = readBounded(path, {
    limit: MAX_INPUT_BYTES,
    most: 'the most tapedeck reads as one JSON document',
    hint: 'Give a JSON document of at most 64 MiB, the hashing core\'s limit (split a larger one).',
  });
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes.fill(0x20, 0, 3);
  return bytes;
}

/** JSON text parsed, or E_JSON with the byte offset where it breaks (the core's own reader). */
export function parseJSON(bytes: Buffer): unknown {
  canonicalizeJSON(bytes); // throws E_JSON / E_UTF8 / E_DUPLICATE_KEY with the offset
  return JSON.parse(bytes.toString('utf8'));
}

