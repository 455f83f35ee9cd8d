/**
 * Service-worker mode: a worker answers the page's requests from a tape, so a page that calls
 * `fetch` itself (no SDK option to pass a fetch) needs no change. The worker runs the same
 * replay fetch as createReplayFetch, one for each page (client) it answers.
 */
import { TapedeckError } from '../errors.ts';
import type { TapedeckFetch } from '../proxy/fetch.ts';
import { REPLAY_FETCH_OPTIONS, replayFetch, type ReplayFetchOptions } from './fetch.ts';
import { loadTape, type LoadedTape } from './load.ts';
import { checkOptions, checkOptionsObject, loadedTapeOption } from './tape-option.ts';

/** The parts of a service worker's global scope used here (no DOM library types needed). */
interface WorkerScope {
  location: { href: string };
  addEventListener(type: 'install' | 'activate', fn: (e: { waitUntil(p: Promise<unknown>): void }) => void): void;
  addEventListener(type: 'fetch', fn: (e: { request: Request; clientId: string; respondWith(r: Promise<Response>): void }) => void): void;
  skipWaiting(): Promise<void>;
  clients: { claim(): Promise<void>; get(id: string): Promise<unknown> };
}

/**
 * Options of replayInServiceWorker: createReplayFetch's, with the tape as a URL, and which
 * requests the worker answers.
 */
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
 * takes control of open pages at once, and answers the matching requests from the tape. Each
 * page (each load of it: a service worker client) replays from the first recording, as a page
 * with its own createReplayFetch would. A wrong option throws here, when the script runs; a tape
 * that cannot be loaded is the error answer of every request the worker covers. `ready` is the
 * tape, once loaded.
 *
 * @example
 * // sw.js (bundled), registered by the page with navigator.serviceWorker.register('/sw.js', { type: 'module' })
 * import { replayInServiceWorker } from 'llm-tapedeck/browser'
 * replayInServiceWorker({ tape: '/tapes/chat.tape', urls: ['https://api.openai.com/'] })
 */
export function replayInServiceWorker(opts: ServiceWorkerReplayOptions): { ready: Promise<LoadedTape> } {
  const scope = globalThis as unknown as WorkerScope;
  if (typeof scope.skipWaiting !== 'function' || typeof scope.clients !== 'object') {
    throw new TapedeckError('E_ARG', 'replayInServiceWorker must run in a service worker script.', {
      hint: 'Call it from the script given to navigator.serviceWorker.register(); in a page, use createReplayFetch.',
    });
  }
  checkOptionsObject(opts, 'replayInServiceWorker');
  // Now, as the script runs: a wrong option then fails the registration. Found later, while the
  // worker installed, it only made the worker redundant, and the page waited for it forever.
  checkOptions(opts, 'replayInServiceWorker', [...REPLAY_FETCH_OPTIONS, 'urls']);
  const { tape, urls = DEFAULT_URLS, ...rest } = opts;
  const url = typeof tape === 'string' || tape instanceof URL ? new URL(String(tape), scope.location.href) : undefined;
  const given = url ?? loadedTapeOption(tape, 'replayInServiceWorker');
  const ready = given instanceof URL ? loadTape(given) : Promise.resolve(given);
  // A tape that cannot be loaded does not stop the worker: every request it covers is answered
  // with the error (an HTTP error the SDK raises, naming the tape's URL and status), so the page
  // learns it instead of waiting for a worker that never installs.
  ready.catch(() => {});
  const make = () => replayFetch(rest, ready, String(url ?? (given as LoadedTape).name));
  // Made now, so that an option's value is refused as the script runs; the first page takes it.
  let spare: TapedeckFetch | undefined = make();
  // One replay fetch per client (a page load; a navigation makes a new one), so each replays
  // from the first recording whatever others asked before: the worker outlives page loads. They
  // share the tape, parsed once; the fetch of a client that is gone is dropped when a new one
  // comes, so the worker keeps one for each open page.
  const byClient = new Map<string, TapedeckFetch>();
  const handles =
    typeof urls === 'function'
      ? urls
      : (req: Request) => urls.some((u) => (typeof u === 'string' ? req.url.startsWith(u) : u.test(req.url)));
  const go = () => scope.skipWaiting();
  scope.addEventListener('install', (e) => e.waitUntil(ready.then(go, go)));
  scope.addEventListener('activate', (e) => e.waitUntil(scope.clients.claim()));
  // Registered synchronously, as service workers require; requests that arrive before the tape
  // is loaded wait for it.
  scope.addEventListener('fetch', (e) => {
    if (!handles(e.request)) return;
    let f = byClient.get(e.clientId);
    if (!f) {
      for (const id of byClient.keys()) void scope.clients.get(id).then((c) => c || byClient.delete(id));
      byClient.set(e.clientId, (f = spare ?? make()));
      spare = undefined;
    }
    e.respondWith(f(e.request));
  });
  return { ready };
}
