/**
 * llm-tapedeck/proxy: record and replay LLM API calls over HTTP. `createHandler` is the proxy as a
 * node:http handler, `startProxy` runs it as a server (`tapedeck serve`), `createFetch` is the
 * same engine as a standard fetch for SDKs. docs/proxy.md has the details.
 *
 * @example
 * import OpenAI from 'openai'
 * import { createFetch } from 'llm-tapedeck/proxy'
 * const client = new OpenAI({ apiKey: 'sk-test', fetch: createFetch({ tape: 'chat.tape', mode: 'replay' }) })
 */
export { createHandler, type HandlerOptions, type HandlerStats, type ReplayTarget, type TapedeckHandler } from './handler.ts';
export { createFetch, type FetchOptions, type TapedeckFetch } from './fetch.ts';
export { installFetchSwitch, type FetchSwitch, type FetchSwitchOptions, type HostPattern } from './global-fetch.ts';
export { startProxy, type ProxyServer, type ServeOptions } from './server.ts';
export { serveCommand } from './cli.ts';
export { Deck, type DeckOptions, type DeckStats, type Timing, type MatchedBy } from './deck.ts';
export { isHttpRecord, responseChunks, type HttpRecord, type MatchKind, type StoredHeaders } from './record.ts';
export { assembleStream, parseSse, type SseEvent } from './sse-assemble.ts';
