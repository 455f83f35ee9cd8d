/**
 * llm-tapedeck/browser: recorded LLM answers in a page. Load a tape recorded in Node (the binary
 * .tape or its exported JSON) and replay it through a `fetch` for browser SDKs, or from a
 * service worker for pages that call `fetch` themselves. Requests are keyed and matched by the
 * same code as in Node (the WebAssembly core, the matcher, the miss diagnostics), so a request
 * replays in the page exactly when it replays in Node. docs/browser.md has the guide.
 *
 * @example
 * import OpenAI from 'openai'
 * import { loadTape, createReplayFetch } from 'llm-tapedeck/browser'
 * const fetch = createReplayFetch({ tape: await loadTape('/tapes/chat.tape') })
 * const client = new OpenAI({ apiKey: 'replay', dangerouslyAllowBrowser: true, fetch })
 */
export {
  backend,
  canonicalize,
  canonicalizeJSON,
  hashJSON,
  hashValue,
  pathHashes,
  setBackend,
  sha256,
  type BackendName,
  type CanonicalOptions,
} from '../core/index.ts';
export { TapedeckError, type TapedeckErrorCode, type TapedeckErrorDetails } from '../errors.ts';
export { normalizeRequest, requestKeys, type RequestKeys, type MatchMode } from '../match/index.ts';
export { VERSION } from '../version.ts';
export type { Timing } from '../proxy/deck.ts';
export type { TapedeckFetch } from '../proxy/fetch.ts';
export { createReplayFetch, type ReplayFetchOptions } from './fetch.ts';
export { loadTape, type LoadedTape } from './load.ts';
export { replayInServiceWorker, type ServiceWorkerReplayOptions } from './service-worker.ts';
export type { ByteSource } from './source.ts';
export { loadWasmBuild } from './wasm.ts';
