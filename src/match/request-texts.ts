// The canonical JSON of recordings' requests, made once per matcher and kept for its later
// misses. A miss ranks the recordings tied with the request on everything their digests tell
// apart by the bytes their canonical JSON shares with the request's (src/match/diagnose.ts,
// rankTied): on a tape of 100,000 recordings of one system prompt, every miss made all 100,000
// texts again (~0.55 s of each ~0.65 s miss after the first). Kept in one growing buffer: one
// object a recording would cost more than its ~250 bytes of text. At most KEEP_BYTES of text is
// kept: a tape of large bodies (50-message conversations, ~36 KB each) would otherwise hold
// another copy of every request; past the limit a text is made on each miss, as before.

import { canonicalBytes } from './canonical-bytes.ts';
import type { Recording } from './matcher.ts';

const NONE = -1;
/** The most text kept (bytes): ~25 MB holds the 100,000 small chat requests above. */
const KEEP_BYTES = 64 << 20;

/**
 * Each recording's request as canonical JSON, made the first time it is asked for and kept while
 * the kept texts stay within `keepBytes`. A text is made again when its recording's request is
 * no longer the object it was made from.
 *
 * @example
 * const texts = new RequestTexts(recordings);
 * texts.get(0) // canonical bytes of recordings[0].request, a view valid until the next get()
 */
export class RequestTexts {
  private buf = new Uint8Array(1 << 16);
  private used = 0;
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
   * canonical JSON cannot hold). A view into memory the next get() may move: use it first.
   */
  get(i: number): Uint8Array | undefined {
    const request = this.recordings[i]?.request;
    if (request === undefined) return undefined;
    if (i >= this.start.length) this.widen(this.recordings.length);
    const at = this.start[i]!;
    if (at !== NONE && this.from[i] === request) return this.buf.subarray(at, at + this.length[i]!);
    const text = canonicalBytes(request);
    if (text === undefined || this.used + text.length > this.keepBytes) return text;
    if (this.used + text.length > this.buf.length) {
      const grown = new Uint8Array(Math.min(this.keepBytes, Math.max(this.buf.length * 2, this.used + text.length)));
      grown.set(this.buf.subarray(0, this.used));
      this.buf = grown;
    }
    this.buf.set(text, this.used);
    this.start[i] = this.used;
    this.length[i] = text.length;
    this.from[i] = request;
    this.used += text.length;
    return text;
  }

  /** Room for n recordings' entries (recordings appended since the last get()). */
  private widen(n: number): void {
    const start = new Int32Array(n).fill(NONE);
    start.set(this.start);
    const length = new Int32Array(n);
    length.set(this.length);
    this.start = start;
    this.length = length;
  }
}
