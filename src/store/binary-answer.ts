/**
 * Binary answers (audio, images, PDFs, archives, octet-stream) redacted without changing their
 * length.
 *
 * Redaction reads any answer as text and replaces a credential-looking run with its mask: in a
 * text that is harmless, but an mp3 whose ID3 frame names a signed CDN URL (`?token=…`) or a PNG
 * whose tEXt chunk holds `?X-Goog-Signature=…` came back longer than it was, its frame sizes and
 * CRCs no longer matching its bytes: replay served a corrupt file with a 200. A file is not left
 * alone for that (its secret would reach the disk): each run the redactor masked is filled to its
 * own length instead (the mask, cut to fit or padded with spaces), so every other byte stays
 * where it was. When the filled file still holds anything the redactor would mask, the
 * redactor's own output is kept: a secret never stays to keep a file whole.
 *
 * Node only: reached from stream-redact.ts, which a page's build replaces (a page records nothing).
 */
import { latin1Bytes, latin1Text } from './redact.ts';

/** Media types whose bodies are files, not text (an SVG image is XML text, so it is left out). */
const BINARY_TYPE = /^\s*(?:(?:audio|video|font)\/|image\/(?!svg)|application\/(?:octet-stream|pdf|zip|x-zip-compressed|gzip|x-gzip|x-tar|x-7z-compressed|x-rar-compressed|x-bzip2?|wasm|x-protobuf|protobuf|x-parquet|vnd\.apache\.parquet|vnd\.openxmlformats|vnd\.ms-|msword|x-npy)\b)/i;

/** The masks redaction writes into a text: plain, keyed, and percent-encoded in a URL. */
const MASK = /\[REDACTED(?::[0-9a-f]{16})?\]|%5BREDACTED(?:%3A[0-9a-f]{16})?%5D/g;

const PLAIN_MASK = '[REDACTED]';

/**
 * Whether an answer's body is a file to keep the length of: by its content type, or, with none,
 * by its bytes (a NUL byte, or bytes that are no UTF-8 text).
 */
function isBinary(body: Uint8Array, contentType: string | undefined): boolean {
  if (contentType !== undefined && contentType.trim() !== '') return BINARY_TYPE.test(contentType);
  if (body.includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body);
    return false;
  } catch {
    return true;
  }
}

/**
 * The runs of `before` that redaction replaced with masks in `after`: [start, end, the masks
 * that stand for it]. Undefined when `after` is not `before` with masks in place of some runs.
 */
function maskedRuns(before: string, after: string): [number, number, string][] | undefined {
  // `after` as literal text and masks in turn; masks next to each other stand for one run.
  const literals: string[] = [];
  const masks: string[] = [];
  let at = 0;
  let pending = '';
  for (const m of after.matchAll(MASK)) {
    const lit = after.slice(at, m.index);
    if (lit === '' && pending !== '') pending += m[0];
    else {
      if (pending !== '') masks.push(pending);
      literals.push(lit);
      pending = m[0];
    }
    at = m.index + m[0].length;
  }
  if (pending === '') return [];
  masks.push(pending);
  literals.push(after.slice(at));
  if (!before.startsWith(literals[0]!)) return undefined;
  const out: [number, number, string][] = [];
  let p = literals[0]!.length;
  for (let i = 0; i < masks.length; i++) {
    const next = literals[i + 1]!;
    const last = i === masks.length - 1;
    // A run is never empty: the literal after it is looked for from the next character on.
    const q = last ? before.length - next.length : before.indexOf(next, p + 1);
    if (q <= p || (last && !before.endsWith(next))) return undefined;
    out.push([p, q, masks[i]!]);
    p = q + next.length;
  }
  return out;
}

/** `runs` of a text each replaced by a filler of its own length that `fill` gives. */
function filled(text: string, runs: readonly [number, number, string][], fill: (n: number, mask: string) => string): string {
  let out = '';
  let at = 0;
  for (const [a, b, m] of runs) {
    out += text.slice(at, a) + fill(b - a, m);
    at = b;
  }
  return out + text.slice(at);
}

/** The mask written in a run's place, cut to fit it or padded with spaces (a plain mask when the keyed one is longer). */
const maskFill = (n: number, mask: string): string => {
  const m = mask.length <= n ? mask : PLAIN_MASK.length <= n ? PLAIN_MASK : '';
  return m + ' '.repeat(n - m.length);
};

/** Spaces alone: no token, URL value or member survives them. */
const spaceFill = (n: number): string => ' '.repeat(n);

/**
 * A binary answer as redaction left it (`redacted`, from `body`), made again with each masked run
 * filled to its own length when that masks as much: the same length as `body`, every byte
 * outside the masked runs kept. Any other answer, or one whose filled form the redactor (`again`)
 * would still change, is `redacted` as it is.
 *
 * @example
 * sameLengthRedaction(mp3, masks.bytes(mp3, 'audio/mpeg'), 'audio/mpeg', (b) => masks.bytes(b, 'audio/mpeg'))
 * // mp3's bytes with its URL's `token` value overwritten in place: still a valid mp3
 */
export function sameLengthRedaction(body: Uint8Array, redacted: Uint8Array, contentType: string | undefined, again: (body: Uint8Array) => Uint8Array): Uint8Array {
  if (redacted === body || redacted.length === body.length || !isBinary(body, contentType)) return redacted;
  const before = latin1Text(body);
  const runs = maskedRuns(before, latin1Text(redacted));
  if (runs === undefined || runs.length === 0) return redacted;
  // A URL's value read in a file runs on over the binary bytes after it (to the next quote or
  // white space): its printable part is the value, so that part alone is filled first.
  const printable = runs.map(([a, b, m]): [number, number, string] => {
    let e = a;
    while (e < b && before.charCodeAt(e) > 0x20 && before.charCodeAt(e) < 0x7f) e++;
    return [a, e > a ? e : b, m];
  });
  for (const rs of [printable, runs]) {
    for (const fill of [maskFill, spaceFill]) {
      const out = latin1Bytes(filled(before, rs, fill));
      if (again(out) === out) return out;
    }
  }
  return redacted;
}
