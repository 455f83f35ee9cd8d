/**
 * Realtime sessions over WebSocket (OpenAI Realtime, Azure OpenAI realtime, Gemini Live,
 * Vertex AI Live) recorded and replayed frame by frame, on the same tape as HTTP
 * (docs/realtime.md). `tapedeck serve` takes them on its port; this entry is for mounting the
 * same engine in a server of one's own.
 *
 * @example
 * import { RealtimeEndpoint } from 'llm-tapedeck/realtime'
 * const rt = new RealtimeEndpoint({ tape: 'tapes/voice.tape', mode: 'replay' })
 * server.on('upgrade', (req, socket, head) => rt.upgrade(req, socket, head) || socket.destroy())
 */
export { RealtimeEndpoint, isRealtimeUpgrade, type RealtimeEndpointOptions, type RealtimeStats } from './endpoint.ts';
export { RealtimeTape, blobDigest, REALTIME_KEY_VERSION, type RealtimeTapeOptions, type LoadedSession, type RealtimeMiss, type RealtimeTiming } from './tape.ts';
export { isRealtimeRecord, REALTIME_RECORD_KIND, type RealtimeRecord, type RealtimeFrame, type RealtimeEnd } from '../store/records.ts';
