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
export { addRecordings, type AddOptions, type WrittenEvent, type WrittenRecording } from './hand-written.ts';
export type { AwsCredentials } from './sigv4.ts';
// Other tools' recordings (HAR, VCR.py, nock, mock-server fixtures, talkback tapes) onto a tape: docs/migrate.md.
export type { ImportOptions, ImportReport } from './import.ts';
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
export type { SseEvent } from '../providers/sse-parse.ts';
export { assembleStream, parseSse } from './stream-text-api.ts';

// The command line and the importers are loaded when first called: a proxy embedded in a
// program (or a test worker) that only serves does not load their modules at start.

/**
 * Runs `tapedeck serve` until SIGINT or SIGTERM, then shuts down within a bound: in-flight
 * requests get `--shutdown-timeout` to finish (then their upstream calls are aborted and not
 * recorded), pending records are written, the tape is closed. Returns the exit code.
 *
 * @example
 * process.exitCode = await serveCommand(['--upstream', 'https://api.openai.com', '--tape', 'app.tape', '--mode', 'record'])
 */
export async function serveCommand(args: string[]): Promise<number> {
  return (await import('./cli.ts')).serveCommand(args);
}

/**
 * Imports a recording file (HAR, VCR.py / pytest-recording cassette, nock recorder output,
 * mock-server fixtures) onto a new tape that replays its answers: detected by name and shape,
 * or as `from` says. Nothing is written unless every entry imports (or `skipBad`).
 *
 * @example
 * const report = await importRecordings('recordings/session.har', 'tapes/app.tape')
 * console.log(`${report.records} records, ${report.masked} values masked`)
 */
export async function importRecordings(src: string, out: string, opts?: import('./import.ts').ImportOptions): Promise<import('./import.ts').ImportReport> {
  return (await import('./import.ts')).importRecordings(src, out, opts);
}
