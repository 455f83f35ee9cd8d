/**
 * loadTape: a tape in a page, from a URL, a Response or bytes, in either form tapedeck writes:
 * the binary tape (read by the same decoder as in Node, src/store/tape-codec.ts) or the JSON of
 * `tapedeck export` (src/store/tape-json.ts). Damage is handled as in Node: every intact record
 * is kept and the damaged ones are listed in `warnings` with their byte offsets. A request
 * edited by hand in the JSON form is keyed as it now reads when the tape is replayed (see
 * edited-keys.ts).
 */
import { TapedeckError, withContext } from '../errors.ts';
import { parseTape, TAPE_FORMAT_VERSION, TAPE_MAGIC, type TapeHeader, type TapeWarning } from '../store/tape-codec.ts';
import { parseTapeDocument } from '../store/tape-json.ts';
import { bytesOf, type ByteSource } from './source.ts';

/** A tape loaded into memory: its header, its record values in order, and damage survived. */
export interface LoadedTape {
  /** The URL it came from, or a placeholder for bytes (used in messages). */
  name: string;
  /** 'binary' for a .tape file, 'json' for the JSON of `tapedeck export`. */
  format: 'binary' | 'json';
  header: TapeHeader;
  /**
   * Records in tape order (HTTP exchanges and any other records sharing the tape). `offset` is
   * the record's byte offset in a binary tape, as Node reports it in miss diagnostics
   * (`chat.tape@1234`); in the JSON form, its index in `records`.
   */
  records: { offset: number; value: unknown }[];
  warnings: TapeWarning[];
}

function isBinaryTape(bytes: Uint8Array): boolean {
  for (let i = 0; i < TAPE_MAGIC.length; i++) if (bytes[i] !== TAPE_MAGIC[i]) return false;
  return true;
}

/**
 * Loads a tape: a URL (fetched), a fetch `Response`, an ArrayBuffer or a Uint8Array, holding a
 * binary tape or its exported JSON; a 0-byte file is a tape with no records (warning
 * `E_TAPE_EMPTY`, as in Node). Throws TapedeckError: `E_TAPE_NOT_FOUND` (HTTP 404), `E_TAPE_IO`
 * (other HTTP failures), `E_TAPE_CORRUPT` (neither form), `E_TAPE_IMPORT` (bad JSON form),
 * `E_TAPE_VERSION` (a newer format), `E_ARG` (a tape's text instead of a URL, a Response already
 * read).
 *
 * @example
 * import { loadTape, createReplayFetch } from 'llm-tapedeck/browser'
 * const tape = await loadTape('/tapes/chat.tape')
 * const fetch = createReplayFetch({ tape })
 */
export async function loadTape(source: ByteSource, opts: { name?: string } = {}): Promise<LoadedTape> {
  const got = await bytesOf(source, 'tape');
  const name = opts.name ?? got.name;
  const bytes = got.bytes;
  // A 0-byte file is read as Node reads it: a tape with no records, and the E_TAPE_EMPTY warning.
  if (bytes.length === 0 || isBinaryTape(bytes)) {
    const { header, records, warnings } = parseTape(bytes, name);
    return { name, format: 'binary', header, records: records.map((r) => ({ offset: r.offset, value: r.value })), warnings };
  }
  // The JSON form starts with `{` (after any whitespace or a byte order mark).
  let i = 0;
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x09)) i++;
  if (bytes[i] === 0x7b || (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)) {
    const text = new TextDecoder('utf-8', { ignoreBOM: false }).decode(bytes);
    try {
      const { created, tapedeckVersion, salt, values } = parseTapeDocument(text);
      return { name, format: 'json', header: { formatVersion: TAPE_FORMAT_VERSION, created, tapedeckVersion, ...(salt !== undefined ? { salt } : {}) }, records: values.map((value, offset) => ({ offset, value })), warnings: [] };
    } catch (e) {
      if (e instanceof TapedeckError) throw withContext(e, `${name}: `, { file: name });
      throw e;
    }
  }
  throw new TapedeckError('E_TAPE_CORRUPT', `${name} is neither a tape nor the JSON of one: it starts with bytes ${[...bytes.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ')} (byte 0).`, {
    file: name,
    offset: 0,
    hint: 'Serve the .tape file as it was recorded (binary, no text conversion), or the output of `tapedeck export`.',
  });
}
