/**
 * The deck's record side (./deck.ts): a request about to go upstream keyed and redacted for its
 * record, the request as stored (also what a custom `match` function is shown), the exchange
 * made into the record stored (the beforeRecord hook, redaction, the answer's check, the trace
 * token), and the record appended, in its turn among identical requests recorded at once
 * (./record-turns.ts). The deck decides who answers a request and keeps the counters; it lends
 * what a recording needs of it to {@link openRecorder}.
 *
 * Node only: a page never records (createReplayFetch replays and passes through, and refuses
 * record and update before a request is made), so browser bundles get ./deck-record.browser.ts
 * instead (package.json "browser"), which keeps this code and the trace token's out of a bundle
 * with a 100 KB budget (bench/size.mjs).
 */
import { canonicalizeJSON, hashValue, traceToken } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { rawRequestKey } from '../match/raw-keys.ts';
import { requestKey } from '../match/matcher.ts';
import { KEY_SPEC_VERSION, type NormalizeOptions } from '../providers/normalize.ts';
import { isTelemetry } from '../providers/index.ts';
import type { RecordCollection } from '../store/collection.ts';
import { echoing } from '../store/echo-redact.ts';
import { freezeHeaders, isFrozenHeaders } from '../store/frozen-headers.ts';
import type { HookRequest } from '../store/hooks.ts';
import { normalizeBody } from '../store/http-body.ts';
import { filedKey } from '../store/origins.ts';
import { checkedAnswer, httpRecordKey, type HttpRecord, type StoredHeaders } from '../store/records.ts';
import type { Redactor } from '../store/redact.ts';
import { redactedResponse } from '../store/stream-redact.ts';
import { beforeRecord } from './deck-hooks.ts';
// Values read when a request is recorded, never while the modules load (the two import each other).
import { HOP_BY_HOP, isJsonBody, telemetryRequestKey, type DeckOptions, type DeckRequest, type DeckStats, type Prepared } from './deck.ts';
import { RecordTurns, type RecordTurn } from './record-turns.ts';

/** What the record side uses of its deck: lent by the deck when it is made. */
export interface RecordSide {
  readonly opts: DeckOptions;
  /** The key options of every request (its endpoint is the request's own). */
  readonly norm: Omit<NormalizeOptions, 'endpoint'>;
  readonly redactor: Redactor;
  /** The recordings (undefined in passthrough, which records nothing). */
  readonly col: RecordCollection<HttpRecord> | undefined;
  readonly tape: string | undefined;
  /** The deck's counters: the record side counts what it stored and what it could not. */
  readonly counters: DeckStats;
  /** Appends not yet settled (durable or failed): the deck's flush() waits for them. */
  readonly writes: Set<Promise<unknown>>;
  warn(message: string): void;
  warnOnce(message: string): void;
  /** The request with its body decoded from its Content-Encoding. */
  decoded(req: DeckRequest): DeckRequest;
  /** A JSON body parsed; malformed JSON throws the strict reader's error. */
  parse(body: Uint8Array): unknown;
  /** The key of a non-JSON request (its route, the headers matched, its normalized body). */
  httpKey(route: string, headers: DeckRequest['headers'], body: Uint8Array): string;
  /** A record of this run is stored: the deck counts it among its recordings (and files it, in update mode). */
  added(rec: HttpRecord): void;
}

/** The record side, as the deck asks it: each method is the body of the Deck method of its name (append: appendRecord). */
export interface DeckRecorder {
  prepare(req: DeckRequest, route: string): Prepared;
  /** The request as it would be stored (what a custom `match` function is shown). */
  storedRequest(req: DeckRequest): HookRequest;
  storedRequestHeaders(h: DeckRequest['headers']): StoredHeaders;
  takeTurn(p: Prepared): RecordTurn;
  /** `unchanged`: the record is not stored when it says so (an answer its key's last recording already holds). */
  record(p: Prepared, req: DeckRequest, response: HttpRecord['response'], recordedAt: Date, durationMs: number, turn?: RecordTurn, unchanged?: (rec: HttpRecord) => boolean): { rec: HttpRecord | undefined; durable: Promise<TapedeckError | undefined> };
  recordOf(p: Prepared, req: DeckRequest, response: HttpRecord['response'], recordedAt: Date | string, durationMs: number, answerAscii?: string): HttpRecord | undefined;
  append(rec: HttpRecord, forRetry: boolean): Promise<TapedeckError | undefined>;
  traceFor(p: Prepared, recordedAt: string): string;
}

/**
 * The record side of a deck.
 *
 * @example
 * const recorder = openRecorder({ opts, norm, redactor, col, tape, counters, writes, ... })
 * recorder.record(recorder.prepare(req, route), req, response, new Date(), 12)
 */
export function openRecorder(side: RecordSide): DeckRecorder {
  return new Recorder(side);
}

const decoder = new TextDecoder();

/** JSON.parse of a body, or undefined where it throws (the strict reader then says why). */
function parsedOrUndefined(body: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(body));
  } catch {
    return undefined;
  }
}

/** The model a request names: its view's (the URL's, for APIs that put it there), else the body's; '' for none. */
function modelNamed(viewModel: unknown, body: unknown): string {
  const named = viewModel ?? (body !== null && typeof body === 'object' ? (body as { model?: unknown }).model : undefined);
  return typeof named === 'string' ? named : '';
}

class Recorder implements DeckRecorder {
  private readonly recordTurns = new RecordTurns();
  private lastUrl = { url: '', redacted: '' };
  private lastKeyOptions: (NormalizeOptions & { endpoint: { method: string; url: string } }) | undefined;

  constructor(private readonly side: RecordSide) {}

  /** Keys and the redacted body of a request about to be recorded (`req` already decoded). */
  prepare(req: DeckRequest, route: string): Prepared {
    const redactor = this.side.redactor;
    // Requests mostly repeat one URL: the last one's redaction is kept (by the URL's text).
    const last = this.lastUrl;
    let url = last.redacted;
    if (req.url !== last.url) this.lastUrl = { url: req.url, redacted: (url = redactor.url(req.url)) };
    if (isJsonBody(req.headers, req.body)) {
      const parsed = parsedOrUndefined(req.body);
      let stored = parsed === undefined ? undefined : redactor.value(parsed);
      // A telemetry upload (a trace export) is filed under its route alone: see Deck.find().
      if (stored !== undefined && isTelemetry(req)) return { match: 'json', route, key: telemetryRequestKey(), model: '', body: stored, url };
      // Nothing masked (redaction shares what it leaves as it was): the body's own bytes are the
      // stored body, so they are keyed from the raw bytes (src/match/raw-keys.ts), whose index
      // also refuses what the strict reader refuses. Where that path declines (a fault, a shape
      // it leaves to the reference, volatile members or text), the reference path below.
      if (stored !== undefined && stored === parsed) {
        const raw = rawRequestKey(req.body, this.keyOptions(req.method, req.url));
        if (raw !== undefined) {
          return { match: 'llm', route, key: raw.key, signature: raw.signature, model: modelNamed(raw.model, stored), body: stored, url, bodyAsSent: true };
        }
      }
      // Strict: a body with no canonical form is refused before it goes upstream (the strict reader
      // alone: its digest would be thrown away).
      canonicalizeJSON(req.body);
      stored ??= redactor.value(this.side.parse(req.body));
      let keys: ReturnType<typeof requestKey> | undefined;
      try {
        keys = requestKey(stored, this.keyOptions(req.method, req.url));
      } catch (e) {
        if (!(e instanceof TapedeckError && e.code === 'E_REQUEST')) throw e;
      }
      const model = modelNamed(keys?.view.model, stored);
      if (keys) return { match: 'llm', route, key: keys.key, signature: keys.signature, model, body: stored, url };
      return { match: 'json', route, key: hashValue(stored), model, body: stored, url };
    }
    if (req.body.length === 0) return { match: 'http', route, key: this.side.httpKey(route, req.headers, req.body), model: '', url };
    const body = normalizeBody(req.headers, req.body, redactor);
    return { match: 'http', route, key: this.side.httpKey(route, req.headers, body.bytes), model: '', body: body.stored, url };
  }

  /** The options a request to this endpoint is keyed with: the last ones again while the endpoint repeats (nothing changes them). */
  private keyOptions(method: string, url: string): NormalizeOptions & { endpoint: { method: string; url: string } } {
    const last = this.lastKeyOptions;
    if (last?.endpoint.method === method && last.endpoint.url === url) return last;
    // The endpoint first: a spread then a member added gives the object a new map per deck, and
    // the keying code that reads it was compiled again for each (each import opens a deck).
    return (this.lastKeyOptions = { endpoint: { method, url }, ...this.side.norm });
  }

  storedRequest(req: DeckRequest): HookRequest {
    const { redactor } = this.side;
    const body = req.body.length === 0 ? undefined : isJsonBody(req.headers, req.body) ? redactor.value(this.side.parse(req.body)) : normalizeBody(req.headers, req.body, redactor).stored;
    return { method: req.method.toUpperCase(), url: redactor.url(req.url), headers: this.storedRequestHeaders(req.headers), ...(body !== undefined ? { body } : {}) };
  }

  /** Request headers as stored: lowercase names, hop-by-hop ones dropped, secrets masked. */
  storedRequestHeaders(h: DeckRequest['headers']): StoredHeaders {
    if (h === this.lastFrozenHeaders.from) return this.lastFrozenHeaders.stored;
    const out: StoredHeaders = {};
    for (const k of Object.keys(h)) {
      const v = h[k];
      if (v === undefined || HOP_BY_HOP.has(k)) continue;
      out[k] = v;
    }
    const stored = this.side.redactor.headers(out);
    if (isFrozenHeaders(h)) this.lastFrozenHeaders = { from: h, stored: freezeHeaders(stored) };
    return stored;
  }

  /**
   * The last frozen header map given to storedRequestHeaders (an importer's: the entries of a
   * recording that list the same headers share one) and its stored form, frozen too: a map that
   * cannot change is redacted once while it repeats. Not for a map that can change (a caller
   * could put a secret in after its first redaction), nor with a beforeRecord hook (which gets
   * the stored map to change in place).
   */
  private lastFrozenHeaders: { from: DeckRequest['headers'] | undefined; stored: StoredHeaders } = { from: undefined, stored: {} };

  record(p: Prepared, req: DeckRequest, response: HttpRecord['response'], recordedAt: Date, durationMs: number, turn?: RecordTurn, unchanged?: (rec: HttpRecord) => boolean): { rec: HttpRecord | undefined; durable: Promise<TapedeckError | undefined> } {
    let rec: HttpRecord | undefined;
    try {
      rec = this.recordOf(p, req, response, recordedAt, durationMs);
    } catch (e) {
      turn?.finish();
      throw e;
    }
    if (rec && unchanged?.(rec)) {
      // Already the key's last recording, which a later call is served again: stored once.
      turn?.finish();
      return { rec: undefined, durable: Promise.resolve(undefined) };
    }
    if (!rec) {
      // The beforeRecord hook kept it off the tape: live, and not recorded.
      turn?.finish();
      this.side.counters.byMatch.passthrough++;
      return { rec: undefined, durable: Promise.resolve(undefined) };
    }
    const forRetry = req.behindFault === true;
    if (!turn) return { rec, durable: this.append(rec, forRetry) };
    // After the identical requests sent before it (./record-turns.ts).
    const stored = rec;
    const durable = turn.before().then(() => {
      try {
        return this.append(stored, forRetry);
      } finally {
        turn.finish();
      }
    });
    const writes = this.side.writes;
    writes.add(durable);
    void durable.finally(() => writes.delete(durable));
    return { rec, durable };
  }

  takeTurn(p: Prepared): RecordTurn {
    return this.recordTurns.take(httpRecordKey(p.route, p.match, p.key));
  }

  recordOf(p: Prepared, req: DeckRequest, response: HttpRecord['response'], recordedAt: Date | string, durationMs: number, answerAscii?: string): HttpRecord | undefined {
    const { opts, redactor } = this.side;
    const recordedAtIso = typeof recordedAt === 'string' ? recordedAt : recordedAt.toISOString();
    const given = response;
    let requestHeaders = this.storedRequestHeaders(req.headers);
    if (opts.beforeRecord) {
      // The hook sees what would be stored; what it returns is redacted again (docs/hooks.md).
      const h = beforeRecord(opts.beforeRecord, { match: p.match, key: p.key, signature: p.signature, url: p.url, headers: requestHeaders, body: p.body }, req.method.toUpperCase(), response, this.side.norm);
      if (!h) return undefined;
      if (h.rekeyed) this.side.warnOnce(`tapedeck: the beforeRecord hook changed what ${p.route} is keyed by; a request sent as before will not find this recording (use volatileText, volatileKeys or ignoreArgs for what must not count).`);
      p = { ...p, match: h.match, key: h.key, signature: h.signature, url: redactor.url(h.url), body: h.body === undefined ? undefined : redactor.value(h.body) };
      requestHeaders = redactor.headers(h.headers);
      response = h.response;
    }
    // The answer's JSON check parses it; redaction masks its members from that parse.
    // A hook's answer is its own: the caller's text is of the answer before it.
    const ascii = response === given ? answerAscii : undefined;
    const answer = checkedAnswer(response, ascii);
    const rec: HttpRecord = {
      v: 1,
      kind: 'http',
      match: p.match,
      route: p.route,
      key: p.key,
      keyVersion: KEY_SPEC_VERSION,
      ...(p.signature ? { signature: p.signature } : {}),
      trace: this.traceFor(p, recordedAtIso),
      request: { method: req.method.toUpperCase(), url: p.url, headers: requestHeaders, ...(p.body !== undefined ? { body: p.body } : {}) },
      // The request's own secrets are masked where the answer repeats them (src/store/echo-redact.ts).
      response: redactedResponse(response, { parsed: answer.parsed, ascii }, p.bodyAsSent === true ? echoing(redactor, req, true) : echoing(redactor, req.headers['content-encoding'] !== undefined ? this.side.decoded(req) : req)),
      recordedAt: recordedAtIso,
      durationMs: Math.round(durationMs * 1000) / 1000,
    };
    // Where the request went (see hostMatch); none when unknown.
    if (req.origin !== undefined) rec.origin = req.origin;
    // And under which path prefix there, so a re-recording goes to the same URL (written only when there is one).
    if (req.upstreamPath) rec.upstreamPath = req.upstreamPath;
    // Framed fine but not what its content type says: kept byte for byte, and said now.
    const problem = answer.problem;
    if (problem) this.side.warn(`tapedeck: ${rec.route}: the upstream's ${response.status} answer is ${problem} although its content type says JSON; recorded byte for byte as it came (tapedeck inspect marks it).`);
    return rec;
  }

  append(rec: HttpRecord, forRetry: boolean): Promise<TapedeckError | undefined> {
    const { counters, writes, tape } = this.side;
    const durable = this.side.col!.append(filedKey(rec), rec, { forRetry }).then(
      () => {
        this.side.added(rec);
        // Counted as recorded only now that it is stored.
        counters.recorded++;
        counters.byMatch.recorded++;
        return undefined;
      },
      (e: unknown) => {
        counters.appendFailures++;
        counters.byMatch.recordFailed++;
        const cause = `${e instanceof TapedeckError ? `${e.code}: ` : ''}${e instanceof Error ? e.message : String(e)}`;
        this.side.warn(`tapedeck: could not append a record to ${tape}: ${cause}`);
        const where = tape ?? 'the store';
        return new TapedeckError('E_RECORD_FAILED', `The answer to ${rec.route} could not be recorded in ${where} (${cause}), so it is not served as if it were.`, {
          file: where,
          route: rec.route,
          key: rec.key,
          // What the store said, for a caller that reports it itself (tapedeck add: once, with its fix).
          cause: e,
          hint: `Fix the store (free disk space, make the tape writable for this user, release the tape lock, bring Redis back) and send the request again; to take live answers unrecorded meanwhile, use --on-record-failure serve (option onRecordFailure: 'serve').`,
        });
      },
    );
    writes.add(durable);
    void durable.finally(() => writes.delete(durable));
    return durable;
  }

  traceFor(p: Prepared, recordedAt: string): string {
    return traceToken({
      documentId: p.route.includes('\0') ? p.route.replace(/\0/g, '') : p.route,
      documentVersion: recordedAt,
      model: (p.model.includes('\0') ? p.model.replace(/\0/g, '') : p.model).toWellFormed(),
      systemPromptVersion: 'tapedeck-http-1',
      selectedIds: [p.key],
    });
  }
}
