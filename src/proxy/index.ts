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
export { makeLocalCertificate, tlsMaterial, type TlsMaterial } from './tls.ts';
export { serveCommand } from './cli.ts';
export { addRecordings, type WrittenEvent, type WrittenRecording } from './hand-written.ts';
// Other tools' recordings (HAR, VCR.py, nock, mock-server fixtures) onto a tape: docs/migrate.md.
export { importRecordings, type ImportOptions, type ImportReport } from './import.ts';
export type { ImportFormat } from '../store/import/read.ts';
export type { MatchFunction } from './deck-hooks.ts';
export type { HookEvent, HookRecording, HookRequest, HookResponse, RecordingHook, RecordingHooks } from '../store/hooks.ts';
export type { DeckOptions, DeckStats, Timing, MatchedBy } from './deck.ts';
export type { ChaosOptions, FaultName } from '../chaos/options.ts';
export { isHttpRecord, responseChunks, type HttpRecord, type MatchKind, type StoredHeaders } from '../store/records.ts';
// Built on the store, above it: the tape-backed replay store (`POST /v1/replay`) and the
// conversation tree of a tape file.
export { DurableReplayStore, openReplayStore, REPLAY_RECORD_KIND, type DurableReplayOptions, type ReplayTapeRecord } from '../replay/durable.ts';
export { loadTree, type LoadTreeOptions } from '../tree/load.ts';
export { assembleStream, parseSse, type SseEvent } from '../providers/sse-assemble.ts';
