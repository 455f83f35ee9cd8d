/**
 * Service-worker mode: a worker answers the page's requests from a tape, so a page that calls
 * `fetch` itself (no SDK option to pass a fetch) needs no change. The worker runs the same
 * createReplayFetch as a page would.
 */
import { TapedeckError } from '../errors.ts';
import type { TapedeckFetch } from '../proxy/fetch.ts';
import { createReplayFetch, type ReplayFetchOptions } from './fetch.ts';
import { loadTape, type LoadedTape } from './load.ts';
import { checkOptionsObject, loadedTapeOption } from './tape-option.ts';

/** The parts of a service worker's global scope used here (no DOM library types needed). */
interface WorkerScope {
  location: { href: string };
  addEventListener(type: 'install' | 'activate', fn: (e: { waitUntil(p: Promise<unknown>): void }) => void): void;
  addEventListener(type: 'fetch', fn: (e: { request: Request; respondWith(r: Promise<Response>): void }) => void): void;
  skipWaiting(): Promise<void>;
  clients: { claim(): Promise<void> };
}

export interface ServiceWorkerReplayOptions extends Omit<ReplayFetchOptions, 'tape'> {
  /** The tape: a URL (relative to the worker script) or a tape from loadTape(). */
  tape: string | URL | LoadedTape;
  /**
   * Which requests the tape answers: URL prefixes, regular expressions, or a function. Default:
   * the OpenAI and Anthropic APIs. Other requests go to the network untouched.
   */
  urls?: readonly (string | RegExp)[] | ((request: Request) => boolean);
}

const DEFAULT_URLS = ['https://api.openai.com/', 'https://api.anthropic.com/'];

/**
 * Call at the top level of a service worker script. It loads the tape while the worker installs,
 * takes control of open pages at once, and answers the matching requests from the tape.
 *
 * @example
 * // sw.js (bundled), registered by the page with navigator.serviceWorker.register('/sw.js', { type: 'module' })
 * import { replayInServiceWorker } from 'llm-tapedeck/browser'
 * replayInServiceWorker({ tape: '/tapes/chat.tape', urls: ['https://api.openai.com/'] })
 */
export function replayInServiceWorker(opts: ServiceWorkerReplayOptions): { ready: Promise<TapedeckFetch> } {
  const scope = globalThis as unknown as WorkerScope;
  if (typeof scope.skipWaiting !== 'function' || typeof scope.clients !== 'object') {
    throw new TapedeckError('E_ARG', 'replayInServiceWorker must run in a service worker script.', {
      hint: 'Call it from the script given to navigator.serviceWorker.register(); in a page, use createReplayFetch.',
    });
  }
  checkOptionsObject(opts, 'replayInServiceWorker');
  const { tape, urls = DEFAULT_URLS, ...rest } = opts;
  // A URL is loaded while the worker installs; anything else is checked now, so a wrong tape
  // fails the call in the worker script rather than its installation.
  const given = typeof tape === 'string' || tape instanceof URL ? tape : loadedTapeOption(tape, 'replayInServiceWorker');
  const ready = (async () => {
    const loaded = typeof given === 'string' || given instanceof URL ? await loadTape(new URL(String(given), scope.location.href)) : given;
    return createReplayFetch({ ...rest, tape: loaded });
  })();
  ready.catch(() => {});
  const handles =
    typeof urls === 'function'
      ? urls
      : (req: Request) => urls.some((u) => (typeof u === 'string' ? req.url.startsWith(u) : u.test(req.url)));
  scope.addEventListener('install', (e) => e.waitUntil(ready.then(() => scope.skipWaiting())));
  scope.addEventListener('activate', (e) => e.waitUntil(scope.clients.claim()));
  // Registered synchronously, as service workers require; requests that arrive before the tape
  // is loaded wait for it.
  scope.addEventListener('fetch', (e) => {
    if (!handles(e.request)) return;
    e.respondWith(ready.then((f) => f(e.request)));
  });
  return { ready };
}
