/**
 * Gemini Live over WebSocket: the Gemini API's
 * `/ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent` (and
 * `BidiGenerateContentConstrained`, reached with an ephemeral token as `?access_token=`), and
 * Vertex AI's `/ws/google.cloud.aiplatform.<version>.LlmBidiService/BidiGenerateContent`.
 * Messages are JSON objects named by their one member (`setup`, `clientContent`,
 * `realtimeInput`, `toolResponse`; `setupComplete`, `serverContent`, `toolCall`, ...); the
 * server sends them in binary frames. The first client message (`setup`) chooses the model, so
 * nothing is sent before it.
 */
import type { RealtimeProtocol } from './realtime.ts';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A copy with ids the server made renumbered by first use: a tool response's call `id`, and the
 * `handle` a client resumes a session with (`setup.sessionResumption.handle`).
 */
function keyed(v: unknown, id: (raw: string) => string): unknown {
  if (Array.isArray(v)) return v.map((x) => keyed(x, id));
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = (k === 'id' || k === 'handle') && typeof x === 'string' ? id(x) : keyed(x, id);
  return out;
}

const audioChunk = (v: unknown): { data: string; mimeType: string } | undefined =>
  isObject(v) && typeof v.data === 'string' && typeof v.mimeType === 'string' && v.mimeType.startsWith('audio/') ? { data: v.data, mimeType: v.mimeType } : undefined;

function protocol(provider: 'gemini' | 'vertex', matches: (url: URL) => boolean): RealtimeProtocol {
  const secretQuery = ['key', 'access_token'];
  return {
    provider,
    matches,
    firstFrameChooses: true,
    secretQuery,
    secretProtocol: () => false,
    openKey: (url) => ({ provider, path: url.pathname }),
    clientAudio(msg) {
      if (!isObject(msg) || !isObject(msg.realtimeInput)) return undefined;
      const ri = msg.realtimeInput;
      const one = audioChunk(ri.audio) ?? (Array.isArray(ri.mediaChunks) && ri.mediaChunks.length === 1 ? audioChunk(ri.mediaChunks[0]) : undefined);
      // Only a frame that is nothing but audio joins a run; anything else beside it is keyed whole.
      if (!one || Object.keys(ri).length !== 1) return undefined;
      return { stream: `realtimeInput ${one.mimeType}`, base64: one.data };
    },
    frameKey: keyed,
    serverAudio(msg) {
      if (!isObject(msg) || !isObject(msg.serverContent) || !isObject(msg.serverContent.modelTurn)) return [];
      const parts = msg.serverContent.modelTurn.parts;
      if (!Array.isArray(parts)) return [];
      const out: string[] = [];
      for (const p of parts) {
        const a = isObject(p) ? audioChunk(p.inlineData) : undefined;
        if (a) out.push(a.data);
      }
      return out;
    },
    completes(msg) {
      if (!isObject(msg)) return false;
      if ('setupComplete' in msg || 'toolCall' in msg || 'goAway' in msg) return true;
      const sc = msg.serverContent;
      return isObject(sc) && (sc.turnComplete === true || sc.interrupted === true);
    },
    frameName: (msg) => (isObject(msg) ? (Object.keys(msg)[0] ?? 'message') : 'frame'),
    // Gemini Live tells a client what it did wrong by closing with a code and a reason.
    miss: (message) => ({ frames: [], close: { code: 1008, reason: message } }),
    usage(msg) {
      if (!isObject(msg) || !isObject(msg.usageMetadata)) return undefined;
      const u = msg.usageMetadata;
      const output = typeof u.responseTokenCount === 'number' ? u.responseTokenCount : typeof u.candidatesTokenCount === 'number' ? u.candidatesTokenCount : undefined;
      return { input: typeof u.promptTokenCount === 'number' ? u.promptTokenCount : undefined, output };
    },
  };
}

export const geminiLive: readonly RealtimeProtocol[] = [
  protocol('gemini', (u) => /GenerativeService\.BidiGenerateContent(Constrained)?$/.test(u.pathname)),
  protocol('vertex', (u) => /LlmBidiService\/BidiGenerateContent$/.test(u.pathname)),
];
