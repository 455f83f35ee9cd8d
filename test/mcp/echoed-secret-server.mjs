// A stdio MCP server whose login tool answers with the password it was given (a debug echo, a
// "your password X works" message), and says it again in a notification.
import readline from 'node:readline';
const rl = readline.createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'echo', version: '1' } } });
  if (m.method === 'tools/list') return send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'login', inputSchema: { type: 'object' } }] } });
  if (m.method === 'tools/call') {
    const { user, password } = m.params.arguments;
    send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `checked ${password} for ${user}` } });
    return send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `welcome ${user}, your password ${password} works` }] } });
  }
  if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, result: {} });
});
