// The canonical JSON of recordings' requests, made once per matcher and kept for its later
// misses. A miss ranks the recordings tied with the request on everything their digests tell
// apart by the bytes their canonical JSON shares with the request's (src/match/diagnose.ts,
// rankTied): on a tape of 100,000 recordings of one system prompt, every miss made all 100,000
// texts again (~0.55 s of each ~0.65 s miss after the first). Kept in a few large chunks: one
// object a recording would cost more than its ~250 bytes of text. At most KEEP_BYTES of text is
// kept: a tape of large bodies (50-message conversations, ~36 KB each) would otherwise hold
// another copy of every request; past the limit a text is made on each miss, as before.

import { canonicalBytes } from './canonical-bytes.ts';
import type { Recording } from './matcher.ts';

const NONE = -1;
/** The most text kept (bytes): ~25 MB holds the 100,000 small chat requests above. */
const KEEP_BYTES = 64 << 20;
/**
 * Kept texts go in chunks of this size, each filled before the next is made: a buffer grown by
 * doubling made and copied twice the memory, and memory written the first time costs (~3.5 ms a
 * MB here) more than the copy itself. A text larger than a chunk is not kept.
 */
const CHUNK = 1 << 20;

/**
 * Each recording's request as canonical JSON, made the first time it is asked for and kept while
 * the kept texts stay within `keepBytes`. A text is made again when its recording's request is
 * no longer the object it was made from.
 *
 * @example
 * const texts = new RequestTexts(recordings);
 * texts.get(0) // canonical bytes of recordings[0].request, to be read before the next call
 */
export class RequestTexts {
  private readonly chunks: Uint8Array[] = [];
  /** Bytes used in the last chunk, and kept in all. */
  private chunkUsed = 0;
  private used = 0;
  /** Per recording: the chunk its text is in (NONE: not kept), where, and how long. */
  private chunkOf = new Int32Array(0);
  private start = new Int32Array(0);
  private length = new Int32Array(0);
  /** The request each text was made from (a recording may be replaced in place). */
  private from: unknown[] = [];

  constructor(
    private readonly recordings: readonly Recording[],
    private readonly keepBytes = KEEP_BYTES,
  ) {}

  /**
   * The canonical JSON of recording i's request, or undefined (no such recording, or a request
   * canonical JSON cannot hold). It may be a view of memory the next get() or core call reuses:
   * read it first.
   */
  get(i: number): Uint8Array | undefined {
    const request = this.recordings[i]?.request;
    if (request === undefined) return undefined;
    if (i >= this.start.length) this.widen(this.recordings.length);
    const c = this.chunkOf[i]!;
    if (c !== NONE && this.from[i] === request) return new Uint8Array(this.chunks[c]!.buffer, this.start[i]!, this.length[i]!);
    const text = canonicalBytes(request, true);
    if (text === undefined) return undefined;
    const n = text.length;
    if (this.used + n > this.keepBytes || n > CHUNK) return text;
    let last = this.chunks.length - 1;
    if (last < 0 || this.chunkUsed + n > this.chunks[last]!.length) {
      // No more than the limit leaves room for.
      this.chunks.push(new Uint8Array(Math.min(CHUNK, this.keepBytes - this.used)));
      this.chunkUsed = 0;
      last++;
    }
    const chunk = this.chunks[last]!;
    chunk.set(text, this.chunkUsed);
    this.chunkOf[i] = last;
    this.start[i] = this.chunkUsed;
    this.length[i] = n;
    this.from[i] = request;
    this.chunkUsed += n;
    this.used += n;
    return new Uint8Array(chunk.buffer, this.start[i]!, n);
  }

  /** Room for n recordings' entries (recordings appended since the last get()). */
  private widen(n: number): void {
    const chunkOf = new Int32Array(n).fill(NONE);
    chunkOf.set(this.chunkOf);
    const start = new Int32Array(n);
    start.set(this.start);
    const length = new Int32Array(n);
    length.set(this.length);
    this.chunkOf = chunkOf;
    this.start = start;
    this.length = length;
  }
}
