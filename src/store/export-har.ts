/**
 * A tape's HTTP recordings as HAR 1.2, for the tools people view and serve traffic with: Chrome
 * devtools (Network, "Import HAR"), Playwright's `routeFromHAR`, Polly.js. One entry per
 * recording in tape order. Bodies are what the tape stores, secrets still masked: text as
 * `text`, other bytes base64 (`encoding: "base64"`). A stream's body is its event-stream text,
 * its first chunk's time is `timings.wait` and the rest `timings.receive`; the time of every
 * chunk is kept in the response's `_chunks` (HAR allows fields starting with `_`), so importing
 * the file gives the stream back as it was recorded.
 *
 * A recording's URL is on the origin it stores (where its request went); `origin` gives the one
 * every URL gets instead, and the one of recordings that store none (written before origins
 * were stored: they answer any host), default `http://localhost`. An entry whose URL is not on
 * its recording's origin says the recording's in `_tapedeck.origin` (null: none), so an import
 * of the file files it as it was. Records that are not HTTP exchanges (ReplayCache values, MCP
 * sessions) have no HAR form and are counted in `skipped`.
 *
 * The tape's redaction salt goes in `log._redactionSalt`: the keyed masks of its secrets were
 * made under it, and a tape imported from the file is written under it, so they match again.
 *
 * Each entry's `_tapedeck` holds the record's place among its request's recordings (`repeat`)
 * and the run and test that made it (`run`, `test`, where the record names them): an import
 * gives them back, so a tape whose damaged recording the export left out still answers that
 * recording's call with E_TAPE_DAMAGED, not with the next recording, and a tape tests share
 * still serves each test its own recordings.
 *
 * Damage the tape reader survived is listed as the JSON export lists it (export.ts): code, byte
 * offset and message, in `log._warnings`, there only when there is some (a sound tape's HAR is
 * plain HAR). The document is written as it is made, an entry at a time, so memory does not
 * grow with the tape.
 */
import { TapedeckError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { isHttpRecord, type HttpRecord, type StoredHeaders } from './records.ts';
import { newerRecordVersion } from './record-version.ts';
import { warningText, type TapeWarning } from './tape-codec.ts';
import { decodedRecords, withTapeStream } from './tape-stream.ts';
import { writerFor, type OutputSink } from './chunked-write.ts';
import { isBytes } from '../bytes.ts';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Text when the bytes are UTF-8 without control characters, else base64. */
function content(bytes: Uint8Array): { text: string; encoding?: 'base64' } {
  try {
    const text = strictUtf8.decode(bytes);
    if (!/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/.test(text)) return { text };
  } catch {
    // not UTF-8: base64 below
  }
  return { text: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64'), encoding: 'base64' };
}

function headerList(h: StoredHeaders): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const [name, v] of Object.entries(h)) for (const value of Array.isArray(v) ? v : [v]) out.push({ name, value: String(value) });
  return out;
}

const first = (h: StoredHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

function postData(r: HttpRecord['request']): Record<string, unknown> | undefined {
  if (r.body === undefined) return undefined;
  const mimeType = first(r.headers, 'content-type') ?? (typeof r.body === 'string' ? 'text/plain' : isBytes(r.body) ? 'application/octet-stream' : 'application/json');
  if (typeof r.body === 'string') return { mimeType, text: r.body };
  if (isBytes(r.body)) return { mimeType, ...content(r.body) };
  return { mimeType, text: JSON.stringify(r.body) };
}

/**
 * A record's `repeat`, `run` and `test`, and its origin when the entry's URL (on `at`) is not on
 * it (see the top), or undefined when there is nothing to say.
 */
function orderOf(rec: HttpRecord, at: string): Record<string, unknown> | undefined {
  const r = rec as HttpRecord & { repeat?: unknown; run?: unknown; test?: unknown };
  const origin = typeof rec.origin === 'string' ? rec.origin : null;
  const own = origin === at ? {} : { origin };
  if (typeof r.repeat !== 'number') return origin === at ? undefined : own;
  return { repeat: r.repeat, ...(typeof r.run === 'string' ? { run: r.run } : {}), ...(typeof r.test === 'string' ? { test: r.test } : {}), ...own };
}

/** The URLs of recordings that store no origin, when the export is given none. */
const NO_ORIGIN = 'http://localhost';

/**
 * The HAR entry of one HTTP exchange record: request, response, timings (a stream's chunk times
 * in `response._chunks`), its URL on `origin` if given, else on the recording's own.
 *
 * @example
 * harEntry(record, 'https://api.openai.com').request.url // 'https://api.openai.com/v1/chat/completions'
 */
export function harEntry(rec: HttpRecord, origin?: string): Record<string, unknown> {
  const url = new URL(rec.request.url, origin ?? (typeof rec.origin === 'string' && URL.canParse(rec.origin) ? rec.origin : NO_ORIGIN));
  const res = rec.response;
  const chunks = res.chunks && res.chunks.length > 0 ? res.chunks : undefined;
  const wait = chunks ? chunks[0]![0] : rec.durationMs;
  const receive = chunks ? Math.max(0, chunks[chunks.length - 1]![0] - chunks[0]![0]) : 0;
  const body = content(res.body);
  const post = postData(rec.request);
  const order = orderOf(rec, url.origin);
  return {
    startedDateTime: rec.recordedAt,
    time: Math.max(rec.durationMs, wait + receive),
    request: {
      method: rec.request.method,
      url: url.href,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headerList(rec.request.headers),
      queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
      ...(post ? { postData: post } : {}),
      headersSize: -1,
      bodySize: post ? Buffer.byteLength(String(post.text), post.encoding === 'base64' ? 'base64' : 'utf8') : 0,
    },
    response: {
      status: res.status,
      statusText: res.statusText ?? '',
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: headerList(res.headers),
      content: { size: res.body.length, mimeType: first(res.headers, 'content-type') ?? 'application/octet-stream', ...body },
      redirectURL: first(res.headers, 'location') ?? '',
      headersSize: -1,
      bodySize: res.body.length,
      ...(chunks ? { _chunks: chunks } : {}),
    },
    cache: {},
    timings: { blocked: -1, dns: -1, connect: -1, send: 0, wait, receive, ssl: -1 },
    ...(order ? { _tapedeck: order } : {}),
  };
}

/** What {@link exportTapeHar} wrote. */
export interface HarExport {
  /** The HAR document as JSON text (2-space indent, trailing newline). */
  text: string;
  entries: number;
  /** Records on the tape that are not HTTP exchanges and have no HAR form. */
  skipped: number;
  /**
   * HTTP exchanges of a record version newer than this tapedeck reads (a newer tapedeck wrote
   * them): left out, as they cannot be read here; `record` is the index among the tape's records.
   * Absent when there are none.
   */
  newer?: { record: number; offset: number; version: number }[];
  /** Damage the tape reader survived, as in the document's `log._warnings` (with the file name). */
  warnings: TapeWarning[];
}

/**
 * A tape's HTTP recordings as a HAR 1.2 document.
 *
 * @example
 * const { text } = await exportTapeHar('tapes/app.tape', { origin: 'https://api.openai.com' })
 * await writeFile('app.har', text)
 */
export async function exportTapeHar(path: string, opts: { origin?: string } = {}): Promise<HarExport> {
  const parts: string[] = [];
  const r = await writeTapeHar(path, (text) => void parts.push(text), opts);
  return { text: parts.join(''), ...r };
}

/** JSON.stringify's 2-space form of a value that sits `indent` deep in the document. */
const nested = (value: unknown, indent: string): string => JSON.stringify(value, null, 2).replaceAll('\n', `\n${indent}`);

/**
 * {@link exportTapeHar}, written out as it is made: the tape is read a window at a time and each
 * record's entry handed to `write` as it comes (in pieces of about 64 KB; a promise `write`
 * returns is awaited, so a slow reader holds the export back). The text is the same, byte for
 * byte: what JSON.stringify(har, null, 2) of the whole document gives, and a newline.
 *
 * @example
 * const { skipped, warnings } = await writeTapeHar('tapes/app.tape', (text) => void process.stdout.write(text), { origin: 'https://api.openai.com' })
 */
export async function writeTapeHar(path: string, write: OutputSink, opts: { origin?: string } = {}): Promise<Omit<HarExport, 'text'>> {
  const origin = opts.origin;
  if (origin !== undefined && (!URL.canParse(origin) || !/^https?:$/.test(new URL(origin).protocol))) {
    throw new TapedeckError('E_ARG', `The origin ${JSON.stringify(origin)} is not an http(s) URL.`, { hint: 'Give it as --origin https://api.openai.com ({ origin }).' });
  }
  return withTapeStream(path, async (scan) => {
    const { out, flush } = writerFor(write);
    // The members before the entries, as JSON.stringify of the whole document indents them.
    // The tape's redaction salt, before the entries (an import reads it before the first one):
    // its keyed masks were made under it, and a tape imported from this file matches them only
    // under it (import/har-split.ts reads it).
    const salt = scan.header.salt === undefined ? '' : `\n    "_redactionSalt": ${JSON.stringify(scan.header.salt)},`;
    await out(`{\n  "log": {\n    "version": "1.2",\n    "creator": ${nested({ name: 'tapedeck', version: VERSION }, '    ')},${salt}\n    "pages": [],\n    "entries": `);
    let entries = 0;
    let skipped = 0;
    let index = 0;
    const newer: NonNullable<HarExport['newer']> = [];
    for await (const r of decodedRecords(scan, path)) {
      const at = index++;
      if (!isHttpRecord(r.value)) {
        // A newer tapedeck's HTTP exchange is one this export cannot read: a version to upgrade
        // for, not a record with no HAR form.
        const n = newerRecordVersion(r.value);
        if (n?.kind === 'http') newer.push({ record: at, offset: r.offset, version: n.version });
        else skipped++;
        continue;
      }
      await out(`${entries === 0 ? '[' : ','}\n      ${nested(harEntry(r.value, origin), '      ')}`);
      entries++;
    }
    await out(entries === 0 ? '[]' : '\n    ]');
    // Damage in file order (decodedRecords has sorted it), worded as the JSON export words it.
    const warnings = scan.warnings.map((w) => ({ code: w.code, offset: w.offset, message: warningText(w, path) }));
    if (warnings.length > 0) await out(`,\n    "_warnings": ${nested(warnings, '    ')}`);
    await out('\n  }\n}\n');
    await flush();
    return { entries, skipped, ...(newer.length > 0 ? { newer } : {}), warnings: [...scan.warnings] };
  });
}
