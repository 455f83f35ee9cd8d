/**
 * Importing other tools' recordings (HAR, VCR.py cassettes, nock recordings, mock-server
 * fixtures, talkback tapes) onto a new tape. Each exchange goes through the path a recorded one
 * takes: the deck's request preparation (provider shape, request key with the volatile members
 * and text left out, route) and its record builder (secrets masked, under the new tape's salt),
 * so an imported recording answers the request that recorded it. Identical requests keep their
 * order as repeats.
 *
 * All or nothing: every entry is read and checked first; the tape is written beside the target
 * and moved into place only once whole, so a bad entry, a failed write or a crash leaves the
 * target as it was. `skipBad` keeps the good entries of a file with bad ones, and lists the bad.
 */
import { statSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { MAX_INPUT_BYTES, TapedeckError } from '../errors.ts';
import { checkOptionNames, optionNames } from '../option-names.ts';
import { readBounded, type ReadBound } from '../read-bounded.ts';
import { routeOf } from '../providers/index.ts';
import { recordingFilesMessage } from '../store/import/dir-files.ts';
import { SKIP_BAD_HINT, turnTaken, type ReadResult, type Exchange } from '../store/import/exchange.ts';
import { harEntries, readHarSplit } from '../store/import/har.ts';
import { openHarChunks } from '../store/import/har-chunks.ts';
import { splitHar } from '../store/import/har-split.ts';
import { asTargetError, besideTarget, intoPlace, refuseOpenWriters, refuseSameFile, targetExists } from '../store/import/target.ts';
import { refuseNonTapeTarget } from '../store/import/target-recording.ts';
import { readTalkbackDir } from '../store/import/talkback.ts';
import { detectFormat, formatByName, IMPORT_FORMATS, readRecordingFile, refuseMissingSource, refuseNotUtf8, type ImportFormat } from '../store/import/read.ts';
import type { HttpRecord } from '../store/records.ts';
import { isOtherToolMask, type RedactOptions } from '../store/redact.ts';
import { isFrozenHeaders } from '../store/frozen-headers.ts';
import { prototypeLends } from '../store/inherited-names.ts';
import { Deck, UNSTORED_RESPONSE_HEADERS, type DeckRequest } from './deck.ts';
import { inRecordOrder, sortedShared } from '../store/record-order.ts';
import { FrameBuffer } from '../store/record-pack.ts';
import { newRepeats, repeatOf, type Repeats } from './import-repeats.ts';
import { newRedactionSalt } from '../store/salt.ts';
import { originKey, originOf } from '../store/origins.ts';
import { appendFrames, createTape, recordFrame } from '../store/tape-file.ts';
import { VERSION } from '../version.ts';
import { isBytes } from '../bytes.ts';

/** Bytes of frames written per append while importing (the last append fsyncs the whole tape). */
const BATCH_BYTES = 4 << 20;

/**
 * Options of importRecordings (tapedeck import): the source format, the keys the replay will use,
 * redaction, replacing a tape.
 */
export interface ImportOptions {
  /** The source's format; default detected from the file name and contents. */
  from?: ImportFormat;
  /** Replace an existing tape (default: refuse with E_TAPE_EXISTS). */
  force?: boolean;
  /** Import the good entries of a file with malformed ones, and list the bad (default: refuse the file). */
  skipBad?: boolean;
  /** Request arguments left out of keys, as the replay will be configured. */
  ignoreArgs?: readonly string[];
  /** Member names dropped from messages and tools before keying, as the replay will be configured. */
  volatileKeys?: readonly string[];
  /** Text patterns replaced before keying, as the replay will be configured. */
  volatileText?: readonly (RegExp | string)[];
  /** What is masked before anything is written, as for recording (docs/proxy.md, "Secrets"). */
  redact?: RedactOptions;
  /** recordedAt of entries whose source gives no time (default now). */
  recordedAt?: string;
  /** Where problems that do not stop the import are said (default process.emitWarning). */
  onWarning?: (message: string) => void;
}

/** The names of {@link ImportOptions}, checked against the type. */
const IMPORT_OPTION_NAMES = optionNames<ImportOptions>()(['from', 'force', 'skipBad', 'ignoreArgs', 'volatileKeys', 'volatileText', 'redact', 'recordedAt', 'onWarning']);

/** What an import made. */
export interface ImportReport {
  /** The format read (`HAR`, `VCR.py cassette`, ...). */
  format: string;
  /** Records written. */
  records: number;
  /** Of them, streamed answers. */
  streams: number;
  /** Records per provider and route (`openai POST /v1/chat/completions`; `http` for non-LLM calls), in first-seen order. */
  routes: { provider: string; route: string; records: number }[];
  /**
   * Values masked on the way in (headers, query parameters, body members and form fields,
   * credentials in text), counted where they were masked: one key sent with every request
   * counts once per request. A mask the source held already is not counted.
   */
  masked: number;
  /** Entries not imported, and why: malformed ones (with `skipBad`) and rules that are no request. */
  skipped: { where: string; reason: string }[];
}

/**
 * A mask as redaction writes it: as it is, or percent-encoded where it replaced a query
 * parameter or a form field (`%5BREDACTED%5D`, `%5BREDACTED%3A<hex>%5D`: encodeURIComponent's
 * spelling). Each is one masked value.
 */
const MASK = /\[REDACTED(?::[0-9a-f]{16})?\]|%5BREDACTED(?:%3A[0-9a-f]{16})?%5D/g;

/** How many masks a string holds. */
const masksIn = (s: string): number => (s.includes('REDACTED') ? (s.match(MASK)?.length ?? 0) : 0);

/** What every mask holds, either spelling, as bytes (a string needle is encoded again on every search). */
const MASK_WORD = Buffer.from('REDACTED');

function masksOfValue(v: unknown): number {
  if (typeof v === 'string') return masksIn(v);
  if (isBytes(v)) {
    const b = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    return b.indexOf(MASK_WORD) < 0 ? 0 : masksIn(b.toString('latin1'));
  }
  if (v === null || typeof v !== 'object') return 0;
  let n = 0;
  if (Array.isArray(v)) for (const x of v) n += masksOfValue(x);
  else {
    const inherited = prototypeLends();
    for (const k in v) if (!inherited || Object.hasOwn(v, k)) n += masksOfValue((v as Record<string, unknown>)[k]);
  }
  return n;
}

/**
 * Masks in a header map less those in another, by name: a value the redaction left as it was
 * (the same string, so a member of both) holds as many in both. Values are strings or arrays of
 * them, so a value the same as the other map's is never one it inherits.
 */
function headerMasksAdded(stored: Record<string, unknown>, source: Record<string, unknown>): number {
  let n = 0;
  // for-in: no array of names per map (see inherited-names.ts).
  const inherited = prototypeLends();
  for (const k in stored) {
    if (inherited && !Object.hasOwn(stored, k)) continue;
    const v = stored[k];
    const w = source[k];
    if (v === w) continue;
    // Another tool's placeholder (VCR.py's filter_headers: `REDACTED`, `DUMMY`) was no secret:
    // masked again, but not counted as a secret kept off the tape.
    if (otherToolMask(w)) continue;
    n += masksOfValue(v);
    if (Object.hasOwn(source, k)) n -= masksOfValue(w);
  }
  for (const k in source) {
    if (inherited && !Object.hasOwn(source, k)) continue;
    const w = source[k];
    if (w !== stored[k] && !Object.hasOwn(stored, k)) n -= masksOfValue(w);
  }
  return n;
}

/** Whether a source header value is another tool's placeholder for a secret, every value of it (see isOtherToolMask). */
const otherToolMask = (w: unknown): boolean => (typeof w === 'string' ? isOtherToolMask(w) : Array.isArray(w) && w.length > 0 && w.every((x) => typeof x === 'string' && isOtherToolMask(x)));

/** The last pair of frozen request header maps counted, and its count (entries listing the same headers share both maps). */
let lastHeaderMasks: { stored: object | undefined; source: object | undefined; n: number } = { stored: undefined, source: undefined, n: 0 };

/** {@link headerMasksAdded} of request headers, counted once while the same two frozen maps repeat. */
function requestHeaderMasksAdded(stored: Record<string, unknown>, source: Record<string, unknown>): number {
  const last = lastHeaderMasks;
  if (stored === last.stored && source === last.source) return last.n;
  const n = headerMasksAdded(stored, source);
  if (isFrozenHeaders(stored) && isFrozenHeaders(source)) lastHeaderMasks = { stored, source, n };
  return n;
}

/** A backslash: JSON text without one spells every string it holds as it is. */
const BACKSLASH = 0x5c;

/**
 * Masks the import added to an exchange: those in what its record stores (request URL, headers,
 * body; answer headers and body) less those the source held already (a tape exported and
 * imported again). A value the redaction left as it was holds as many as it held: an answer
 * body or header value that is the same, and a request body stored as parsed (`asSent`) from
 * bytes with no mask and no escape in them (its strings are spans of those bytes).
 */
function masksAdded(r: HttpRecord, x: Exchange, asSent: boolean): number {
  let n = masksIn(r.request.url) - masksIn(x.request.url) + userinfoDropped(x.request.url);
  n += requestHeaderMasksAdded(r.request.headers, x.request.headers) + headerMasksAdded(r.response.headers, x.response.headers);
  const sent = x.request.body;
  let plain = false;
  if (asSent) {
    const b = Buffer.from(sent.buffer, sent.byteOffset, sent.byteLength);
    plain = b.indexOf(BACKSLASH) < 0 && b.indexOf(MASK_WORD) < 0;
  }
  if (!plain) n += masksOfValue(r.request.body) - masksOfValue(sent);
  if (r.response.body !== x.response.body) n += masksOfValue(r.response.body) - masksOfValue(x.response.body);
  return Math.max(0, n);
}

/**
 * 1 when a URL names a user and password (`https://user:secret@host/`), which the recording's
 * origin leaves out (deckRequest): a secret kept off the tape, counted with the masked ones.
 */
function userinfoDropped(u: string): number {
  const at = u.indexOf('@');
  if (at < 0) return 0;
  const scheme = u.indexOf('://');
  if (scheme < 0 || at < scheme) return 0;
  const end = u.slice(scheme + 3).search(/[/?#]/);
  return (end < 0 || scheme + 3 + end > at) && u.slice(scheme + 3, at).includes(':') ? 1 : 0;
}

/** The last URL given to deckRequest, its path and its origin: a recording mostly calls one or a few URLs. */
let lastUrl: { url: string; path: string; origin: string | undefined } = { url: '', path: '', origin: undefined };
/** The last scheme and authority an origin was made of, and that origin (see deckRequest). */
let lastAuthority: { text: string; origin: string | undefined } = { text: '', origin: undefined };

/**
 * The request as the deck takes it: path and query, and the origin of an absolute URL (a path
 * alone names no host: its recording answers any). A tapedeck HAR export says the origin of an
 * entry whose URL's is not its recording's (Exchange.origin).
 */
function deckRequest(x: Exchange): DeckRequest {
  const u = x.request.url;
  if (u !== lastUrl.url) {
    // An absolute URL's path and query, without a URL object per entry (imports run to millions).
    const scheme = u.indexOf('://');
    let path = u;
    let origin: string | undefined;
    if (scheme > 0) {
      const slash = u.indexOf('/', scheme + 3);
      const query = u.indexOf('?', scheme + 3);
      path = slash >= 0 && (query < 0 || slash < query) ? u.slice(slash) : query >= 0 ? `/${u.slice(query)}` : '/';
      const hash = path.indexOf('#');
      if (hash >= 0) path = path.slice(0, hash);
      // The origin parsed once per scheme and authority (a user and password in it are dropped).
      const fragment = u.indexOf('#', scheme + 3);
      let end = slash >= 0 ? slash : u.length;
      if (query >= 0 && query < end) end = query;
      if (fragment >= 0 && fragment < end) end = fragment;
      const authority = u.slice(0, end);
      if (authority !== lastAuthority.text) lastAuthority = { text: authority, origin: originOf(authority) };
      origin = lastAuthority.origin;
    }
    lastUrl = { url: u, path, origin };
  }
  const origin = x.origin === undefined ? lastUrl.origin : (x.origin ?? undefined);
  const req: DeckRequest = { method: x.request.method, url: lastUrl.path, headers: x.request.headers, body: x.request.body };
  if (origin !== undefined) req.origin = origin;
  return req;
}

/** Response headers as a recording stores them: no hop-by-hop, length or encoding (bodies are decoded). */
function storedResponse(x: Exchange): HttpRecord['response'] {
  const headers: HttpRecord['response']['headers'] = {};
  const from = x.response.headers;
  const inherited = prototypeLends();
  for (const k in from) if (!UNSTORED_RESPONSE_HEADERS.has(k) && (!inherited || Object.hasOwn(from, k))) headers[k] = from[k]!;
  return { ...x.response, headers };
}

/** An error's message without the hint the constructor appended, and without its final period. */
const withoutHint = (e: TapedeckError): string => (e.hint && e.message.endsWith(e.hint) ? e.message.slice(0, -e.hint.length) : e.message).trim().replace(/\.$/, '');

/**
 * The error of an import that skipped every entry (skipBad): the file, how many entries it has,
 * and the first that did not import (a malformed one, or one whose body the keyer refused).
 */
function noEntryImports(run: ImportRun): TapedeckError {
  const { read, refused } = run;
  const file = read.file;
  const total = read.bad.length + refused.length + read.unkeyable.length;
  const bad = read.bad[0];
  const r = run.firstRefused;
  const first =
    bad && (r === undefined || Number(bad.details.entry) < r.index)
      ? { entry: Number(bad.details.entry), where: String(bad.details.where), field: String(bad.details.field), problem: String(bad.details.problem) }
      : { entry: r!.index, where: r!.where, field: 'request.body', problem: r!.problem };
  const others = read.bad.length + refused.length - 1;
  const more = others > 0 ? ` (${others} more bad entr${others === 1 ? 'y' : 'ies'} after it)` : '';
  return new TapedeckError(
    'E_IMPORT_ENTRY',
    `${file}: none of its ${total} entr${total === 1 ? 'y' : 'ies'} imports (--skip-bad skipped them all); the first: entry ${first.entry} (${first.where}), field ${first.field}: ${first.problem}${more}; no tape written.`,
    { file, entry: first.entry, field: first.field, path: `${first.where}.${first.field}`, hint: 'Fix the entries (an import without --skip-bad names each in turn), or check that this is the recording you meant.' },
  );
}

/** The error of a source that lists no entries at all (a recorder stopped before any call, or the wrong file). */
function noEntries(read: ReadResult): TapedeckError {
  const where = read.list === '' ? 'its array is empty' : `${read.list} is empty`;
  return new TapedeckError('E_IMPORT_ENTRY', `${read.file}: the ${read.format} has no entries (${where}), and an empty tape would replay nothing; no tape written.`, {
    file: read.file,
    entries: 0,
    ...(read.list === '' ? {} : { path: read.list }),
    hint: 'Check that this is the recording you meant: a recorder stopped before any call was made writes an empty one (record the calls again).',
  });
}

const tapeExists = (out: string) =>
  new TapedeckError('E_TAPE_EXISTS', `Tape ${out} already exists; the import does not overwrite it.`, { file: out, hint: 'Pass --force ({ force: true }) to replace it, or import to another path.' });

/** What an import carries from entry to entry ({@link importEntry}). */
interface ImportRun {
  read: ReadResult;
  out: string;
  skipBad: boolean;
  deck: Deck;
  report: ImportReport;
  /**
   * Per route and match kind: its row of the report and the recordings per key so far, the next
   * one's `repeat` (identical requests keep their order), counted apart per origin as they are
   * filed (`hosts`; src/store/origins.ts). Nested rather than keyed by one joined string: a
   * route's string is the deck's same one while the route repeats, so only the key (64 hex
   * digits) is hashed per record.
   */
  tallies: Map<string, Map<string, { row: ImportReport['routes'][number]; repeats: Repeats; hosts?: Map<string, Repeats> }>>;
  frames: FrameBuffer;
  /** Entries the keyer refused, with skipBad. */
  refused: ImportReport['skipped'];
  /** The first of them, for the error when no entry imports. */
  firstRefused: { index: number; where: string; problem: string } | undefined;
  /** recordedAt of entries without a time of their own, and its text (made when first needed: an invalid recordedAt fails only then, as it did per record). */
  fallbackAt: Date;
  fallbackIso: string | undefined;
  /** Reads the rest of the source, and throws for its first bad entry unless skipBad. */
  badFirst: () => void;
  /** The request keys (and hosts) of the bad entries left out so far (`read.leftOut`), keyed as they come. */
  leftOutKeys: string[];
  /** The first good entry whose request key repeats a left-out entry's, and that entry's error: the import is refused for it. */
  turnTaken: { bad: TapedeckError; later: Exchange } | undefined;
}

/**
 * Keys one exchange, builds its record (redacted under the new tape's salt), frames it into the
 * batch and counts it in the report. A function of its own rather than the body of
 * writeImport's loop: V8 compiles a hot loop of a function called once (on-stack replacement)
 * for that call's own closures and objects, and drops the code when they are gone, so each
 * import compiled the whole of writeImport again, twice; the code of a function called per
 * entry is kept from one import to the next.
 */
function importEntry(run: ImportRun, x: Exchange): void {
  const { deck, report, frames } = run;
  const req = deckRequest(x);
  let rec: HttpRecord | undefined;
  let asSent = false;
  try {
    const p = deck.prepareRequest(req);
    rec = deck.recordOf(p, req, storedResponse(x), x.startedAt ?? (run.fallbackIso ??= run.fallbackAt.toISOString()), x.durationMs ?? 0, x.answerAscii);
    asSent = p.bodyAsSent === true && rec !== undefined && rec.request.body === p.body;
  } catch (e) {
    if (!(e instanceof TapedeckError)) throw e;
    // A body the keyer refuses (a JSON body with duplicate keys, a bad encoding): the entry's fault.
    const file = run.read.file;
    if (!run.skipBad) {
      run.badFirst();
      throw new TapedeckError('E_IMPORT_ENTRY', `${file}: entry ${x.index} (${x.where}), field request.body: ${withoutHint(e)}; no tape written.`, { file, entry: x.index, field: 'request.body', hint: SKIP_BAD_HINT });
    }
    run.refused.push({ where: x.where, reason: withoutHint(e) });
    run.firstRefused ??= { index: x.index, where: x.where, problem: withoutHint(e) };
    return;
  }
  if (!rec) return;
  if (run.read.leftOut !== undefined && x.order === undefined && run.turnTaken === undefined) keyRepeatsLeftOut(run, x, rec);
  let byMatch = run.tallies.get(rec.route);
  if (byMatch === undefined) run.tallies.set(rec.route, (byMatch = new Map()));
  let tally = byMatch.get(rec.match);
  if (tally === undefined) {
    const provider = rec.match === 'http' ? 'http' : (routeOf({ method: rec.request.method, url: rec.request.url })?.provider.name ?? rec.match);
    tally = { row: { provider, route: rec.route, records: 0 }, repeats: newRepeats() };
    byMatch.set(rec.match, tally);
    report.routes.push(tally.row);
  }
  tally.row.records++;
  // Each host's recordings of a request are its own turns (as the deck files them).
  let repeats = tally.repeats;
  if (rec.origin !== undefined) {
    const host = originKey(rec.origin);
    const hosts = (tally.hosts ??= new Map());
    const known = hosts.get(host);
    if (known === undefined) hosts.set(host, (repeats = newRepeats()));
    else repeats = known;
  }
  const counted = repeatOf(repeats, rec.key);
  // Framed at once, so nothing of the record outlives this turn: straight into the batch's
  // buffer, or (a record that is not plain data) the general way. A tapedeck export's place and
  // origin are kept (a recording its export left out as damaged keeps its turn, a test its own).
  const order = x.order;
  const placed = rec as HttpRecord & { repeat: number; run?: string; test?: string };
  placed.repeat = order === undefined ? counted : order.repeat;
  if (order?.run !== undefined) placed.run = order.run;
  if (order?.test !== undefined) placed.test = order.test;
  if (!frames.addPlain(rec as unknown as Record<string, unknown>, rec.request.headers)) frames.addFrame(recordFrame(inRecordOrder(sortedShared(rec)), report.records, run.out, { plain: true }));
  report.records++;
  if (rec.response.chunks) report.streams++;
  report.masked += masksAdded(rec, x, asSent);
}

/**
 * Whether `x` (keyed as `rec`) repeats, by request key and host, a bad entry that --skip-bad
 * leaves out before it: identical requests answer in turn, so it would answer the left-out
 * entry's call (see LeftOut in src/store/import/exchange.ts, which catches the repeats that are
 * identical as sent; this catches the ones a volatile member or ignored argument makes identical).
 * Noted in `run.turnTaken`; the import is refused once the source is read.
 */
function keyRepeatsLeftOut(run: ImportRun, x: Exchange, rec: HttpRecord): void {
  const left = run.read.leftOut!;
  const mine = `${rec.key} ${rec.origin === undefined ? '' : originKey(rec.origin)}`;
  for (let i = 0; i < left.length; i++) {
    if (run.leftOutKeys[i] === undefined) {
      let k = '';
      try {
        const req = deckRequest({ request: left[i]!.request } as Exchange);
        k = `${run.deck.prepareRequest(req).key} ${req.origin === undefined ? '' : originKey(req.origin)}`;
      } catch (e) {
        // A left-out request the keyer refuses repeats nothing a good entry could.
        if (!(e instanceof TapedeckError)) throw e;
      }
      run.leftOutKeys[i] = k;
    }
    if (run.leftOutKeys[i] === mine) {
      run.turnTaken = { bad: left[i]!.error, later: x };
      return;
    }
  }
}

/**
 * Keys, redacts and writes exchanges read from a recording file to a new tape (all or nothing).
 *
 * @example
 * const read = readRecordingFile('network.har', text, 'har')
 * const report = await writeImport(read, 'tapes/app.tape', { force: true })
 */
export async function writeImport(read: ReadResult, out: string, opts: ImportOptions = {}): Promise<ImportReport> {
  // Entries are read as they are keyed (read.exchanges is lazy), so `read.bad` is whole only
  // at the end: whatever stops the import first, the rest of the source is read, and a bad
  // entry is what the import reports (as when every entry was read before anything else).
  const entries = read.exchanges[Symbol.iterator]();
  const badFirst = (): void => {
    while (!entries.next().done);
    // A source without a single entry: an empty tape would replay nothing (docs/migrate.md).
    if (read.entries === 0) throw noEntries(read);
    if (read.bad.length === 0 || opts.skipBad) return;
    const first = read.bad[0]!;
    const more = read.bad.length > 1 ? ` (${read.bad.length - 1} more bad entr${read.bad.length === 2 ? 'y' : 'ies'} after it)` : '';
    throw new TapedeckError(first.code, `${withoutHint(first)}${more}; no tape written.`, { ...first.details });
  };
  // A directory there is no tape to replace (targetExists); a bad entry is said first, as below.
  let exists: boolean;
  try {
    exists = targetExists(out);
  } catch (e) {
    badFirst();
    throw e;
  }
  // A file there that is no tape (another recording given second) is never replaced, --force
  // or not; a bad entry is still said first, as for a tape that exists.
  if (exists) {
    try {
      refuseNonTapeTarget(read.file, out);
    } catch (e) {
      badFirst();
      throw e;
    }
  }
  if (exists && !opts.force) {
    badFirst();
    throw tapeExists(out);
  }
  // Said before the work, not after it (checked again as the tape is replaced: intoPlace); a
  // bad entry is still what the import reports first, as for a tape that exists.
  if (exists) {
    await refuseOpenWriters(out).catch((e: unknown) => {
      badFirst();
      throw e;
    });
  }
  const warnings: string[] = [];
  const refused: ImportReport['skipped'] = [];
  const report: ImportReport = { format: read.format, records: 0, streams: 0, routes: [], masked: 0, skipped: [] };
  const fallbackAt = new Date(opts.recordedAt ?? Date.now());
  // The deck keys and redacts (under the new tape's salt); each record is framed as soon as it
  // is built and the frames go to the new tape in batches, so no record object outlives its
  // turn (young-generation garbage collection copies whatever survives).
  // A HAR that tapedeck exported names the salt its masks were made under: kept, they match again.
  const salt = read.salt ?? newRedactionSalt();
  const deck = await Deck.open(
    { mode: 'passthrough', ignoreArgs: opts.ignoreArgs, volatileKeys: opts.volatileKeys, volatileText: opts.volatileText, redact: { ...opts.redact, salt }, onWarning: (m) => warnings.push(m) },
    { kind: 'fetch' },
  );
  const { tmp, removeDirs } = await besideTarget(out, 'import').catch(async (e: unknown) => {
    await deck.close();
    throw e;
  });
  let written = false;
  const tallies: ImportRun['tallies'] = new Map();
  // Room for a whole batch and the record that ends it, so the buffer is not grown (and copied) on the way.
  const frames = new FrameBuffer(BATCH_BYTES + (1 << 20));
  const run: ImportRun = { read, out, skipBad: Boolean(opts.skipBad), deck, report, tallies, frames, refused, firstRefused: undefined, fallbackAt, fallbackIso: undefined, badFirst, leftOutKeys: [], turnTaken: undefined };
  /** The early flushes of the batches written (see below); never rejects. */
  let flushing: Promise<void> = Promise.resolve();
  try {
    await createTape(tmp, { tapedeckVersion: VERSION, salt });
    for (let next = entries.next(); !next.done; next = entries.next()) {
      // A bad entry refuses the file: nothing more to key.
      if (read.bad.length > 0 && !opts.skipBad) badFirst();
      importEntry(run, next.value);
      if (frames.size >= BATCH_BYTES) {
        await appendFrames(tmp, [frames.take()], { durable: false });
        // The disk takes the batches written so far while the next ones are made (on the thread
        // pool; waited for below): the one fsync that makes the tape durable then has only the
        // last batch left to write, not all of them (~10 ms of an import's wall time).
        flushing = flushing.then(() => flushFile(tmp));
      }
    }
    badFirst();
    if (run.turnTaken !== undefined) throw turnTaken(run.turnTaken.bad, run.turnTaken.later, read.bad.length);
    // skipBad skipped every entry: an empty tape would replay nothing and hide that.
    if (report.records === 0 && (read.bad.length > 0 || refused.length > 0)) throw noEntryImports(run);
    await flushing;
    // One fsync for the whole tape, before it is moved into place.
    await appendFrames(tmp, [frames.take()], { durable: true });
    await intoPlace(tmp, out, opts.force === true, () => tapeExists(out));
    written = true;
  } catch (e) {
    if (e instanceof TapedeckError) throw asTargetError(e, tmp, out);
    badFirst();
    throw new TapedeckError('E_TAPE_IO', `Writing the imported tape beside ${out} failed: ${(e as Error).message}; no tape written.`, { file: out, hint: 'Check permissions and free disk space.' });
  } finally {
    await deck.close();
    await unlink(tmp).catch(() => {});
    if (!written) await removeDirs();
  }
  report.skipped = [
    ...read.unkeyable.map((u) => ({ where: u.where, reason: u.reason })),
    // The place once: the field's path, then only what is wrong (the error's message names the place too).
    ...(opts.skipBad ? read.bad.map((b) => ({ where: String(b.details.path ?? b.details.entry), reason: typeof b.details.problem === 'string' ? b.details.problem : withoutHint(b) })) : []),
    ...refused,
  ];
  const warn = opts.onWarning ?? ((m: string) => process.emitWarning(m, 'TapedeckWarning'));
  // What the source lost (nock without request headers), then what keying and redaction said.
  for (const w of read.warnings ?? []) warn(w);
  for (const w of warnings) warn(w.replaceAll(tmp, out));
  return report;
}

/**
 * Starts the disk on what is written to `file` so far (fsync on the thread pool). Only to save
 * time later: the import's own fsync at the end is what makes the tape durable, so a failure
 * here is left to it.
 */
async function flushFile(file: string): Promise<void> {
  try {
    const h = await open(file, 'r+');
    try {
      await h.sync();
    } finally {
      await h.close();
    }
  } catch {
    // the final fsync reports what is wrong
  }
}

/**
 * A recording file read whole: a regular file whatever its size (its size is known, and a large
 * HAR is read in chunks before it comes to this), stdin, a pipe or a device at most 64 MiB,
 * counted while reading (they have no size to check first: /dev/zero never ends).
 */
const WHOLE_RECORDING: ReadBound = {
  limit: MAX_INPUT_BYTES,
  fileLimit: Infinity,
  most: 'the most tapedeck import reads',
  hint: 'Save it to a file and import the file, which is read whatever its size (a HAR entry by entry): tapedeck import session.har out.tape.',
};

/** A file's bytes, or undefined if it cannot be read (the caller's read says why); E_TOO_LARGE as it is. */
function readBytes(file: string): Buffer | undefined {
  try {
    return readBounded(file, WHOLE_RECORDING);
  } catch (e) {
    if (e instanceof TapedeckError) throw e;
    return undefined;
  }
}

/** Whether a path is a directory (a talkback tape directory is the one a recording import reads). */
function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/** Whether a path is a regular file (not a pipe or a device: those are read once). */
function isRegularFile(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false })?.isFile() === true;
  } catch {
    return false;
  }
}

/**
 * Imports a recording file (HAR, VCR.py / pytest-recording cassette, nock recorder output,
 * mock-server fixtures, a talkback tape) or a talkback tape directory onto a new tape that
 * replays its answers: detected by name and shape, or as `from` says. Nothing is written
 * unless every entry imports (or `skipBad`).
 * `internal.chunkBytes` is for tests: the size of the chunks a HAR is read in.
 *
 * @example
 * const report = await importRecordings('recordings/session.har', 'tapes/app.tape')
 * console.log(`${report.records} records, ${report.masked} values masked`)
 */
export async function importRecordings(src: string, out: string, opts: ImportOptions = {}, internal: { chunkBytes?: number } = {}): Promise<ImportReport> {
  // A misspelt option (`forse`, `skipbad`) would be dropped without a word, as createFetch's are not.
  checkOptionNames(opts, IMPORT_OPTION_NAMES, 'importRecordings', 'docs/migrate.md');
  refuseMissingSource(src);
  if (opts.from !== undefined && !IMPORT_FORMATS.includes(opts.from)) {
    throw new TapedeckError('E_ARG', `Unknown import format ${JSON.stringify(opts.from)}.`, { hint: `Use one of ${IMPORT_FORMATS.join(', ')} (--from).` });
  }
  // The tape written over the recording it is read from (with force, the recording is gone).
  refuseSameFile(src, out);
  // The one directory a recording import reads: talkback's, a tape file per request.
  if (src !== '-' && isDirectory(src)) {
    if (opts.from !== undefined && opts.from !== 'talkback') {
      // Polly.js and pytest-recording directories hold their files a level or two down: name them.
      const found = recordingFilesMessage(src, out);
      throw new TapedeckError('E_IMPORT_FORMAT', `${src} is a directory, and --from ${opts.from} reads a file${found ? ` (it holds ${found.found})` : ''}; no tape written.`, {
        file: src,
        hint: found?.hint ?? `Import the ${opts.from} file itself; a directory imports as talkback's tape directory (--from talkback).`,
      });
    }
    return writeImport(readTalkbackDir(src), out, opts);
  }
  const har = src !== '-' && (opts.from ?? formatByName(src)) === 'har';
  // A regular file (read again if need be; a pipe is read once, below) laid out one entry a
  // line: read in chunks, entry by entry (see har-chunks.ts).
  const chunks = har && isRegularFile(src) ? openHarChunks(src, internal.chunkBytes) : undefined;
  if (chunks) {
    try {
      return await writeImport(harEntries(src, undefined, chunks.entries, chunks.salt), out, opts);
    } catch (e) {
      // An entry's text that is no JSON, or an end of the file that is not the split's: the
      // whole file is read and parsed as below, which says what is wrong (and where).
      if (chunks.whole()) throw e;
    } finally {
      chunks.close();
    }
  }
  let text: string | undefined;
  const bytes = har ? readBytes(src) : undefined;
  if (bytes) {
    // Before any decoding: a byte that is no UTF-8 would be imported as U+FFFD.
    refuseNotUtf8(src, bytes, 'har');
    // Entry by entry, when the split of the file is sure (see har-split.ts).
    const split = splitHar(bytes);
    if (split) {
      try {
        return await writeImport(readHarSplit(split, src), out, opts);
      } catch (e) {
        // An entry's text that is no JSON: the file is not, or the split was wrong. The whole
        // file's parse says which (and where), as it always did; otherwise the error stands.
        if (split.whole()) throw e;
      }
    }
    // The bytes read once (a pipe is not read again): decoded as readFileSync(src, 'utf8') decodes.
    text = bytes.toString('utf8');
  }
  if (text === undefined) {
    const whole = readBounded(src, WHOLE_RECORDING);
    refuseNotUtf8(src, whole, opts.from ?? formatByName(src));
    text = whole.toString('utf8');
  }
  const detected = opts.from ? { format: opts.from, parsed: undefined } : detectFormat(src, text);
  if (!detected) {
    throw new TapedeckError('E_IMPORT_FORMAT', `${src} is none of the recording formats import reads (HAR, VCR.py cassette, nock recording, mock-server fixtures, talkback tape); no tape written.`, {
      file: src,
      hint: `Give the format with --from ${IMPORT_FORMATS.join('|')}.`,
    });
  }
  return writeImport(readRecordingFile(src, text, detected.format, detected.parsed), out, opts);
}
