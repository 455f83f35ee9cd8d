/**
 * A tape's HTTP recordings as HAR 1.2, for the tools people view and serve traffic with: Chrome
 * devtools (Network, "Import HAR"), Playwright's `routeFromHAR`, Polly.js. One entry per
 * recording in tape order. Bodies are what the tape stores, secrets still masked: text as
 * `text`, other bytes base64 (`encoding: "base64"`). A stream's body is its event-stream text,
 * its first chunk's time is `timings.wait` and the rest `timings.receive`; the time of every
 * chunk is kept in the response's `_chunks` (HAR allows fields starting with `_`), so importing
 * the file gives the stream back as it was recorded.
 *
 * A tape keeps path and query, not the host (recordings answer whichever host the client
 * calls): `origin` gives the one the URLs get. Records that are not HTTP exchanges
 * (ReplayCache values, MCP sessions) have no HAR form and are counted in `skipped`.
 */
import { TapedeckError } from '../errors.ts';
import { VERSION } from '../version.ts';
import { isHttpRecord, type HttpRecord, type StoredHeaders } from './records.ts';
import { readTape } from './tape-file.ts';

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
  const mimeType = first(r.headers, 'content-type') ?? (typeof r.body === 'string' ? 'text/plain' : r.body instanceof Uint8Array ? 'application/octet-stream' : 'application/json');
  if (typeof r.body === 'string') return { mimeType, text: r.body };
  if (r.body instanceof Uint8Array) return { mimeType, ...content(r.body) };
  return { mimeType, text: JSON.stringify(r.body) };
}

function entry(rec: HttpRecord, origin: string): Record<string, unknown> {
  const url = new URL(rec.request.url, origin);
  const res = rec.response;
  const chunks = res.chunks && res.chunks.length > 0 ? res.chunks : undefined;
  const wait = chunks ? chunks[0]![0] : rec.durationMs;
  const receive = chunks ? Math.max(0, chunks[chunks.length - 1]![0] - chunks[0]![0]) : 0;
  const body = content(res.body);
  const post = postData(rec.request);
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
  };
}

/** What {@link exportTapeHar} wrote. */
export interface HarExport {
  /** The HAR document as JSON text (2-space indent, trailing newline). */
  text: string;
  entries: number;
  /** Records on the tape that are not HTTP exchanges and have no HAR form. */
  skipped: number;
}

/**
 * A tape's HTTP recordings as a HAR 1.2 document.
 *
 * @example
 * const { text } = await exportTapeHar('tapes/app.tape', { origin: 'https://api.openai.com' })
 * await writeFile('app.har', text)
 */
export async function exportTapeHar(path: string, opts: { origin?: string } = {}): Promise<HarExport> {
  const origin = opts.origin ?? 'http://localhost';
  if (!URL.canParse(origin) || !/^https?:$/.test(new URL(origin).protocol)) {
    throw new TapedeckError('E_ARG', `The origin ${JSON.stringify(origin)} is not an http(s) URL.`, { hint: 'Give it as --origin https://api.openai.com ({ origin }).' });
  }
  const { records } = await readTape(path);
  const entries: Record<string, unknown>[] = [];
  let skipped = 0;
  for (const r of records) {
    if (isHttpRecord(r.value)) entries.push(entry(r.value, origin));
    else skipped++;
  }
  const har = { log: { version: '1.2', creator: { name: 'tapedeck', version: VERSION }, pages: [], entries } };
  return { text: `${JSON.stringify(har, null, 2)}\n`, entries: entries.length, skipped };
}
