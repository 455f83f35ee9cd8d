/**
 * What `tapedeck diff` compares of a realtime session's server frames, with the deltas of each
 * stream joined. A realtime server splits its text, transcript, tool arguments and audio into
 * deltas by time and network, differently on every run: the same answer comes as 14 deltas once
 * and 9 the next, and its audio deltas interleave with its transcript deltas in another order.
 * So each stream (OpenAI: one delta event type of one item, content part and output; Gemini
 * Live: the model's text parts, audio parts, output or input transcription of one turn) counts
 * as one event, at its first delta; the streams that start between the same two other events
 * are taken in name order, whatever order their first deltas came in; and its text and its audio
 * bytes are read joined.
 */
import { createHash, type Hash } from 'node:crypto';
import { realtimeProtocolFor, type RealtimeProtocol } from '../providers/realtime.ts';
import { isRealtimeRecord, type RealtimeFrame, type RealtimeSessionRecord } from '../store/records.ts';

/** A session's server frames as the diff compares them. */
export interface SessionStreams {
  /** The server's events in order by name, each stream once (`response.output_text.delta`, `serverContent.outputTranscription`). */
  events: string[];
  /** What the model said (text and transcript streams), each stream joined, one line each. */
  transcript: string;
  /** Each audio stream's bytes joined, as a SHA-256 (hex), in order. */
  audio: string[];
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The way audio is written in a stored server frame (docs/realtime.md, "What is stored"). */
const BLOB_REF = 'tapedeck-blob:';

/** One delta of a frame: the stream it belongs to, and its text or audio. */
interface Delta {
  /** The stream's name, shown as its event. */
  name: string;
  /** Tells streams of one name apart within a session (item, content part, turn). */
  key: string;
  text?: string;
  /** Base64 audio, or a `tapedeck-blob:` reference to stored bytes. */
  audio?: string;
  /** Whether the text is what the model said (text or transcript of its answer). */
  said: boolean;
}

/** A frame read: its deltas, and its name when it is an event of its own (more than deltas). */
interface FrameRead {
  deltas: Delta[];
  event?: string;
}

function readOpenAI(msg: Record<string, unknown>, type: string, protocol: RealtimeProtocol): FrameRead {
  if (!type.endsWith('.delta')) return { deltas: [], event: type };
  // Ids are the server's and differ every run: they only tell one stream from another here.
  const key = [type, msg.response_id, msg.item_id, msg.output_index, msg.content_index, msg.call_id].map((v) => String(v ?? '')).join('|');
  const said = type.endsWith('text.delta') || type.endsWith('audio_transcript.delta');
  const audio = protocol.serverAudio(msg);
  if (audio.length) return { deltas: audio.map((a) => ({ name: type, key, audio: a, said: false })) };
  return { deltas: [{ name: type, key, text: typeof msg.delta === 'string' ? msg.delta : JSON.stringify(msg.delta ?? null), said }] };
}

/** Members of a Gemini frame that may ride with deltas without making it an event of its own. */
const GEMINI_DELTA_MEMBERS = new Set(['modelTurn', 'outputTranscription', 'inputTranscription']);

function readGemini(msg: Record<string, unknown>, turn: number, protocol: RealtimeProtocol): FrameRead {
  const deltas: Delta[] = [];
  const sc = msg.serverContent;
  // Anything beside the model's parts and the transcriptions (a turn or generation complete,
  // an interruption, grounding, a tool call) makes the frame an event as well.
  let more = Object.keys(msg).some((k) => k !== 'serverContent' && k !== 'usageMetadata') || !isObject(sc);
  const add = (name: string, d: Omit<Delta, 'name' | 'key'>) => deltas.push({ name: `serverContent.${name}`, key: `${name}|${turn}`, ...d });
  if (isObject(sc)) {
    if (Object.keys(sc).some((k) => !GEMINI_DELTA_MEMBERS.has(k))) more = true;
    const mt = sc.modelTurn;
    if (isObject(mt)) {
      for (const p of Array.isArray(mt.parts) ? mt.parts : []) {
        if (isObject(p) && typeof p.text === 'string' && Object.keys(p).every((k) => k === 'text' || k === 'thought')) add('modelTurn.text', { text: p.text, said: true });
        else if (isObject(p) && isObject(p.inlineData) && typeof p.inlineData.data === 'string' && Object.keys(p).length === 1) add('modelTurn.inlineData', { audio: p.inlineData.data, said: false });
        else more = true;
      }
      if (Object.keys(mt).some((k) => k !== 'parts' && k !== 'role')) more = true;
    }
    if (isObject(sc.outputTranscription) && typeof sc.outputTranscription.text === 'string') add('outputTranscription', { text: sc.outputTranscription.text, said: true });
    if (isObject(sc.inputTranscription) && typeof sc.inputTranscription.text === 'string') add('inputTranscription', { text: sc.inputTranscription.text, said: false });
  }
  return more || deltas.length === 0 ? { deltas, event: protocol.frameName(msg) } : { deltas };
}

/** A stream being joined. */
interface Stream {
  name: string;
  said: boolean;
  text: string;
  hash?: Hash;
}

/** An event of the session: a frame of its own, or a stream at its first delta. */
type Entry = { event: string } | { stream: Stream };

/**
 * The server frames of each realtime session in a tape's decoded records, by session id, with
 * the deltas of each stream joined (the module comment says how).
 *
 * @example
 * const s = sessionStreams((await readTape('voice.tape')).records.map((r) => r.value))
 * s.get(sid)?.events // ['session.created', 'response.created', 'response.output_item.added', 'response.output_audio.delta', 'response.output_audio_transcript.delta', ...]
 */
export function sessionStreams(values: readonly unknown[]): Map<string, SessionStreams> {
  const heads: RealtimeSessionRecord[] = [];
  const parts = new Map<string, { n: number; frames: RealtimeFrame[] }[]>();
  const blobs = new Map<string, Uint8Array>();
  for (const v of values) {
    if (!isRealtimeRecord(v)) continue;
    if (v.role === 'session') heads.push(v);
    else if (v.role === 'part') {
      const list = parts.get(v.sid) ?? [];
      list.push({ n: v.n, frames: v.frames });
      parts.set(v.sid, list);
    }
    else blobs.set(v.key.slice('blob:'.length), v.data);
  }
  // Audio joined: the stored bytes of a reference (the reference itself when its blob is lost).
  const feed = (h: Hash, audio: string) => {
    if (!audio.startsWith(BLOB_REF)) h.update(Buffer.from(audio, 'base64'));
    else h.update(blobs.get(audio.slice(BLOB_REF.length)) ?? audio);
  };
  const out = new Map<string, SessionStreams>();
  for (const h of heads) {
    const protocol = realtimeProtocolFor(new URL(h.url, 'http://x'));
    const entries: Entry[] = [];
    const open = new Map<string, Stream>();
    const join = (d: Delta) => {
      let s = open.get(d.key);
      if (!s) {
        s = { name: d.name, said: d.said, text: '' };
        open.set(d.key, s);
        entries.push({ stream: s });
      }
      if (d.text !== undefined) s.text += d.text;
      if (d.audio !== undefined) feed((s.hash ??= createHash('sha256')), d.audio);
    };
    let turn = 0;
    const frames = (parts.get(h.sid) ?? []).sort((a, b) => a.n - b.n).flatMap((p) => p.frames);
    for (const f of frames) {
      if ('c' in f) continue;
      if (!('text' in f)) {
        // A binary server frame that is not JSON: bytes of one stream (audio, on the wire as is).
        join({ name: 'binary', key: `binary|${turn}`, audio: `${BLOB_REF}${f.blob}`, said: false });
        continue;
      }
      let msg: unknown;
      try {
        msg = JSON.parse(f.text);
      } catch {
        continue;
      }
      if (!protocol || !isObject(msg)) continue;
      const read = typeof msg.type === 'string' ? readOpenAI(msg, msg.type, protocol) : readGemini(msg, turn, protocol);
      for (const d of read.deltas) join(d);
      if (read.event !== undefined) entries.push({ event: read.event });
      if (protocol.completes(msg)) turn++;
    }
    out.set(h.sid, summarize(entries));
  }
  return out;
}

/** The entries as compared: streams that start between the same two events in name order. */
function summarize(entries: Entry[]): SessionStreams {
  const ordered: Entry[] = [];
  let run: Stream[] = [];
  const flush = () => {
    ordered.push(...run.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((stream) => ({ stream })));
    run = [];
  };
  for (const e of entries) {
    if ('stream' in e) run.push(e.stream);
    else {
      flush();
      ordered.push(e);
    }
  }
  flush();
  const streams = ordered.flatMap((e) => ('stream' in e ? [e.stream] : []));
  return {
    events: ordered.map((e) => ('stream' in e ? e.stream.name : e.event)),
    transcript: streams.filter((s) => s.said).map((s) => s.text).join('\n'),
    audio: streams.flatMap((s) => (s.hash ? [s.hash.digest('hex')] : [])),
  };
}
