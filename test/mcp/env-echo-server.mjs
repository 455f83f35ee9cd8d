// A stdio MCP server whose `whoami` tool prints variables of its environment (a debug tool, a
// command's output): a service token and a password among them.
import readline from 'node:readline';
const rl = readline.createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.method === 'initialize') return send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'env', version: '1' } } });
  if (m.method === 'tools/call') {
    const env = process.env;
    send({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'debug', data: `connecting with ${env.SVC_TOKEN}` } });
    return send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: `svc=${env.SVC_TOKEN} db=${env.DATABASE_PASSWORD} region=${env.DEPLOY_REGION} cwd=${env.PWD}` }] } });
  }
  if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, result: {} });
});
