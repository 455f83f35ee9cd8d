/**
 * JSON-RPC 2.0 messages as MCP sends them (structural types: tapedeck does not depend on the MCP
 * SDK at run time), and the error codes tapedeck answers with in the protocol.
 */

export type JsonRpcId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type JsonRpcResponse = { jsonrpc: '2.0'; id: JsonRpcId; result: unknown } | { jsonrpc: '2.0'; id: JsonRpcId; error: JsonRpcError };

/** Any JSON-RPC 2.0 message of MCP: a request, a notification, or a response. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/**
 * Error codes of tapedeck's own answers, in the range JSON-RPC leaves to implementations
 * (-32000 to -32099) and clear of the MCP SDK's own (-32000, -32001, -32042).
 */
export const MCP_ERROR = Object.freeze({
  /** No recording answers the request (replay); `data.tapedeck` holds the diagnosis. */
  miss: -32050,
  /** The server exited, or its stream closed, before it answered. Nothing is recorded. */
  serverGone: -32051,
  /** The server sent nothing for the timeout. Nothing is recorded. */
  timeout: -32052,
  /** The request's params cannot be keyed (a lone surrogate, a non-finite number); it was not sent on. */
  badParams: -32053,
  /** The server answered, but the exchange could not be recorded (full disk, tape lock held, Redis gone). */
  recordFailed: -32054,
});

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A request: a method and an id. */
export const isRequest = (m: unknown): m is JsonRpcRequest => isObject(m) && typeof m.method === 'string' && 'id' in m && m.id !== null && m.id !== undefined;

/** A notification: a method and no id. */
export const isNotification = (m: unknown): m is JsonRpcNotification => isObject(m) && typeof m.method === 'string' && !('id' in m && m.id !== null && m.id !== undefined);

/** A response: an id and a result or an error, no method. */
export const isResponse = (m: unknown): m is JsonRpcResponse => isObject(m) && typeof m.method !== 'string' && 'id' in m && ('result' in m || 'error' in m);

/**
 * A JSON-RPC error response for `id`.
 *
 * @example
 * errorResponse(7, MCP_ERROR.miss, 'tapedeck miss: ...') // { jsonrpc: '2.0', id: 7, error: { code: -32050, message } }
 */
export function errorResponse(id: JsonRpcId, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}
