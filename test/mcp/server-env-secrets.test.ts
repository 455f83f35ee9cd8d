// `tapedeck mcp` starts the server with its own environment, where the server's tokens are
// (`GITHUB_TOKEN`, a service's `SVC_TOKEN`, `DATABASE_PASSWORD`). A tool that printed one in a
// format redaction does not know (40 hex digits, a typed password) put it on the tape as sent,
// and `tapedeck scan` could not see it. The values of the secret-named variables of the server's
// environment are now masked wherever the server repeats them, as a call's own secret params are.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runStdio } from '../../src/mcp/stdio.ts';
import { tmp } from './helpers.ts';

const SERVER = join(import.meta.dirname, 'env-echo-server.mjs');
const SVC = 'f3a9c2e17b4d8e6f0a1b2c3d4e5f60718293a4b5';
const DB = 'hunter2hunter2';
const REGION = 'eu-west-1b';

/** One tools/call through `tapedeck mcp` in process: the lines the client got. */
async function whoami(tape: string, mode: 'record' | 'replay'): Promise<string> {
  const input = new PassThrough();
  const output = new PassThrough();
  let out = '';
  output.on('data', (b: Buffer) => (out += b.toString()));
  const env = { ...process.env, SVC_TOKEN: SVC, DATABASE_PASSWORD: DB, DEPLOY_REGION: REGION, PWD: import.meta.dirname };
  const run = runStdio({ tape, mode, server: { command: process.execPath, args: [SERVER], env }, input, output, stderr: new PassThrough() });
  input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
  input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } })}\n`);
  await new Promise<void>((r) => {
    const check = () => (out.includes('"id":2') ? r() : setTimeout(check, 10));
    check();
  });
  input.end();
  expect(await run).toBe(0);
  return out;
}

describe('tapedeck mcp: secrets of the server environment in what it sends', () => {
  it('are masked on the tape (result and notification) and in the replay; other variables stay', async () => {
    const tape = join(tmp('mcp-env-secrets'), 'env.tape');
    const live = await whoami(tape, 'record');
    expect(live).toContain(`svc=${SVC}`);
    const bytes = readFileSync(tape);
    expect(bytes.includes(SVC)).toBe(false);
    expect(bytes.includes(DB)).toBe(false);
    expect(bytes.includes(`region=${REGION}`)).toBe(true);
    // PWD is named like a password (pwd) but is the working directory: a path is no secret.
    expect(bytes.includes(`cwd=${import.meta.dirname}`)).toBe(true);
    const replayed = await whoami(tape, 'replay');
    expect(replayed).not.toContain(SVC);
    expect(replayed).toMatch(/svc=\[REDACTED:[0-9a-f]{16}\] db=\[REDACTED:[0-9a-f]{16}\] region=eu-west-1b/);
    expect(replayed).toMatch(/connecting with \[REDACTED:[0-9a-f]{16}\]/);
  });
});
