// A minimal MCP server over stdio that misbehaves on request: `crash` exits mid-call, `hang`
// never answers, `fail` answers with a JSON-RPC error, `secret` answers with a key from its env;
// with ODD_NOISY set, a JSON line that is no JSON-RPC message comes before the tool list.
import { createInterface } from 'node:readline';

const send = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'odd', version: '1.0.0' } } });
  // A log line as JSON, which is no JSON-RPC message, before the answer (`ODD_NOISY`).
  if (m.method === 'tools/list' && process.env.ODD_NOISY) send({ not: 'jsonrpc', level: 'info' });
  if (m.method === 'tools/list') return send({ jsonrpc: '2.0', id: m.id, result: { tools: ['crash', 'hang', 'fail', 'secret', 'echo'].map((name) => ({ name, inputSchema: { type: 'object' } })) } });
  if (m.method !== 'tools/call') return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
  const name = m.params.name;
  if (name === 'crash') process.exit(3);
  if (name === 'hang') return;
  if (name === 'fail') return send({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'bad arguments for fail' } });
  if (name === 'secret') return send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `key=${process.env.ODD_KEY}` }] } });
  send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(m.params.arguments ?? {}) }] } });
});
