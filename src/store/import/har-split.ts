/**
 * A HAR's `log.entries` read one entry at a time, without JSON.parse of the whole file: the
 * parsed document of a large HAR (42 MB of objects for 10,000 entries) stayed alive through the
 * import, and every garbage collection on the way promoted and marked it; parsed one by one,
 * everything of an entry dies young.
 *
 * Only a cheap structural split is done here, and nothing of it is trusted: the split gives the
 * entries array's span and its elements' spans, and the import takes the entries from it only
 * when JSON.parse says the split is the document's own:
 * - the text outside the array, with the array replaced by a string no file holds, parses, and
 *   that string is what the parse puts at `log.entries` (so duplicate `log` or `entries`
 *   members, of which JSON.parse keeps the last, resolve as in the whole parse);
 * - the array's text is `[`, the elements' texts separated by `,` and whitespace, `]`;
 * - each element's text parses (checked as the entry is read: {@link HarSplit.whole}).
 * Then the whole text is valid JSON with those elements at `log.entries` (JSON has one parse),
 * so the entries are exactly the whole parse's. Any doubt gives undefined, and the caller parses
 * the whole file as before (with its error messages and offsets). A regular file laid out one
 * entry a line is split the same way chunk by chunk, without this whole-file buffer
 * (har-chunks.ts); this split serves pipes, stdin and the other layouts.
 */
import { isAscii } from 'node:buffer';
import { randomBytes } from 'node:crypto';

/** Where the entries array and its elements are in a HAR's text. */
export interface HarSplit {
  /** The entries' texts' [start, end) offsets, in order (2 numbers an entry). */
  spans: number[];
  /** The redaction salt the document names ({@link harSalt}). */
  salt: string | undefined;
  /** Entry i parsed (JSON.parse of its text; throws SyntaxError if it is no JSON). */
  parse(i: number): unknown;
  /**
   * Whether every entry's text is JSON (then the whole text is, and the split is the whole
   * parse's): entries not parsed yet by {@link parse} are parsed now.
   */
  whole(): boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The offset of the first byte at or after i that is not JSON whitespace. */
export function skipWs(b: Buffer, i: number): number {
  for (;;) {
    const c = b[i];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else return i;
  }
}

/** The offset after the string opening at i (a quote), or -1 when it is not closed. */
function stringEnd(b: Buffer, i: number): number {
  for (;;) {
    const q = b.indexOf(QUOTE, i + 1);
    if (q < 0) return -1;
    // Escaped when an odd number of backslashes precede it.
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if (((q - k) & 1) === 1) return q + 1;
    i = q;
  }
}

/** The offset after the value starting at i, or -1 (bracket kinds are not matched: the text is parsed later). */
export function valueEnd(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (const n = b.length; i < n; i++) {
      const x = b[i];
      if (x === QUOTE) {
        i = stringEnd(b, i) - 1;
        if (i < 0) return -1;
      } else if (x === 0x7b || x === 0x5b) depth++;
      else if ((x === 0x7d || x === 0x5d) && --depth === 0) return i + 1;
    }
    return -1;
  }
  // A number or literal: up to the next delimiter.
  const start = i;
  for (const n = b.length; i < n; i++) {
    const x = b[i];
    if (x === 0x2c || x === 0x5d || x === 0x7d || x === 0x20 || x === 0x0a || x === 0x0d || x === 0x09) break;
  }
  return i > start ? i : -1;
}

/** Whether the bytes at i are those of `s` (ASCII). */
function bytesAre(b: Buffer, i: number, s: string): boolean {
  for (let k = 0; k < s.length; k++) if (b[i + k] !== s.charCodeAt(k)) return false;
  return true;
}

/**
 * The members of the object opening at i: `inner` reads the value of each member named `name`
 * whose value opens with `open` (and gives the offset after it); others are skipped. The offset
 * after the object, or -1.
 */
export function members(b: Buffer, i: number, name: string, open: number, inner: (i: number) => number): number {
  i = skipWs(b, i + 1);
  if (b[i] === 0x7d) return i + 1;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const keyEnd = stringEnd(b, i);
    if (keyEnd < 0) return -1;
    // Names compared as written (an escaped spelling is skipped; the parse check catches it).
    const named = keyEnd - i === name.length + 2 && bytesAre(b, i + 1, name);
    i = skipWs(b, keyEnd);
    if (b[i] !== 0x3a) return -1;
    i = skipWs(b, i + 1);
    i = named && b[i] === open ? inner(i) : valueEnd(b, i);
    if (i < 0) return -1;
    i = skipWs(b, i);
    const c = b[i];
    if (c === 0x7d) return i + 1;
    if (c !== 0x2c) return -1;
    i = skipWs(b, i + 1);
  }
}

/**
 * The separator of the elements of the array opening at `i` (its first element at `j`) when
 * they are objects laid out one a line: what follows an element's closing brace, a comma, the
 * lead's whitespace and an opening brace. Undefined for any other layout.
 */
export function lineSeparator(b: Buffer, i: number, j: number): string | undefined {
  const line = b.indexOf(0x0a, i);
  if (b[j] !== 0x7b || line < 0 || line > j) return undefined;
  return `,${b.toString('latin1', i + 1, j)}{`;
}

/**
 * The closing brace of the element that starts at or before `from`, found by the separator
 * `after` ({@link lineSeparator}) that follows it within the first `limit` bytes; else `~k`,
 * where `k` is where the search stopped: the first closing brace whose separator would run
 * past `limit` (read on from there), or `limit` itself. Hops from closing brace to closing
 * brace (a search for the whole separator is slower).
 */
export function elementEnd(b: Buffer, from: number, after: string, limit: number): number {
  for (let k = b.indexOf(0x7d, from); k >= 0; k = b.indexOf(0x7d, k + 1)) {
    if (k + after.length >= limit) return ~k;
    if (b[k + 1] === 0x2c && bytesAre(b, k + 1, after)) return k;
  }
  return ~limit;
}

/**
 * The elements of the array opening at i, or undefined. Elements that are objects laid out one
 * a line (as devtools, Playwright and Polly.js write a HAR) are found by their separator (`}`,
 * `,`, and the whitespace before the first element): no string can hold it (it has a line
 * break), and deeper objects are indented otherwise. A separator that is not where an element
 * ends gives an element text that is not JSON, and the caller parses the whole file.
 */
function elements(b: Buffer, i: number): { end: number; spans: number[] } | undefined {
  const spans: number[] = [];
  let j = skipWs(b, i + 1);
  if (b[j] === 0x5d) return { end: j + 1, spans };
  const after = lineSeparator(b, i, j);
  if (after === undefined) {
    // Not one a line: element by element, each to its end.
    for (;;) {
      const e = valueEnd(b, j);
      if (e < 0) return undefined;
      spans.push(j, e);
      j = skipWs(b, e);
      if (b[j] === 0x5d) return { end: j + 1, spans };
      if (b[j] !== 0x2c) return undefined;
      j = skipWs(b, j + 1);
    }
  }
  for (let k = elementEnd(b, j, after, b.length); k >= 0; k = elementEnd(b, j, after, b.length)) {
    spans.push(j, k + 1);
    j = k + after.length;
  }
  const e = valueEnd(b, j);
  if (e < 0) return undefined;
  spans.push(j, e);
  j = skipWs(b, e);
  return b[j] === 0x5d ? { end: j + 1, spans } : undefined;
}

/**
 * The `log` object of the document that the text before the entries array and the text after it
 * make, when they make one with the array's place at `log.entries`: the two with a string no file
 * holds between them parse, and that string is what the parse puts at `log.entries` (duplicate
 * members resolved as JSON.parse resolves them). Undefined otherwise.
 */
export function splitRest(before: string, after: string): Record<string, unknown> | undefined {
  const sentinel = `tapedeck split ${randomBytes(16).toString('hex')}`;
  let rest: unknown;
  try {
    rest = JSON.parse(`${before}"${sentinel}"${after}`);
  } catch {
    return undefined;
  }
  const log = (rest as { log?: { entries?: unknown } }).log;
  return typeof log === 'object' && log !== null && log.entries === sentinel ? (log as Record<string, unknown>) : undefined;
}

/**
 * The redaction salt a HAR that tapedeck exported names (`log._redactionSalt`, 32 lowercase hex
 * digits), or undefined: its keyed masks were made under that salt, and an import that writes
 * its tape under another would never match them again (export-har.ts writes it).
 *
 * @example
 * harSalt(JSON.parse(text).log) // '0123456789abcdef0123456789abcdef'
 */
export function harSalt(log: unknown): string | undefined {
  const salt = typeof log === 'object' && log !== null ? (log as { _redactionSalt?: unknown })._redactionSalt : undefined;
  return typeof salt === 'string' && /^[0-9a-f]{32}$/.test(salt) ? salt : undefined;
}

/**
 * The split of a HAR's bytes into its entries, checked against JSON.parse of the rest of the
 * document, or undefined when the split cannot be had or is in doubt (then parse the whole).
 * Texts are decoded as readFileSync(file, 'utf8') decodes the whole (a span starts and ends at
 * an ASCII byte, where UTF-8 decoding starts afresh).
 *
 * @example
 * const split = splitHar(readFileSync('network.har'))
 * if (split) for (let i = 0; i < split.spans.length / 2; i++) console.log(split.parse(i))
 */
export function splitHar(bytes: Buffer): HarSplit | undefined {
  let found: { start: number; end: number; spans: number[] } | undefined;
  const entries = (i: number): number => {
    const el = elements(bytes, i);
    if (!el) return -1;
    // The last of duplicate members is the one JSON.parse keeps.
    found = { start: i, end: el.end, spans: el.spans };
    return el.end;
  };
  let i = skipWs(bytes, 0);
  if (bytes[i] !== 0x7b) return undefined;
  i = members(bytes, i, 'log', 0x7b, (at) => members(bytes, at, 'entries', 0x5b, entries));
  if (i < 0 || skipWs(bytes, i) !== bytes.length || !found) return undefined;
  const { start, end, spans } = found;
  // An ASCII text is its own Latin-1 decoding, which is a copy (UTF-8's checks every byte).
  const text = isAscii(bytes) ? (s: number, e: number) => bytes.toString('latin1', s, e) : (s: number, e: number) => bytes.toString('utf8', s, e);
  const log = splitRest(text(0, start), text(end, bytes.length));
  if (log === undefined) return undefined;
  let parsed = 0;
  const parse = (k: number): unknown => {
    const v: unknown = JSON.parse(text(spans[2 * k]!, spans[2 * k + 1]!));
    if (k === parsed) parsed++;
    return v;
  };
  return {
    salt: harSalt(log),
    spans,
    parse,
    whole: () => {
      try {
        while (parsed < spans.length / 2) parse(parsed);
        return true;
      } catch {
        return false;
      }
    },
  };
}
