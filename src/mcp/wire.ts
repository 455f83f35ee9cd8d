/**
 * The server's messages as an MCP record keeps them (docs/mcp.md, "On the tape").
 *
 * Since record version 2 each one is kept as it was sent: `message`, the JSON-RPC message as
 * UTF-8 JSON text in the server's member order, secrets masked. Tape records have their nested
 * objects' keys sorted when written (src/store/record-order.ts, so that export -> import gives
 * the same bytes), and a string or bytes value is the one thing that sorting leaves as it is.
 * Version 1 kept parsed values, so a replayed answer came back with its members sorted: an agent
 * that hands a tool result to its model as text (`JSON.stringify(result)`) sent the model a
 * request on replay that differed from the recorded one, and missed.
 *
 * Version 1 records still replay, rebuilt from their fields (keys sorted, as they were stored).
 */
import type { McpEvent } from '../store/records.ts';
import type { JsonRpcId } from './jsonrpc.ts';
import { isBytes } from '../bytes.ts';

/**
 * The MCP record version this release writes; 1 is still read. Raised with `message`: a release
 * that knows only version 1 would replay a version 2 answer without its result, so it skips such
 * a record as not one of its own instead (a miss it reports, never a broken answer).
 */
export const MCP_RECORD_VERSION = 2;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A JSON-RPC message as parsed, with its members in the order they were written. */
export type WireMessage = { jsonrpc?: '2.0'; id?: JsonRpcId | null; method?: string; params?: unknown; result?: unknown; error?: unknown } & Record<string, unknown>;

/**
 * A server message as a record stores it: its JSON text, in its own member order (JSON.stringify
 * writes an object's members in the order they were parsed or set), as bytes. The caller redacts
 * it first.
 *
 * @example
 * wireBytes({ result: { name: 'Zed', entityType: 'person' }, jsonrpc: '2.0', id: 1 })
 * // the bytes of {"result":{"name":"Zed","entityType":"person"},"jsonrpc":"2.0","id":1}
 */
export function wireBytes(message: unknown): Uint8Array {
  return utf8Encoder.encode(JSON.stringify(message));
}

/**
 * A fresh copy of the server message of an event, to send again: parsed from its stored text
 * (version 2: the server's member order, the recorded id), or rebuilt from a version 1 event's
 * fields. The caller sets the id it answers with; the copy is its own to change.
 *
 * @example
 * const m = sentMessage(ev); m.id = callerId; send(m)
 */
export function sentMessage(ev: McpEvent): WireMessage {
  if ('message' in ev && isBytes(ev.message)) return JSON.parse(utf8Decoder.decode(ev.message)) as WireMessage;
  // Version 1: the fields as stored (keys sorted), in the order tapedeck used to send them.
  if ('response' in ev) return 'error' in ev && ev.error !== undefined ? { jsonrpc: '2.0', id: null, error: ev.error } : { jsonrpc: '2.0', id: null, result: (ev as { result?: unknown }).result };
  if ('request' in ev) return { jsonrpc: '2.0', id: null, method: ev.request.method, ...(ev.request.params !== undefined ? { params: ev.request.params } : {}) };
  return { jsonrpc: '2.0', method: ev.notification.method, ...(ev.notification.params !== undefined ? { params: ev.notification.params } : {}) };
}
