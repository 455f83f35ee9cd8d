/**
 * What a provider's realtime protocol (a session over WebSocket) looks like, as the shared
 * session engine in src/realtime/ asks it: which connects are its, which parts of a connect and
 * of a client frame decide the answer, where audio sits in a frame, which server frames complete
 * a response, and what a miss looks like in its own shape. Each provider's knowledge lives in
 * its own module (openai-realtime.ts, gemini-live.ts); this file only lists them.
 */
import { geminiLive } from './gemini-live.ts';
import { openaiRealtime } from './openai-realtime.ts';

/** Request headers as node:http gives them. */
export type UpgradeHeaders = Record<string, string | string[] | undefined>;

/** What the client must see for a miss: frames to send, then a close. */
export interface RealtimeMissAnswer {
  frames: string[];
  close: { code: number; reason: string };
}

export interface RealtimeProtocol {
  /** Provider id as stored with the session: 'openai', 'azure', 'gemini', 'vertex'. */
  readonly provider: string;
  /** Whether this connect (path, query) is one of this protocol's. */
  matches(url: URL): boolean;
  /**
   * What decides how the session answers, from the connect: route, model or deployment, the
   * headers that select a protocol version. Never a credential. The engine hashes it.
   */
  openKey(url: URL, headers: UpgradeHeaders, protocols: readonly string[]): unknown;
  /**
   * Whether the first client frame says how the session answers where the connect does not
   * (Gemini's `setup` names the model; nothing comes from the server before it): replay then
   * chooses among the connect's sessions by that frame, not by order alone.
   */
  readonly firstFrameChooses?: boolean;
  /** Query parameters that are credentials (left out of the stored URL and the key). */
  readonly secretQuery: readonly string[];
  /** Whether a subprotocol carries a credential (left out of what is stored and keyed). */
  secretProtocol(p: string): boolean;
  /**
   * Audio a client frame appends to the input buffer: its stream (frames of one stream form a
   * run keyed by the bytes it adds up to) and the base64 text.
   */
  clientAudio(msg: unknown): { stream: string; base64: string } | undefined;
  /**
   * The value that keys a client frame: volatile members left out, ids the client made up
   * renumbered by first use through `id`. Must not change `msg`.
   */
  frameKey(msg: unknown, id: (raw: string) => string): unknown;
  /** Base64 audio strings in a server frame (stored once per content, by digest). */
  serverAudio(msg: unknown): string[];
  /**
   * Whether a server frame completes a response (or tells the client something it acts on as
   * final: the session opened, an error, a tool call): it is stored before it is forwarded.
   */
  completes(msg: unknown): boolean;
  /**
   * Whether a server frame is one the server sends on connect whatever the client sends (OpenAI:
   * `session.created`): the session's opening, also where a client that spoke at once got its
   * first frame to the proxy before it. Absent: the server says nothing before the client.
   */
  opensSession?(msg: unknown): boolean;
  /** A short name for a frame in messages (`response.create`, `clientContent`). */
  frameName(msg: unknown): string;
  /** The miss, in the provider's shape; `message` says what differs and how to re-record. */
  miss(message: string, clientFrame?: unknown): RealtimeMissAnswer;
  /** Token usage and audio a completed response reports, for stats. */
  usage(msg: unknown): { input?: number; output?: number } | undefined;
}

/** Every realtime protocol tapedeck knows, most specific first. */
export const REALTIME_PROTOCOLS: readonly RealtimeProtocol[] = [...openaiRealtime, ...geminiLive];

/**
 * The protocol of a connect, or undefined when no provider speaks realtime on that path.
 *
 * @example
 * realtimeProtocolFor(new URL('wss://x/v1/realtime?model=gpt-realtime'))?.provider // 'openai'
 */
export function realtimeProtocolFor(url: URL): RealtimeProtocol | undefined {
  return REALTIME_PROTOCOLS.find((p) => p.matches(url));
}

/** Cuts a close reason to the 123 bytes a close frame may carry. */
export function closeReason(text: string): string {
  const b = Buffer.from(text);
  if (b.length <= 123) return text;
  let s = b.subarray(0, 120).toString();
  // A character cut in two decodes as U+FFFD: drop it.
  s = s.replace(/\uFFFD$/, '');
  return `${s}...`;
}
