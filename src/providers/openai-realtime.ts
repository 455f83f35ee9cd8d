/**
 * OpenAI Realtime over WebSocket (and Azure OpenAI's realtime routes, which speak the same
 * events): `GET /v1/realtime?model=...` (or `?call_id=...`, the sideband connection to a call),
 * `/openai/realtime?deployment=...&api-version=...` and `/openai/v1/realtime`. Client events
 * and server events are JSON text frames with a `type`; the GA names
 * (`response.output_text.delta`) and the beta ones (`response.text.delta`) are both recorded as
 * they come.
 */
import type { RealtimeProtocol, UpgradeHeaders } from './realtime.ts';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Members holding an id of an item or a call: renumbered by first use in a session's keys. */
const ID_MEMBERS = new Set(['id', 'item_id', 'previous_item_id', 'call_id']);
/**
 * Members that change every run without changing the answer: the client's own event id, and
 * where the listener stopped playback when it interrupted (a time, not a choice).
 */
const VOLATILE = new Set(['event_id', 'audio_end_ms']);

/** Events whose audio is base64 in `delta`. */
const AUDIO_DELTAS = new Set(['response.output_audio.delta', 'response.audio.delta']);
/**
 * Server events the client treats as final: the session as it opened or changed, a response
 * done, an error. Each is on the tape before the client gets it.
 */
const COMPLETES = new Set(['session.created', 'session.updated', 'transcription_session.created', 'transcription_session.updated', 'response.done', 'error']);

/** A copy without volatile members, ids renumbered. */
function keyed(v: unknown, id: (raw: string) => string): unknown {
  if (Array.isArray(v)) return v.map((x) => keyed(x, id));
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (VOLATILE.has(k)) continue;
    out[k] = ID_MEMBERS.has(k) && typeof x === 'string' ? id(x) : keyed(x, id);
  }
  return out;
}

const headerOf = (h: UpgradeHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

function protocol(provider: 'openai' | 'azure', matches: (url: URL) => boolean): RealtimeProtocol {
  const secretQuery = ['api-key', 'key', 'access_token'];
  return {
    provider,
    matches,
    secretQuery,
    // The browser client sends its key as a subprotocol: `openai-insecure-api-key.<key>`.
    secretProtocol: (p) => p.startsWith('openai-insecure-api-key.') || p.startsWith('openai-organization.') || p.startsWith('openai-project.'),
    openKey(url, headers, protocols) {
      // `call_id` (the sideband connection to a call) is made by the server for each call: a
      // session id, never what decides the answers; such sessions replay in connect order.
      const query = [...url.searchParams].filter(([k]) => !secretQuery.includes(k.toLowerCase()) && k !== 'call_id').sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      // `OpenAI-Beta: realtime=v1` (or its subprotocol) selects the beta event names.
      const beta = headerOf(headers, 'openai-beta');
      return { provider, path: url.pathname.replace(/\/+$/, ''), query, protocols: [...protocols].sort(), ...(beta ? { beta } : {}) };
    },
    clientAudio(msg) {
      if (isObject(msg) && msg.type === 'input_audio_buffer.append' && typeof msg.audio === 'string') return { stream: 'input_audio_buffer', base64: msg.audio };
      return undefined;
    },
    frameKey: keyed,
    serverAudio(msg) {
      return isObject(msg) && AUDIO_DELTAS.has(msg.type as string) && typeof msg.delta === 'string' ? [msg.delta] : [];
    },
    completes: (msg) => isObject(msg) && COMPLETES.has(msg.type as string),
    opensSession: (msg) => isObject(msg) && (msg.type === 'session.created' || msg.type === 'transcription_session.created'),
    frameName: (msg) => (isObject(msg) && typeof msg.type === 'string' ? msg.type : 'frame'),
    miss(message, clientFrame) {
      const clientEvent = isObject(clientFrame) && typeof clientFrame.event_id === 'string' ? clientFrame.event_id : null;
      // The `error` event the API sends for a bad client event; the SDKs raise it as their error.
      const error = {
        type: 'error',
        event_id: `event_tapedeck_miss_${Date.now().toString(36)}`,
        error: { type: 'invalid_request_error', code: 'tapedeck_miss', message, param: null, event_id: clientEvent },
      };
      return { frames: [JSON.stringify(error)], close: { code: 1008, reason: 'tapedeck miss: see the error event' } };
    },
    usage(msg) {
      if (!isObject(msg) || msg.type !== 'response.done' || !isObject(msg.response) || !isObject(msg.response.usage)) return undefined;
      const u = msg.response.usage;
      return { input: typeof u.input_tokens === 'number' ? u.input_tokens : undefined, output: typeof u.output_tokens === 'number' ? u.output_tokens : undefined };
    },
  };
}

const realtimePath = (url: URL): boolean => /\/realtime\/?$/.test(url.pathname);
// `/openai/realtime` (what OpenAIRealtimeWS.azure connects to) and `/openai/v1/realtime`.
const azurePath = (url: URL): boolean => /(^|\/)openai(\/v1)?\/realtime\/?$/.test(url.pathname);

/** Azure's routes first: they end in /realtime too. */
export const openaiRealtime: readonly RealtimeProtocol[] = [protocol('azure', azurePath), protocol('openai', (u) => realtimePath(u) && !azurePath(u))];
