/**
 * The key of an MCP exchange: SHA-256 of the RFC 8785 canonical form of `{ method, params }`
 * (the core's hashValue), where params leave out what changes from run to run without changing
 * the answer. Never the JSON-RPC `id` nor the session id: those are the transport's.
 *
 * Left out (MCP key spec version 1, docs/mcp.md):
 * - `params._meta` of every message (progress tokens, trace ids a client adds);
 * - in `initialize`: `clientInfo.version` (a client upgrade does not change what a server says);
 * - in `notifications/cancelled`: `requestId` (the id of the cancelled request).
 *
 * Keys are computed from params as the client sent them, secrets included, so that two calls
 * that differ only in a secret (a token passed to a tool) are never merged; the tape stores
 * only the digest and the redacted params.
 */
import { hashValue } from '../core/index.ts';

/** Version of the rules above; stored with each record. */
export const MCP_KEY_VERSION = 1;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The params that take part in the key (a copy; the input is not changed).
 *
 * @example
 * keyParams('initialize', { protocolVersion: '2025-11-25', clientInfo: { name: 'a', version: '1' } })
 * // { protocolVersion: '2025-11-25', clientInfo: { name: 'a' } }
 */
export function keyParams(method: string, params: unknown): unknown {
  if (!isObject(params)) return params ?? {};
  const { _meta: _drop, ...rest } = params;
  if (method === 'initialize' && isObject(rest.clientInfo)) {
    const { version: _v, ...info } = rest.clientInfo;
    rest.clientInfo = info;
  }
  if (method === 'notifications/cancelled') delete rest.requestId;
  return rest;
}

/**
 * The key of a client message.
 *
 * @example
 * mcpKey('tools/call', { name: 'echo', arguments: { message: 'hi' }, _meta: { progressToken: 7 } })
 * // same as mcpKey('tools/call', { name: 'echo', arguments: { message: 'hi' } })
 */
export function mcpKey(method: string, params: unknown): string {
  return hashValue({ method, params: keyParams(method, params) });
}

export { differenceCount, firstDifference } from '../match/json-difference.ts';
