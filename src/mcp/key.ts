/**
 * The key of an MCP exchange: SHA-256 of the RFC 8785 canonical form of `{ method, params }`
 * (the core's hashValue), where params leave out what changes from run to run without changing
 * the answer. Never the JSON-RPC `id` nor the session id: those are the transport's.
 *
 * Left out (MCP key spec version 2, docs/mcp.md):
 * - `params._meta` of every message (progress tokens, trace ids a client adds);
 * - in `initialize`: `clientInfo` (which host connects, and its version, does not change what a
 *   server says; the protocol version and the capabilities do, and count). Version 1 left out
 *   only `clientInfo.version`, so a tape recorded by one host did not connect from another;
 *   its `initialize` records are keyed again when a tape is opened ({@link mcpRecordKeys});
 * - in `notifications/cancelled`: `requestId` (the id of the cancelled request).
 *
 * Sessions key params as the tape stores them (src/mcp/session.ts): secrets masked under the
 * tape's salt, with keyed masks, so two calls that differ only in a secret (a token passed to a
 * tool) are still two calls, and a call a replayed agent makes with the masked secret its
 * model's recording holds finds the recording made with the secret itself.
 */
import { hashValue } from '../core/index.ts';
import { put } from '../providers/normalize.ts';
import { replaceIn } from '../providers/volatile-text.ts';

/**
 * What a session leaves out of its keys besides the rules above (docs/mcp.md, "Volatile
 * values"): every match of `text` in a string of the params becomes `<volatile>`, and members
 * named in `keys` are removed at any depth, as volatileText and volatileKeys do for the model's
 * requests (docs/matching.md).
 */
export interface McpVolatile {
  text: readonly RegExp[];
  keys: ReadonlySet<string>;
}

/**
 * A copy of the params with volatile values left out. Members are put as normalize.ts puts them:
 * `out[k] = x` would make a `__proto__` member (JSON.parse makes own ones) the copy's prototype,
 * dropped from the key, and two calls differing there one call.
 */
function withoutVolatile(v: unknown, vol: McpVolatile): unknown {
  if (typeof v === 'string') return replaceIn(v, vol.text);
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => withoutVolatile(x, vol));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!vol.keys.has(k)) put(out, k, withoutVolatile(x, vol));
  return out;
}

/** Version of the rules above; stored with each record. */
export const MCP_KEY_VERSION = 2;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The params that take part in the key (a copy; the input is not changed), with `volatile`
 * values left out when given.
 *
 * @example
 * keyParams('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'a', version: '1' } })
 * // { protocolVersion: '2025-11-25', capabilities: {} }
 */
export function keyParams(method: string, params: unknown, volatile?: McpVolatile): unknown {
  if (!isObject(params)) return params ?? {};
  const { _meta: _drop, ...rest } = params;
  if (method === 'initialize') delete rest.clientInfo;
  if (method === 'notifications/cancelled') delete rest.requestId;
  return volatile && (volatile.text.length > 0 || volatile.keys.size > 0) ? withoutVolatile(rest, volatile) : rest;
}

/**
 * The key of a client message.
 *
 * @example
 * mcpKey('tools/call', { name: 'echo', arguments: { message: 'hi' }, _meta: { progressToken: 7 } })
 * // same as mcpKey('tools/call', { name: 'echo', arguments: { message: 'hi' } })
 */
export function mcpKey(method: string, params: unknown, volatile?: McpVolatile): string {
  return hashValue({ method, params: keyParams(method, params, volatile) });
}

/**
 * The key of a client message at its place in its session: the digest of `after` (the context
 * of the session's earlier messages, '' at its start) and the message's own key. A session's
 * context after a message is that message's context key, so it names every keyed message the
 * session sent so far, in order (docs/mcp.md, "The key"). Exchanges a session
 * made live in update mode are stored under it: their answers depend on what that session did
 * before, so they answer only a session that did the same.
 *
 * @example
 * const first = mcpContextKey('', mcpKey('initialize', params))
 * const second = mcpContextKey(first, mcpKey('notifications/initialized', undefined))
 */
export function mcpContextKey(after: string, key: string): string {
  return hashValue({ after, key });
}

/**
 * The key an MCP record is found under, from its head (`key`, `keyVersion`, `method` when they
 * lead the record) or, for a record keyed by older rules, from its stored request: only
 * `initialize` changed since version 1, and is keyed again from its params (stored redacted,
 * which an `initialize` holding a secret would make differ from the live key: a miss, never a
 * wrong answer).
 *
 * @example
 * mcpRecordKeys({ kind: 'mcp', key: 'ab12…', keyVersion: 1, method: 'tools/list' }, () => record) // 'ab12…'
 */
export function mcpRecordKeys(head: Readonly<Record<string, unknown>>, value: () => unknown): string | undefined {
  if (typeof head.key !== 'string') return undefined;
  if (head.keyVersion === MCP_KEY_VERSION || (typeof head.method === 'string' && head.method !== 'initialize')) return head.key;
  const v = value() as { method?: unknown; request?: { params?: unknown }; session?: unknown; server?: unknown } | undefined;
  if (!isObject(v) || v.method !== 'initialize') return head.key;
  // Scoped to its session and server as it was stored (src/mcp/sessions.ts).
  return mcpServerKey(mcpKey('initialize', v.request?.params), typeof v.session === 'number' ? v.session : 1, typeof v.server === 'string' ? v.server : undefined);
}

export { differenceCount, firstDifference } from '../match/json-difference.ts';

/**
 * The key of a message in the k-th session of a program on one tape (`session`, from 1; docs/mcp.md,
 * "Several sessions on one tape"): the first session's keys are the plain ones (so a tape one
 * session wrote is keyed as before), a later session's are scoped to it, so its recordings are
 * never served to another session, and recording it never replaces another session's.
 *
 * @example
 * mcpSessionKey(mcpKey('tools/list', {}), 1) === mcpKey('tools/list', {}) // true
 * mcpSessionKey(mcpKey('tools/list', {}), 2) // another key: the second session's tools/list
 */
export function mcpSessionKey(key: string, session: number): string {
  return session <= 1 ? key : hashValue({ session, key });
}

/**
 * The key of a message in a session whose server is known (`server`, the digest of its name:
 * src/mcp/sessions.ts): scoped to the server and the session number, so two servers never share
 * a recording, however their sessions are numbered (two `tapedeck mcp` processes on one tape are
 * both session 1). Without a server, as {@link mcpSessionKey} (tapes of an older release, and
 * `tapedeck serve`).
 *
 * @example
 * mcpServerKey(mcpKey('tools/list', {}), 1, 'a1b2c3d4e5f60718') // the tools/list of that server's first session
 */
export function mcpServerKey(key: string, session: number, server: string | undefined): string {
  return server === undefined ? mcpSessionKey(key, session) : hashValue({ server, session, key });
}
