/**
 * Calling the upstream with fetch (undici in Node), and collecting what was received for the
 * recording while it is passed on.
 */
import { TapedeckError } from '../errors.ts';
import { HOP_BY_HOP, UNSTORED_RESPONSE_HEADERS, type DeckRequest } from './deck.ts';
import type { StoredHeaders } from '../store/records.ts';

// Request headers fetch sets itself or that describe only the hop to the proxy. Dropping
// accept-encoding lets undici negotiate and decode compression, so stored bodies are plain.
const DROP_REQUEST = new Set([...HOP_BY_HOP, 'accept-encoding']);

/** Joins the upstream base (which may carry a path prefix) with a request's path and query. */
export function upstreamUrl(upstream: string, url: string): string {
  const base = upstream.endsWith('/') ? upstream.slice(0, -1) : upstream;
  return base + (url.startsWith('/') ? url : `/${url}`);
}

export function forwardHeaders(h: DeckRequest['headers']): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || DROP_REQUEST.has(k)) continue;
    if (Array.isArray(v)) for (const x of v) out.push([k, x]);
    else out.push([k, v]);
  }
  return out;
}

/** A fetch Response's headers as stored: without hop-by-hop, length and encoding headers. */
export function storedResponseHeaders(headers: Headers): StoredHeaders {
  const out: StoredHeaders = {};
  headers.forEach((value, name) => {
    if (UNSTORED_RESPONSE_HEADERS.has(name) || name === 'set-cookie') return;
    out[name] = value;
  });
  // Headers.forEach joins set-cookie values with ", ", which breaks cookies with dates in them.
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}

/**
 * Sends a request upstream. Connection failures become TapedeckError E_UPSTREAM (HTTP 502) that
 * names the upstream and the system error.
 */
export async function callUpstream(fetchImpl: typeof fetch, url: string, req: DeckRequest, signal?: AbortSignal): Promise<Response> {
  const method = req.method.toUpperCase();
  const hasBody = method !== 'GET' && method !== 'HEAD' && req.body.length > 0;
  try {
    return await fetchImpl(url, {
      method,
      headers: forwardHeaders(req.headers),
      body: hasBody ? req.body : undefined,
      redirect: 'manual',
      signal,
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
    let origin = url;
    try {
      origin = new URL(url).origin;
    } catch {
      // keep the URL as given
    }
    throw new TapedeckError('E_UPSTREAM', `Upstream ${origin} is unreachable (${why}).`, {
      upstream: origin,
      cause: why,
      hint: 'Check --upstream and the network, or replay from the tape (--mode replay).',
    });
  }
}

/** Collects streamed chunks with their arrival times, for HttpRecord.response.chunks. */
export class ChunkLog {
  private readonly parts: Uint8Array[] = [];
  private readonly marks: [number, number][] = [];
  private total = 0;
  private readonly start = performance.now();

  add(chunk: Uint8Array): void {
    this.parts.push(chunk);
    this.total += chunk.length;
    this.marks.push([Math.round((performance.now() - this.start) * 1000) / 1000, this.total]);
  }

  body(): Uint8Array {
    if (this.parts.length === 1) return this.parts[0]!;
    return Buffer.concat(this.parts, this.total);
  }

  /** Chunk marks, only when the body came in more than one piece. */
  chunks(): [number, number][] | undefined {
    return this.marks.length > 1 ? this.marks : undefined;
  }
}
