/**
 * createFetch's record path: an answer from the upstream recorded as it goes to the caller (a
 * stream passed on chunk by chunk, its end held until the record is durable; a whole answer
 * recorded before the caller sees its status). Browser bundles swap this file for
 * fetch-record.browser.ts: a page never records (record and update are refused there).
 */
import { TapedeckError } from '../errors.ts';
import type { Deck, DeckRequest, Prepared } from './deck.ts';
import type { HttpRecord } from '../store/records.ts';
import type { RecordTurn } from './record-turns.ts';
import { reportRecordHookFailure } from './deck-hooks.ts';
import { NULL_BODY, toHeaders } from './fetch-headers.ts';
import { routeStreams } from '../providers/index.ts';
import { noteErrorEvent } from './error-event-answers.ts';
import { keptOffTape } from './unwhole-answer.ts';
import { ChunkLog, FinalEventHold, readWhole, storedResponseHeaders, streamsAnswer } from './upstream.ts';
import { upstreamCutWarning } from './upstream-cut.ts';

/** What a tapedeck fetch keeps of the answers still being recorded, for close() to wait on. */
export interface OpenAnswers {
  /** Calls and recordings in flight. */
  readonly inFlight: Set<Promise<unknown>>;
  /** Recorded answers whose body the caller has not read to the end yet: each reads the rest. */
  readonly unread: Set<() => Promise<void>>;
  /**
   * Of those in flight, the recordings of answers whose caller has gone (it aborted or
   * cancelled), read on for their records. When close()'s bound cuts only these, it says so
   * (./left-answers.ts).
   */
  readonly left?: Set<Promise<unknown>>;
}

/**
 * Records `up`, the upstream's answer to `dreq`, and returns the response the caller gets.
 * `onStored` is told the record once it is stored (before the answer's end reaches the caller):
 * a damaging fault drawn for this call damages that record (./chaos.ts, liveDamage).
 *
 * @example
 * return await recordStream({ inFlight, unread }, deck, prepared, dreq, upstreamResponse, new Date(), performance.now(), signal)
 */
export async function recordStream(open: OpenAnswers, d: Deck, p: Prepared, dreq: DeckRequest, up: Response, recordedAt: Date, t0: number, signal: AbortSignal, turn?: RecordTurn, onStored?: (rec: HttpRecord) => void): Promise<Response> {
  // The turn (./record-turns.ts) is this function's to finish: a whole answer's once recorded
  // (or not), a stream's once it ends whichever way.
  let streaming = false;
  try {
    const r = await answerOf(open, d, p, dreq, up, recordedAt, t0, signal, turn, () => (streaming = true), onStored);
    return r;
  } finally {
    if (!streaming) turn?.finish();
  }
}

async function answerOf(open: OpenAnswers, d: Deck, p: Prepared, dreq: DeckRequest, up: Response, recordedAt: Date, t0: number, signal: AbortSignal, turn: RecordTurn | undefined, streams: () => void, onStored: ((rec: HttpRecord) => void) | undefined): Promise<Response> {
  const { inFlight, unread } = open;
  const headers = storedResponseHeaders(up.headers);
  const out = toHeaders(headers);
  // Nothing says `recorded` before the record is durable: a stream says `recording`.
  out.set('x-tapedeck-match', 'recording');
  out.set('x-tapedeck-key', p.key);
  const init = { status: up.status, statusText: up.statusText, headers: out };
  const log = new ChunkLog();
  const streamed = up.body !== null && !NULL_BODY.has(up.status) && (streamsAnswer(headers, up.headers.get('content-length')) || routeStreams(dreq));
  /** Set when the answer was a stream carrying the API's error event, not recorded. */
  let errorEvent = false;
  /**
   * Records the answer if it is whole (or an error answer, with recordErrors); resolves once the
   * record is durable: 'stored', or 'unrecorded' (not whole, or failed with onRecordFailure
   * 'serve'), or the E_RECORD_FAILED error the caller gets instead of the answer.
   */
  const save = async (): Promise<'stored' | 'unrecorded' | TapedeckError> => {
    const body = log.body();
    const off = keptOffTape(d, p.route, dreq, p.body, headers['content-type'], body, 'event stream');
    if (off) {
      errorEvent = !off.whole && !off.cut;
      return 'unrecorded';
    }
    let recording: ReturnType<Deck['record']>;
    try {
      recording = d.record(p, dreq, { status: up.status, ...(up.statusText ? { statusText: up.statusText } : {}), headers, body, ...(log.chunks() ? { chunks: log.chunks()! } : {}) }, recordedAt, performance.now() - t0, turn);
    } catch (e) {
      // A beforeRecord hook that failed: the caller gets the error (a whole answer's, or its
      // stream's end), and onWarning names the route, as the proxy's stderr does; a caller that
      // stopped reading a stream would otherwise never hear of it.
      if (!reportRecordHookFailure((m) => d.warnOnce(m), p.route, e, streamed ? 'the stream ended with the error' : 'the caller got the error')) throw e;
      // A whole answer's error is counted where the caller gets it (createFetch's error answer).
      if (streamed) d.countError();
      return e as TapedeckError;
    }
    const failed = await recording.durable;
    if (!failed) {
      if (recording.rec) onStored?.(recording.rec);
      return 'stored';
    }
    if (!d.serveUnrecorded) return failed;
    d.countUnrecorded();
    return 'unrecorded';
  };
  out.set('x-tapedeck-trace', d.traceFor(p, recordedAt.toISOString()));
  if (!streamed) {
    // Not a stream: read whole and recorded before the caller sees a status, so a failed
    // record is an error answer and a stored one says `recorded`.
    let body: Uint8Array | null = null;
    if (up.body && !NULL_BODY.has(up.status)) {
      await readWhole(up.body, log, p.route);
      body = log.body();
    }
    const outcome = await save();
    if (outcome instanceof TapedeckError) throw outcome;
    out.set('x-tapedeck-match', outcome === 'stored' ? 'recorded' : 'recording');
    out.set('x-tapedeck-recorded', outcome === 'stored' ? 'true' : 'false');
    return noteErrorEvent(new Response(body && dreq.method !== 'HEAD' ? (body as Uint8Array<ArrayBuffer>) : null, init), Promise.resolve(errorEvent));
  }
  const reader = up.body.getReader();
  let settle!: () => void;
  const tracked = new Promise<void>((r) => (settle = r));
  inFlight.add(tracked);
  void tracked.then(() => inFlight.delete(tracked));
  // From here the stream ends the turn, whichever way it ends.
  streams();
  if (turn) void tracked.then(() => turn.finish());
  let saved: ReturnType<typeof save> | undefined;
  // The caller's body ends only once the record is durable: an answer read to the end is on
  // the tape, whatever happens to this process next. One whose record failed ends with the
  // E_RECORD_FAILED error instead (no clean end: the SDK raises).
  // ...and the chunk with its final event (`data: [DONE]`) waits for the record too.
  const hold = new FinalEventHold();
  const pass = (c: ReadableStreamDefaultController<Uint8Array>, value: Uint8Array): number => {
    const now = hold.push(value);
    for (const b of now) c.enqueue(b);
    return now.length;
  };
  // Ends the caller's body once: the read that saw the end and a drain begun while the record
  // was being stored both come here, and a second close would throw (a false upstream failure).
  let finishing: Promise<void> | undefined;
  const finish = (c: ReadableStreamDefaultController<Uint8Array>): Promise<void> =>
    (finishing ??= (async () => {
      saved ??= save();
      const outcome = await saved;
      settle();
      if (cancelled) return;
      if (outcome instanceof TapedeckError) return c.error(outcome);
      const last = hold.release();
      if (last) c.enqueue(last);
      c.close();
    })());
  let cancelled = false;
  let draining = false;
  const failedUpstream = (e: unknown) => {
    d.countError();
    d.warnOnce(upstreamCutWarning(p.route, e));
  };
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  // Its caller has gone (a cancel, an abort; the first of them): stalled, it must not hold later
  // identical answers (./record-turns.ts), and close() says so if its bound cuts it
  // (OpenAnswers.left).
  const callerLeft = () => {
    turn?.left(p.route, (m) => d.warnOnce(m), () => log.lastAt());
    if (!open.left || open.left.has(tracked)) return;
    open.left.add(tracked);
    void tracked.then(() => open.left!.delete(tracked));
  };
  // Reads the rest of the upstream answer without waiting for the caller: after the caller
  // cancelled (it is still recorded whole), or when close() finds a body nobody read (close
  // must not wait forever for a reader that never comes). What is read stays readable.
  const drain = async () => {
    if (draining) return;
    draining = true;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        log.add(value);
        if (!cancelled) pass(controller, value);
      }
      await finish(controller);
    } catch (e) {
      // The upstream failed: nothing to record, and said (upstream-cut.ts).
      failedUpstream(e);
      if (!cancelled) {
        try {
          controller.error(e);
        } catch {
          // already errored
        }
      }
      settle();
    }
  };
  unread.add(drain);
  void tracked.then(() => unread.delete(drain));
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    async pull(c) {
      if (cancelled || draining) return;
      try {
        // A pull that enqueues nothing is not called again: read on while the chunk read is held.
        for (;;) {
          const { done, value } = await reader.read();
          // A drain that started meanwhile reads (and closes) from here on; reads are served
          // in the order they were asked for, so this chunk still comes first.
          if (done) {
            if (!draining) await finish(c);
            return;
          }
          log.add(value);
          if (cancelled || pass(c, value) > 0 || draining) return;
        }
      } catch (e) {
        if (draining) return;
        failedUpstream(e);
        settle();
        c.error(e);
      }
    },
    cancel() {
      cancelled = true;
      callerLeft();
      void drain();
    },
  });
  // The caller's abort ends its body as it ends fetch's own (the next read rejects with the
  // abort's reason), and the answer is still read to the end and recorded, as after a cancel.
  const onAbort = () => {
    if (cancelled) return;
    cancelled = true;
    callerLeft();
    try {
      controller.error(signal.reason);
    } catch {
      // already ended
    }
    void drain();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  void tracked.then(() => signal.removeEventListener('abort', onAbort));
  // A later identical request waits for this one's record: read on without the caller.
  turn?.onHurry(() => void drain());
  // Whether it was an error answer is known once the stream ended (the test runner's summary asks).
  return noteErrorEvent(new Response(stream, init), tracked.then(() => errorEvent));
}
