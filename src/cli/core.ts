// The CLI's core commands: canonical, hash, paths and key, which show what a request
// canonicalizes and hashes to. Loaded when one of them runs, so the other commands start
// without the matcher and the providers.
import { statSync } from 'node:fs';
import { canonicalizeJSON, hashJSON, MAX_INPUT_BYTES, pathHashes, requestKeys, TapedeckError } from '../index.ts';
import { readBounded } from '../read-bounded.ts';

/** The core command names this module runs. */
export type CoreCommand = 'canonical' | 'hash' | 'paths' | 'key';

/**
 * Runs one core command on a file (or stdin: undefined or '-') and returns its exit code.
 *
 * @example
 * coreCommand('hash', 'request.json', undefined) // prints the digest, returns 0
 */
export function coreCommand(cmd: CoreCommand, file: string | undefined, ignoreKeys: string[] | undefined): number {
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
      const first = input.toString('utf8').trimStart()[0];
      const messages = first === '{' ? (parseJSON(input) as { messages?: unknown[] }).messages ?? [] : input;
      const r = pathHashes(messages, opts);
      r.messageHashes.forEach((m, i) => process.stdout.write(`${i}\t${m}\t${r.pathHashes[i]}\n`));
      process.stdout.write(`digest\t${r.digest}\n`);
      return 0;
    }
    case 'key': {
      const k = requestKeys(readInput(file), ignoreKeys ? { ignoreArgs: ignoreKeys } : {});
      process.stdout.write(`provider\t${k.provider}\nkey\t${k.key}\n`);
      process.stdout.write(`signature\t${JSON.stringify(k.signature)}\t${k.signatureDigest}\n`);
      k.messageHashes.forEach((m, i) => process.stdout.write(`${i}\t${m}\t${k.pathHashes[i]}\n`));
      return 0;
    }
  }
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

