/**
 * The proxy's half of "recorded behind the fault" (./chaos.ts, needsRecordBehind): in update
 * mode a status fault, `reset` or `timeout` that stands in for a call the tape has no recording
 * of still sends the call upstream, and records its answer for the call's retry before the fault
 * goes out, as createFetch does by sending the request through itself again (./chaos.ts,
 * recordBehind). Without it a test's fallback path through `tape.serve()` passed locally,
 * recorded nothing, and missed in CI for good.
 */
import { TapedeckError } from '../errors.ts';
import type { Deck, DeckRequest } from './deck.ts';
import type { RecordTurn } from './record-turns.ts';
import { keptOffTape } from './unwhole-answer.ts';
import { ChunkLog, readWhole, storedResponseHeaders } from './upstream.ts';

/**
 * Sends `req` upstream with `send`, reads the answer whole and records it as the answer of the
 * faulted call (its retry takes it, as its replay will); resolves once it is stored, or not (an
 * error answer without recordErrors, a broken stream, an unreachable API: its replay misses, and
 * says so), never rejecting: the caller answers the fault either way.
 *
 * @example
 * if (needsRecordBehind(plan, deck, forced, dreq)) await recordBehindUpstream(deck, dreq, (r) => link.start(url, r).response)
 */
export async function recordBehindUpstream(d: Deck, req: DeckRequest, send: (req: DeckRequest) => Promise<Response>): Promise<void> {
  const behind: DeckRequest = { ...req, behindFault: true };
  let turn: RecordTurn | undefined;
  let route = `${req.method} ${req.url.split('?')[0]}`;
  try {
    const p = d.prepareRequest(behind);
    route = p.route;
    // After identical requests being recorded, as any recording (./record-turns.ts).
    turn = d.takeTurn(p);
    const t0 = performance.now();
    const recordedAt = new Date();
    const up = await send(behind);
    const headers = storedResponseHeaders(up.headers);
    const log = new ChunkLog();
    if (up.body) await readWhole(up.body, log, p.route);
    const body = log.body();
    // An error answer is recorded only with recordErrors, as on the usual path; a cut or broken
    // one never (keptOffTape says so).
    if (up.status >= 400 && !d.recordErrors) return;
    if (keptOffTape(d, p.route, behind, p.body, headers['content-type'], body, 'answer')) return;
    const chunks = log.chunks();
    await d.record(p, behind, { status: up.status, ...(up.statusText ? { statusText: up.statusText } : {}), headers, body, ...(chunks ? { chunks } : {}) }, recordedAt, performance.now() - t0, turn).durable;
  } catch (e) {
    // A failed append was said where it failed; anything else is said here.
    const why = e instanceof TapedeckError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e);
    d.warnOnce(`tapedeck: ${route}: the answer to record behind an injected fault could not be recorded (${why}); its replay will miss.`);
  } finally {
    turn?.finish();
  }
}
