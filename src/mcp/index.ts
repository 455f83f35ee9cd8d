/**
 * llm-tapedeck/mcp: record and replay MCP servers (tools, resources, prompts) for agents and
 * their tests. Three entry points share one engine and one tape format (docs/mcp.md): the
 * `tapedeck mcp` command over stdio, `tapedeck serve` in front of a Streamable HTTP endpoint,
 * and tapeTransport around an SDK client Transport, in process.
 *
 * @example
 * import { tapeTransport } from 'llm-tapedeck/mcp'
 * await client.connect(tapeTransport(transport, { tape: 'tapes/tools.tape' }))
 */
export { tapeTransport, type McpTransportLike, type McpWireMessage, type TapeTransport, type TapeTransportOptions } from './transport.ts';
export { McpTape, callLabel, type McpMiss, type McpTapeOptions } from './tape.ts';
export { McpSession, type McpSessionOptions, type McpTiming, type McpUpstream } from './session.ts';
export { runStdio, stdioUpstream, type RunStdioOptions, type StdioServer } from './stdio.ts';
export { mcpKey, mcpSessionKey, keyParams, MCP_KEY_VERSION } from './key.ts';
export { MCP_CANCEL_GRACE_MS, type McpCancelledRecord } from './cancelled.ts';
export { MCP_ERROR, type JsonRpcMessage, type JsonRpcId } from './jsonrpc.ts';
export { isMcpRecord, MCP_RECORD_KIND, type McpRecord, type McpEvent, type McpAnswer } from '../store/records.ts';
export type { ChaosOptions, McpFault } from '../chaos/options.ts';
