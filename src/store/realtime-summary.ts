/**
 * What the realtime sessions on a tape hold, read from its records (docs/realtime.md): per
 * session its connect, frames each way, responses, token usage, audio each way (bytes and
 * seconds) and how it ended; and what the tape's audio costs on disk. `tapedeck inspect`,
 * `tapedeck stats` and `tapedeck diff` show these.
 */
import { realtimeProtocolFor } from '../providers/realtime.ts';
import { isRealtimeRecord, type RealtimeEnd, type RealtimeFrame, type RealtimeSessionRecord } from './records.ts';

/** One session as the tools show it. */
export interface RealtimeSessionSummary {
  sid: string;
  provider: string;
  url: string;
  recordedAt: string;
  clientFrames: number;
  serverFrames: number;
  /** Server frames that completed a response (`response.done`, `turnComplete`...). */
  responses: number;
  tokensIn: number;
  tokensOut: number;
  /** Audio the client sent and the server sent, in bytes and in seconds (PCM16 at the stream's rate; 24 kHz when it names none). */
  audioIn: { bytes: number; seconds: number };
  audioOut: { bytes: number; seconds: number };
  /** The text the server sent as transcript or text deltas, joined. */
  transcript: string;
  /** Tool calls the server made: name and arguments text. */
  toolCalls: { name: string; arguments: string }[];
  /** The server's events in order, by name (`response.done`, `serverContent`): the session's structure. */
  serverEvents: string[];
  /** Digests of the audio the server sent, in order. */
  audioOutDigests: string[];
  /** Token usage of each response, in order. */
  usage: { input: number; output: number }[];
  /** How it ended; absent when the recording stops mid-session (replayed as a cut). */
  end?: RealtimeEnd;
}

export interface RealtimeSummary {
  sessions: RealtimeSessionSummary[];
  /** Distinct audio stored (once per content) and its bytes on the tape. */
  blobs: number;
  blobBytes: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** PCM16 bytes per second of a stream or MIME type (`audio/pcm;rate=16000`), 24 kHz when not named. */
const bytesPerSecond = (name: string): number => 2 * Number(/rate=(\d+)/.exec(name)?.[1] ?? 24000);

/** Whether a server frame ends a response: OpenAI's response.done, Gemini's turn complete, interrupted, or a tool call. */
function isResponseEnd(msg: unknown): boolean {
  if (!isObject(msg)) return false;
  if (msg.type === 'response.done') return true;
  const sc = msg.serverContent;
  return 'toolCall' in msg || (isObject(sc) && (sc.turnComplete === true || sc.interrupted === true));
}

/** Text, tool calls and audio in one server frame, by what the frame says it is. */
function readServerFrame(msg: unknown, s: RealtimeSessionSummary, audioBytes: number): void {
  if (!isObject(msg)) return;
  const type = msg.type;
  if (typeof type === 'string') {
    // OpenAI Realtime, GA and beta names.
    // What the model said: its audio transcript, or its text when it answered in text.
    if ((type.endsWith('text.delta') || type.endsWith('audio_transcript.delta')) && typeof msg.delta === 'string') s.transcript += msg.delta;
    if (type === 'response.function_call_arguments.done') s.toolCalls.push({ name: String(msg.name ?? ''), arguments: String(msg.arguments ?? '') });
    if (type.endsWith('audio.delta')) s.audioOut.bytes += audioBytes;
    return;
  }
  // Gemini Live.
  const sc = msg.serverContent;
  if (isObject(sc) && isObject(sc.modelTurn) && Array.isArray(sc.modelTurn.parts)) {
    for (const p of sc.modelTurn.parts) if (isObject(p) && typeof p.text === 'string') s.transcript += p.text;
  }
  if (isObject(sc) && isObject(sc.outputTranscription) && typeof sc.outputTranscription.text === 'string') s.transcript += sc.outputTranscription.text;
  if (isObject(msg.toolCall) && Array.isArray(msg.toolCall.functionCalls)) {
    for (const f of msg.toolCall.functionCalls) if (isObject(f)) s.toolCalls.push({ name: String(f.name ?? ''), arguments: JSON.stringify(f.args ?? {}) });
  }
  s.audioOut.bytes += audioBytes;
}

/**
 * The realtime sessions in a tape's decoded records (other records are skipped).
 *
 * @example
 * summarizeRealtime((await readTape('voice.tape')).records.map((r) => r.value)).sessions[0].audioIn.seconds
 */
export function summarizeRealtime(values: readonly unknown[]): RealtimeSummary {
  const heads: RealtimeSessionRecord[] = [];
  const parts = new Map<string, { n: number; frames: RealtimeFrame[]; end?: RealtimeEnd }[]>();
  const blobSize = new Map<string, number>();
  for (const v of values) {
    if (!isRealtimeRecord(v)) continue;
    if (v.role === 'session') heads.push(v);
    else if (v.role === 'part') {
      const list = parts.get(v.sid) ?? [];
      list.push({ n: v.n, frames: v.frames, ...(v.end ? { end: v.end } : {}) });
      parts.set(v.sid, list);
    } else blobSize.set(v.key.slice('blob:'.length), v.data.length);
  }
  const sessions = heads.map((h): RealtimeSessionSummary => {
    const protocol = realtimeProtocolFor(new URL(h.url, 'http://x'));
    const s: RealtimeSessionSummary = { sid: h.sid, provider: h.provider, url: h.url, recordedAt: h.recordedAt, clientFrames: 0, serverFrames: 0, responses: 0, tokensIn: 0, tokensOut: 0, audioIn: { bytes: 0, seconds: 0 }, audioOut: { bytes: 0, seconds: 0 }, transcript: '', toolCalls: [], serverEvents: [], audioOutDigests: [], usage: [] };
    let outRate = 48000;
    const list = (parts.get(h.sid) ?? []).sort((a, b) => a.n - b.n);
    for (const p of list) {
      for (const f of p.frames) {
        if ('c' in f) {
          if ('audio' in f) {
            s.clientFrames += f.audio.chunks;
            s.audioIn.bytes += f.audio.bytes;
            s.audioIn.seconds += f.audio.bytes / bytesPerSecond(f.audio.stream);
          } else s.clientFrames++;
          continue;
        }
        s.serverFrames++;
        if (!('text' in f)) continue;
        let msg: unknown;
        try {
          msg = JSON.parse(f.text);
        } catch {
          continue;
        }
        const audioBytes = (f.blobs ?? []).reduce((n, d) => n + (blobSize.get(d) ?? 0), 0);
        for (const d of f.blobs ?? []) s.audioOutDigests.push(d);
        if (protocol) s.serverEvents.push(protocol.frameName(msg));
        const rate = /"mimeType":"audio\/pcm;rate=(\d+)"/.exec(f.text);
        if (rate) outRate = 2 * Number(rate[1]);
        readServerFrame(msg, s, audioBytes);
        if (isResponseEnd(msg)) s.responses++;
        const u = protocol?.usage(msg);
        s.tokensIn += u?.input ?? 0;
        s.tokensOut += u?.output ?? 0;
        if (u) s.usage.push({ input: u.input ?? 0, output: u.output ?? 0 });
      }
      if (p.end) s.end = p.end;
    }
    s.audioOut.seconds = s.audioOut.bytes / outRate;
    return s;
  });
  let blobBytes = 0;
  for (const b of blobSize.values()) blobBytes += b;
  return { sessions, blobs: blobSize.size, blobBytes };
}
