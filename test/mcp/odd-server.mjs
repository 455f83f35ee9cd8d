// A minimal MCP server over stdio that misbehaves on request: `crash` exits mid-call, `hang`
// never answers, `fail` answers with a JSON-RPC error, `secret` answers with a key from its env;
// with ODD_NOISY set, a JSON line that is no JSON-RPC message comes before the tool list;
// `count` answers its k-th call "count k", the later ones sooner (k = 1 after 200 ms, 2 after
// 150, ...): identical calls in flight at once are answered last first; `slow` answers after
// `arguments.ms` (the process stays up that long, even once its stdin is closed).
import { createInterface } from 'node:readline';

let counted = 0;
const send = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  if (m.id === undefined) return;
  if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'odd', version: '1.0.0' } } });
  // A log line as JSON, which is no JSON-RPC message, before the answer (`ODD_NOISY`).
  if (m.method === 'tools/list' && process.env.ODD_NOISY) send({ not: 'jsonrpc', level: 'info' });
  if (m.method === 'tools/list') return send({ jsonrpc: '2.0', id: m.id, result: { tools: ['crash', 'hang', 'fail', 'secret', 'echo', 'count', 'slow'].map((name) => ({ name, inputSchema: { type: 'object' } })) } });
  if (m.method !== 'tools/call') return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
  const name = m.params.name;
  if (name === 'crash') process.exit(3);
  if (name === 'hang') return;
  if (name === 'slow') return void setTimeout(() => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `slept ${m.params.arguments.ms}` }] } }), m.params.arguments.ms);
  if (name === 'count') {
    const k = ++counted;
    return void setTimeout(() => send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `count ${k}` }] } }), Math.max(0, 250 - 50 * k));
  }
  if (name === 'fail') return send({ jsonrpc: '2.0', id: m.id, error: { code: -32602, message: 'bad arguments for fail' } });
  if (name === 'secret') return send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `key=${process.env.ODD_KEY}` }] } });
  send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: JSON.stringify(m.params.arguments ?? {}) }] } });
});
