/**
 * Browser bundles' stand-in for ./upstream.ts (package.json "browser"). A page only passes
 * requests through (createReplayFetch in passthrough mode; it never records), so its link to the
 * live API is the page's own fetch: no undici dispatcher and connect timeout, no idle timer (the
 * page's options have no timeouts; the caller's AbortSignal bounds a call), and redirects are
 * followed, as a page's fetch does (a manual redirect is opaque to a page). Node's link is ~2 KB
 * of the 100 KB gzipped budget.
 */
import { TapedeckError } from '../errors.ts';
import type { DeckRequest } from './deck.ts';
import { forwardHeaders } from './fetch-headers.ts';
import type { UpstreamTimeouts } from './timeouts.ts';

/** One passed-through call: the answer once its headers came. */
interface PageCall {
  readonly response: Promise<Response>;
  detachClient(): void;
}

/**
 * A page's way to the live API: its fetch, and the calls in flight, so closing the replay fetch
 * ends them (E_PROXY_CLOSED) as it does in Node.
 *
 * @example
 * const link = new UpstreamLink(undefined, {}, 'fetch')
 * const answer = await link.start('https://api.openai.com/v1/models', { method: 'GET', url: '/v1/models', headers: {}, body: new Uint8Array(0) }).response
 */
export class UpstreamLink {
  private readonly fetchImpl: typeof fetch;
  private readonly calls = new Set<(message: string) => void>();
  private closedMessage: string | undefined;

  constructor(fetchImpl: typeof fetch | undefined, _opts: UpstreamTimeouts, _surface?: string) {
    this.fetchImpl = fetchImpl ?? globalThis.fetch.bind(globalThis);
  }

  /** Starts a call; `client`'s abort rejects it with the signal's reason, as fetch does. */
  start(url: string, req: DeckRequest, client?: AbortSignal): PageCall {
    const method = req.method.toUpperCase();
    const stop = new AbortController();
    let closed: TapedeckError | undefined;
    const end = (message: string) => {
      closed = new TapedeckError('E_PROXY_CLOSED', message, { hint: 'Wait for the answers before closing the fetch.' });
      stop.abort(closed);
    };
    this.calls.add(end);
    const signal = client ? AbortSignal.any([client, stop.signal]) : stop.signal;
    const response = this.fetchImpl(url, {
      method,
      headers: forwardHeaders(req.headers),
      body: method !== 'GET' && method !== 'HEAD' && req.body.length > 0 ? req.body : undefined,
      signal,
    }).then(
      (r) => {
        this.calls.delete(end);
        return r;
      },
      (e: unknown) => {
        this.calls.delete(end);
        if (closed) throw closed;
        if (client?.aborted) throw client.reason;
        throw unreachable(url, e);
      },
    );
    response.catch(() => {});
    return { response, detachClient() {} };
  }

  /** Ends the calls still waiting for their answer's headers with E_PROXY_CLOSED and `message`. */
  shutdown(message: string): void {
    this.closedMessage = message;
    for (const end of [...this.calls]) end(message);
  }

  /** Ends what is left. */
  async close(): Promise<void> {
    this.shutdown(this.closedMessage ?? 'tapedeck was closed before the upstream answered.');
  }
}

/** A failed page fetch as E_UPSTREAM (502), naming the origin only (a query may carry keys). */
function unreachable(url: string, e: unknown): TapedeckError {
  const why = e instanceof Error ? e.message : String(e);
  let origin = url;
  try {
    origin = new URL(url).origin;
  } catch {
    // keep the URL as given
  }
  return new TapedeckError('E_UPSTREAM', `Upstream ${origin} is unreachable (${why}).`, {
    upstream: origin,
    cause: why,
    hint: "Check the network and the client's base URL, or replay from the tape (createReplayFetch mode 'replay').",
  });
}

/** A page's replay sends a stream's headers at once, whatever `timing` says (see ./upstream.ts). */
export function headersWait(_rec: unknown): undefined {
  return undefined;
}
