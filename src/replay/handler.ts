// `POST /v1/replay` without a server: takes the request body, returns status, content type and
// body bytes. The proxy mounts it; tests call it directly. The contract, checked in this order
// (docs/replay.md's table, which clients read to know which error they get first):
//   replay disabled (no store, or enabled: false)        -> 501 replay_disabled
//   body not UTF-8 JSON                                   -> 400 invalid_json
//   not an object; a field present but not a string; a
//   trace_token that is not 64 hex characters             -> 400 invalid_request, naming the fields
//   a field missing, null or empty                        -> 400 missing_fields, naming them
//   trace_token never stored (or expired)                 -> 404
//   document_id differs from the original                 -> 409, field "document_id"
//   query differs from every query stored for the token   -> 409, field "query"
//   otherwise                                             -> 200 with the stored bytes, verbatim
// Disabled is checked first: a server with replay off has nothing to validate against. A value
// that is wrong is reported before one that is absent: `{"trace_token":"x"}` is a token no
// response ever carried, which a client fixes before it adds the other fields.

import type { ReplayLookup } from './store.ts';
import { isBytes } from '../bytes.ts';

/** What handleReplay needs from a store: the in-memory ReplayStore and the durable one both fit. */
export interface ReplaySource {
  readonly enabled: boolean;
  lookup(token: string, query: string, documentId: string): ReplayLookup;
}

/** The answer handleReplay gives: the status, content type and bytes to send. */
export interface ReplayResponse {
  status: 200 | 400 | 404 | 409 | 501;
  /** For 200 the stored content type; otherwise JSON. */
  contentType: string;
  /** For 200 the stored bytes exactly; otherwise `{ "error": { code, message, ... } }` and a newline. */
  body: Uint8Array;
}

/** Error codes in replay error bodies (`error.code`). */
export type ReplayErrorCode = 'replay_disabled' | 'invalid_json' | 'invalid_request' | 'missing_fields' | 'unknown_trace_token' | 'document_id_mismatch' | 'query_mismatch';

const JSON_TYPE = 'application/json; charset=utf-8';
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const FIELDS = ['trace_token', 'query', 'document_id'] as const;

function error(status: ReplayResponse['status'], code: ReplayErrorCode, message: string, extra: Record<string, unknown> = {}): ReplayResponse {
  return { status, contentType: JSON_TYPE, body: encoder.encode(`${JSON.stringify({ error: { code, message, ...extra } })}\n`) };
}

function parse(body: unknown): { value: unknown } | undefined {
  if (isBytes(body) || typeof body === 'string') {
    try {
      return { value: JSON.parse(typeof body === 'string' ? body : decoder.decode(body)) };
    } catch {
      return undefined;
    }
  }
  return { value: body };
}

/**
 * Answers a replay request `{ trace_token, query, document_id }` (raw body bytes, text, or the
 * parsed object) from a replay store; `store` undefined or disabled means replay is off (501).
 *
 * @example
 * const r = handleReplay(store, await readBody(req))
 * res.writeHead(r.status, { 'content-type': r.contentType }).end(r.body)
 */
export function handleReplay(store: ReplaySource | null | undefined, body: unknown): ReplayResponse {
  if (!store || !store.enabled) {
    return error(501, 'replay_disabled', 'Replay is disabled on this server.', { hint: 'Enable it with TAPEDECK_REPLAY_ENABLED=true (or the enabled option).' });
  }
  const parsed = parse(body);
  if (!parsed) return error(400, 'invalid_json', 'The request body is not valid UTF-8 JSON.', { hint: 'Send {"trace_token": …, "query": …, "document_id": …}.' });
  const v = parsed.value;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    return error(400, 'invalid_request', 'The request body must be a JSON object.', { hint: 'Send {"trace_token": …, "query": …, "document_id": …}.' });
  }
  const o = v as Record<string, unknown>;
  // Absent (undefined or null) and empty values are missing_fields, checked after these.
  const absent = (f: (typeof FIELDS)[number]) => o[f] === undefined || o[f] === null || o[f] === '';
  const wrongType = FIELDS.filter((f) => !absent(f) && typeof o[f] !== 'string');
  const badToken = !absent('trace_token') && typeof o.trace_token === 'string' && !/^[0-9a-f]{64}$/i.test(o.trace_token);
  if (wrongType.length > 0 || badToken) {
    const fields = FIELDS.filter((f) => wrongType.includes(f) || (f === 'trace_token' && badToken));
    const why = [...(wrongType.length > 0 ? [`Must be strings: ${wrongType.join(', ')}.`] : []), ...(badToken ? ['trace_token must be 64 hexadecimal characters, as responses carry it.'] : [])];
    return error(400, 'invalid_request', why.join(' '), { fields });
  }
  const missing = FIELDS.filter(absent);
  if (missing.length > 0) {
    return error(400, 'missing_fields', `Missing or empty: ${missing.join(', ')}.`, { fields: missing, hint: 'All of trace_token, query and document_id are required.' });
  }
  const token = (o.trace_token as string).toLowerCase();
  const r = store.lookup(token, o.query as string, o.document_id as string);
  switch (r.status) {
    case 'found':
      return { status: 200, contentType: r.entry.contentType, body: r.entry.body };
    case 'unknown-token':
      return error(404, 'unknown_trace_token', 'No response is stored under this trace_token (never stored, evicted or expired).');
    case 'document-mismatch':
      return error(409, 'document_id_mismatch', 'document_id differs from the original.', { field: 'document_id' });
    case 'query-mismatch':
      return error(409, 'query_mismatch', 'query differs from the original.', { field: 'query' });
  }
}
