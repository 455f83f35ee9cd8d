/**
 * The record the proxy and createFetch write to a tape for one HTTP exchange. docs/proxy.md is
 * the reference; this is the type and the helpers that read it back.
 *
 * One record per exchange, appended once the response has ended, so a record is always a whole
 * answer: a stream cut short (upstream died, shutdown) is never written, because replaying half
 * an answer as if it were all of it is worse than a miss.
 */
import type { Signature } from '../match/matcher.ts';

/** HTTP header map as stored: lowercase names, values as sent (secret ones masked). */
export type StoredHeaders = Record<string, string | string[]>;

/**
 * How the request is found again:
 * - `llm`: a JSON body the matcher understands (OpenAI, Anthropic, generic); `key` is the
 *   matcher's request key of the stored (redacted) body.
 * - `json`: any other JSON body; `key` is the digest of its canonical JSON (RFC 8785), so key
 *   order and whitespace do not matter.
 * - `http`: everything else; `key` is SHA-256 of method, URL and the headers asked for.
 */
export type MatchKind = 'llm' | 'json' | 'http';

export interface HttpRecord {
  v: 1;
  kind: 'http';
  match: MatchKind;
  /** `METHOD /path?query` (query redacted): recordings are grouped and matched per route. */
  route: string;
  /** 64 hex characters; see MatchKind. */
  key: string;
  /** The request key spec version of an `llm` or `json` key; absent in records written before version 2. */
  keyVersion?: number;
  /** The request signature (tool names, message count, context keys), for `llm` records. */
  signature?: Signature;
  /** Trace token of this recording (see docs/proxy.md), sent back as `x-tapedeck-trace`. */
  trace: string;
  request: {
    method: string;
    /** Path and query as the client sent them (secret query parameters masked). */
    url: string;
    headers: StoredHeaders;
    /**
     * JSON bodies: the parsed value, secret fields and credential-looking strings masked.
     * Text bodies: the text, masked. Other bodies: the bytes. Absent when there was no body.
     */
    body?: unknown;
  };
  response: {
    status: number;
    statusText?: string;
    /** Without hop-by-hop headers, content-length and content-encoding (bodies are stored decoded). */
    headers: StoredHeaders;
    /** The body exactly as the client received it. */
    body: Uint8Array;
    /**
     * Streams only (server-sent events, or any body that arrived in more than one piece):
     * `[ms, end]` per chunk, where `ms` is when the chunk arrived, counted from the response
     * headers, and `end` is the byte offset in `body` where the chunk ends.
     */
    chunks?: [number, number][];
  };
  /** ISO 8601 time the request was received. */
  recordedAt: string;
  /** Milliseconds from sending the request upstream to the end of the response. */
  durationMs: number;
}

/** Whether a tape value is a proxy record (other tools' records share tapes and are skipped). */
export function isHttpRecord(v: unknown): v is HttpRecord {
  if (v === null || typeof v !== 'object') return false;
  const r = v as Partial<HttpRecord>;
  return (
    r.kind === 'http' &&
    r.v === 1 &&
    typeof r.key === 'string' &&
    typeof r.route === 'string' &&
    (r.match === 'llm' || r.match === 'json' || r.match === 'http') &&
    r.response !== null &&
    typeof r.response === 'object' &&
    r.response.body instanceof Uint8Array
  );
}

/** The chunks of a recorded response as [delayFromStartMs, bytes], one chunk when not streamed. */
export function responseChunks(r: HttpRecord['response']): [number, Uint8Array][] {
  if (!r.chunks || r.chunks.length === 0) return [[0, r.body]];
  const out: [number, Uint8Array][] = [];
  let start = 0;
  for (const [ms, end] of r.chunks) {
    out.push([ms, r.body.subarray(start, end)]);
    start = end;
  }
  if (start < r.body.length) out.push([r.chunks[r.chunks.length - 1]![0], r.body.subarray(start)]);
  return out;
}
