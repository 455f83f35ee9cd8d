// Numeric status codes shared with assembly/json.ts (keep the two in step), and the messages
// that turn a (status, offset, detail) triple into a TapedeckError.

import { MAX_DEPTH, MAX_INPUT_BYTES, TapedeckError, type TapedeckErrorCode } from '../errors.ts';

export const ERR = {
  JSON: 1,
  UTF8: 2,
  SURROGATE: 3,
  DUPLICATE: 4,
  NON_FINITE: 5,
  DEPTH: 6,
  NOT_ARRAY: 7,
  MEMORY: 8,
} as const;

export const D = {
  END: 1,
  VALUE: 2,
  ARRAY_SEP: 3,
  OBJECT_SEP: 4,
  COLON: 5,
  KEY: 6,
  ESCAPE: 7,
  CONTROL: 8,
  NUMBER: 9,
  LITERAL: 10,
  TRAILING: 11,
} as const;

const CODES: Record<number, TapedeckErrorCode> = {
  [ERR.JSON]: 'E_JSON',
  [ERR.UTF8]: 'E_UTF8',
  [ERR.SURROGATE]: 'E_LONE_SURROGATE',
  [ERR.DUPLICATE]: 'E_DUPLICATE_KEY',
  [ERR.NON_FINITE]: 'E_NON_FINITE',
  [ERR.DEPTH]: 'E_DEPTH',
  [ERR.NOT_ARRAY]: 'E_NOT_ARRAY',
  [ERR.MEMORY]: 'E_MEMORY',
};

const EXPECTED: Record<number, string> = {
  [D.END]: 'the input ended in the middle of a value',
  [D.VALUE]: 'expected a JSON value (object, array, string, number, true, false or null)',
  [D.ARRAY_SEP]: "expected ',' or ']' after an array element",
  [D.OBJECT_SEP]: "expected ',' or '}' after an object member",
  [D.COLON]: "expected ':' after an object key",
  [D.KEY]: 'expected a double-quoted object key',
  [D.ESCAPE]: 'invalid escape sequence (allowed: \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)',
  [D.CONTROL]: 'raw control character in a string (it must be escaped, e.g. \\n or \\u0001)',
  [D.NUMBER]: 'malformed number (JSON numbers look like -12.5e3: no leading zeros, +, or bare dots)',
  [D.LITERAL]: 'expected true, false or null',
  [D.TRAILING]: 'unexpected data after the end of the JSON value',
};

/** Line and column (1-based, in bytes) of a byte offset, for human-readable positions. */
function lineCol(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(offset, bytes.length);
  for (let i = 0; i < end; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

// TextDecoder, not Buffer: a page (llm-tapedeck/browser) reports bad request bodies with this
// excerpt too, and has no Buffer. It replaces bad sequences as Buffer's utf8 decoding does;
// ignoreBOM keeps a leading byte order mark in the excerpt, as Buffer does.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The text around a byte offset as an error quotes it: up to 24 bytes either side, `⟪here⟫`
 * between them.
 *
 * @example
 * excerpt(new TextEncoder().encode('{"a":1,}'), 7) // '{"a":1,⟪here⟫}'
 */
export function excerpt(bytes: Uint8Array, offset: number): string {
  const from = Math.max(0, offset - 24);
  const to = Math.min(bytes.length, offset + 24);
  // Escaped as a JSON string is (one line, control characters and backslashes said), but with
  // its quotes as they are: an excerpt of JSON is mostly quotes, and `\"` on each reads badly.
  const text = (b: Uint8Array) => JSON.stringify(utf8.decode(b)).slice(1, -1).replaceAll('\\"', '"');
  return `${text(bytes.subarray(from, offset))}⟪here⟫${text(bytes.subarray(offset, to))}`;
}

/** Builds the TapedeckError for a failed canonicalization of JSON text. */
export function jsonError(status: number, offset: number, detail: number, bytes: Uint8Array): TapedeckError {
  const code = CODES[status] ?? 'E_JSON';
  const { line, column } = lineCol(bytes, offset);
  const where = `at byte ${offset} (line ${line}, column ${column}): …${excerpt(bytes, offset)}…`;
  switch (status) {
    case ERR.JSON:
      return new TapedeckError(code, `Invalid JSON ${where}: ${EXPECTED[detail] ?? 'syntax error'}.`, {
        offset,
        hint: 'Fix the JSON text; tapedeck accepts strict RFC 8259 JSON only (no comments, trailing commas or NaN).',
      });
    case ERR.UTF8:
      return new TapedeckError(code, `Invalid UTF-8 ${where}.`, {
        offset,
        hint: 'Send the body as UTF-8; if it came from a file or socket, check its charset.',
      });
    case ERR.SURROGATE:
      return new TapedeckError(code, `Lone UTF-16 surrogate escape ${where}.`, {
        offset,
        hint: 'A \\uD800-\\uDFFF escape must be a high+low pair; unpaired surrogates have no canonical UTF-8 form. Remove or replace it (U+FFFD).',
      });
    case ERR.DUPLICATE:
      return new TapedeckError(code, `Duplicate object key ${where}.`, {
        offset,
        hint: 'RFC 8785 requires unique member names; keep one of them.',
      });
    case ERR.NON_FINITE:
      return new TapedeckError(code, `Number out of range ${where}: it does not fit in an IEEE 754 double (it would be Infinity).`, {
        offset,
        hint: 'Send very large values as strings.',
      });
    case ERR.DEPTH:
      return new TapedeckError(code, `Nesting deeper than ${MAX_DEPTH} levels ${where}.`, {
        offset,
        hint: `Flatten the structure or send the deep part as a string; the limit (MAX_DEPTH = ${MAX_DEPTH}) protects against stack exhaustion.`,
      });
    case ERR.NOT_ARRAY: {
      const what = [
        'Expected a JSON array of messages',
        'Expected a JSON object (whose member holds the message array)',
        'Expected an array as the value of the member',
        'The object has no member of that name',
      ][detail] ?? 'Expected a JSON array';
      return new TapedeckError(code, `${what} ${where}.`, {
        offset,
        hint:
          detail === 0
            ? 'pathHashes and hashMany take an array: pass request.messages, or use { member: "messages" } with the whole request.'
            : 'With { member }, pass an object whose member of that name is an array.',
      });
    }
    default:
      return new TapedeckError(code, `WebAssembly memory could not grow while processing ${bytes.length} bytes.`, {
        offset,
        hint: 'Split the input or raise the process memory limit.',
      });
  }
}

/** Input over MAX_INPUT_BYTES (`size` bytes, or at least that many). */
export function tooLarge(size: number): TapedeckError {
  return new TapedeckError('E_TOO_LARGE', `Input is ${size} bytes; the limit is ${MAX_INPUT_BYTES} bytes (64 MiB).`, {
    hint: 'Hash large payloads in parts (e.g. per message with pathHashes) or store them out of band and hash a reference.',
  });
}
