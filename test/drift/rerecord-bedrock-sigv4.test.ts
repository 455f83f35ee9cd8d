// `tapedeck rerecord` on a Bedrock tape: the recorded SigV4 signature is masked on the tape and
// would be stale anyway (it covers the date), so each request is signed again with the AWS
// credentials of the environment, as `tapedeck serve` re-signs with them. Without them nothing is
// sent, and the message names what is needed (not OpenAI's key, not a --header that cannot carry
// a signature).
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { parseSigV4, sigV4Mismatch } from '../../src/proxy/sigv4.ts';
import type { HttpRecord } from '../../src/store/records.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rerecord-bedrock-'));
const AWS = { AWS_ACCESS_KEY_ID: 'AKIAFAKEACCESSKEY123', AWS_SECRET_ACCESS_KEY: 'fakeSecretAccessKeyVALUE/abc123', AWS_SESSION_TOKEN: 'FwoGZXIvYXdzEFAKE-SESSION-TOKEN-xyz' };
const PATH = '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse';
const converse = { output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn', usage: { inputTokens: 2, outputTokens: 1, totalTokens: 3 }, metrics: { latencyMs: 5 } };
/** What Bedrock stand-in judged of each request: the key id it was signed with, and whether the signature holds. */
const seen: { accessKeyId?: string; valid: boolean; token?: string }[] = [];
let server: Server;
let base = '';

beforeAll(async () => {
  // Checks a signature as AWS does: recomputed from the request received with the secret.
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const sig = parseSigV4(typeof req.headers.authorization === 'string' ? req.headers.authorization : undefined);
      const valid = sig !== undefined && sig.service === 'bedrock' && sigV4Mismatch({ method: req.method!, url: req.url!, headers: req.headers as Record<string, string>, body }, sig, AWS.AWS_SECRET_ACCESS_KEY) === undefined;
      seen.push({ ...(sig ? { accessKeyId: sig.accessKeyId } : {}), valid, ...(typeof req.headers['x-amz-security-token'] === 'string' ? { token: req.headers['x-amz-security-token'] } : {}) });
      res.writeHead(valid ? 200 : 403, valid ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', 'x-amzn-errortype': 'InvalidSignatureException:http://internal.amazon.com/coral/com.amazon.coral.service/' });
      res.end(JSON.stringify(valid ? converse : { message: 'The request signature we calculated does not match the signature you provided.' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** A Converse call as `tapedeck serve` records an AWS SDK's: the signature headers masked. */
const bedrockRecord = (origin: string): HttpRecord =>
  ({
    v: 1,
    kind: 'http',
    match: 'json',
    route: `POST ${PATH}`,
    key: 'k'.repeat(64),
    origin,
    request: {
      method: 'POST',
      url: PATH,
      headers: { authorization: '[REDACTED]', 'content-type': 'application/json', 'x-amz-content-sha256': '[REDACTED]', 'x-amz-date': '[REDACTED]', 'x-amz-security-token': '[REDACTED]', 'x-amz-user-agent': 'aws-sdk-js/3.1177.0' },
      body: { messages: [{ role: 'user', content: [{ text: 'Hi Bedrock' }] }], inferenceConfig: { maxTokens: 10 } },
    },
    response: { status: 200, headers: { 'content-type': 'application/json' }, body: new TextEncoder().encode(JSON.stringify(converse)) },
    recordedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1,
  }) as unknown as HttpRecord;

function run(args: string[], env: Record<string, string>): Promise<{ status: number; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GEMINI_API_KEY: '', AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_SESSION_TOKEN: '', AWS_PROFILE: '', ...env } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.resume();
    child.on('close', (status) => done({ status: status ?? -1, stderr }));
  });
}

describe('rerecord of Bedrock recordings', () => {
  it('signs each request with SigV4 from the AWS credentials of the environment', async () => {
    const tape = join(dir, 'bed.tape');
    await createTape(tape);
    await appendRecords(tape, [bedrockRecord(base)]);
    seen.length = 0;
    const r = await run(['rerecord', 'bed.tape', '--yes', '--retries', '0'], AWS);
    expect(r.stderr).not.toContain('OPENAI_API_KEY');
    expect(seen).toEqual([{ accessKeyId: AWS.AWS_ACCESS_KEY_ID, valid: true, token: AWS.AWS_SESSION_TOKEN }]);
    expect(r.status).toBe(0);
  });

  it('sends nothing without them, and says which credentials it needs', async () => {
    const tape = join(dir, 'bed2.tape');
    await createTape(tape);
    await appendRecords(tape, [bedrockRecord(base)]);
    seen.length = 0;
    const r = await run(['rerecord', 'bed2.tape', '--yes', '--retries', '0'], {});
    expect(seen).toEqual([]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('AWS_ACCESS_KEY_ID');
    expect(r.stderr).toContain('AWS_SECRET_ACCESS_KEY');
    expect(r.stderr).not.toContain('OPENAI_API_KEY');
  });

  it('does not sign for a host that is not AWS over https, nor this machine', async () => {
    const tape = join(dir, 'bed3.tape');
    await createTape(tape);
    await appendRecords(tape, [bedrockRecord('http://bedrock-runtime.us-east-1.amazonaws.com')]);
    const r = await run(['rerecord', 'bed3.tape', '--yes', '--retries', '0'], AWS);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('https://');
  });
});
