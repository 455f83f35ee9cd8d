// Text written a few records' worth at a time: an export makes many small pieces, and a write
// per piece (a stdout write, a promise) costs more than gathering them. Internal to the exports
// and `tapedeck tree`.

/** Text handed to `write` at a time (a few records' worth). */
const WRITE_CHUNK = 64 * 1024;

/** What a chunked writer gives its caller: `out()` a piece, `flush()` at the end. */
export interface ChunkedWriter {
  out(text: string): Promise<void> | undefined;
  flush(): Promise<void>;
}

/**
 * Gathers text and hands it to `write` in pieces of about WRITE_CHUNK characters (a slow reader
 * holds the writer back, a failed write stops it); `flush()` hands over the rest. `out()` returns
 * the write's promise when it handed text over, to be awaited, and undefined when it only
 * gathered: a caller with a piece per line (`tapedeck tree`: 200,000 lines) then awaits once per
 * write, not once per line (an async `out()` cost that tree ~0.8 s of CPU).
 *
 * @example
 * const w = chunkedWriter((t) => void process.stdout.write(t))
 * await w.out('{"a":1}'); await w.flush()
 */
export function chunkedWriter(write: (text: string) => void | Promise<void>): ChunkedWriter {
  let pending = '';
  return {
    out(text) {
      pending += text;
      if (pending.length < WRITE_CHUNK) return undefined;
      const t = pending;
      pending = '';
      return (async () => write(t))();
    },
    async flush() {
      if (pending.length === 0) return;
      const t = pending;
      pending = '';
      await write(t);
    },
  };
}

/**
 * The buffer utf8ChunkedWriter() encodes pieces into: a piece of up to ~240,000 characters (a
 * large record's text) fits whole after a chunk not yet handed over; a longer one is encoded at
 * the buffer's start once that chunk is handed over, and one longer than the buffer holds
 * (~262,000 characters) is written on its own.
 */
const GATHER_BYTES = 4 * WRITE_CHUNK * 3;

/**
 * chunkedWriter() for output that leaves as UTF-8 (stdout): each piece is encoded as it comes,
 * into one buffer kept for the purpose, and `write` gets a copy of about WRITE_CHUNK bytes at a
 * time. The bytes are what encoding the gathered text would give: a surrogate pair split between
 * two pieces is encoded as the one character it is, and a lone surrogate becomes U+FFFD, as in
 * any UTF-8 output of a string.
 *
 * Why not gather text: V8 encodes a piece cheaply right after it is made, but a string joined
 * from many pieces made earlier (the gathered text, `+=` or join alike) cost ~10 ns a character
 * to read once it reached the output: `tapedeck export` of a 100,000-record tape (196 MB of
 * JSON, its records two-byte strings) spent 2.4 s of its 5.4 s of CPU turning its 64 KB chunks
 * into UTF-8; encoding each record's text as it is made took ~0.1 s.
 *
 * @example
 * const w = utf8ChunkedWriter((bytes) => void process.stdout.write(bytes))
 * await w.out('{"a":"é"}'); await w.flush()
 */
export function utf8ChunkedWriter(write: (bytes: Uint8Array) => void | Promise<void>): ChunkedWriter {
  let buf: Buffer | undefined;
  let at = 0;
  // A high surrogate that ended the last piece: the next piece's first unit may be its low half,
  // which the gathered text would have paired with it.
  let high = '';
  /** Hands over the bytes gathered (a copy: the stream may hold it until it is written). */
  const handOver = (): void | Promise<void> => {
    const bytes = Buffer.from(buf!.subarray(0, at));
    at = 0;
    return write(bytes);
  };
  return {
    out(text) {
      buf ??= Buffer.allocUnsafeSlow(GATHER_BYTES);
      if (high !== '') {
        text = high + text;
        high = '';
      }
      const last = text.charCodeAt(text.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) {
        high = text.slice(-1);
        text = text.slice(0, -1);
      }
      // A UTF-16 unit is at most 3 UTF-8 bytes.
      if (at + text.length * 3 > buf.length) {
        // The gathered bytes first, then this piece: on its own when no buffer would hold it.
        const before = at > 0 ? handOver() : undefined;
        if (text.length * 3 > buf.length) {
          const bytes = Buffer.from(text, 'utf8');
          return (async () => {
            await before;
            await write(bytes);
          })();
        }
        at = buf.write(text, 0, 'utf8');
        return before === undefined ? undefined : (async () => before)();
      }
      at += buf.write(text, at, 'utf8');
      if (at < WRITE_CHUNK) return undefined;
      return (async () => handOver())();
    },
    async flush() {
      if (high !== '') {
        // A high surrogate with nothing after it: U+FFFD, as the text's own encoding gives it.
        if (at + 3 > buf!.length) await handOver();
        at += buf!.write(high, at, 'utf8');
        high = '';
      }
      if (at > 0) await handOver();
    },
  };
}

/**
 * Where an export's or the tree's output goes: a function taking its text a piece at a time, or
 * `{ utf8 }` taking the text's UTF-8 bytes (stdout: see utf8ChunkedWriter).
 */
export type OutputSink = ((text: string) => void | Promise<void>) | { utf8: (bytes: Uint8Array) => void | Promise<void> };

/**
 * The chunked writer for a sink.
 *
 * @example
 * const { out, flush } = writerFor({ utf8: (b) => void process.stdout.write(b) })
 */
export function writerFor(sink: OutputSink): ChunkedWriter {
  return typeof sink === 'function' ? chunkedWriter(sink) : utf8ChunkedWriter(sink.utf8);
}
