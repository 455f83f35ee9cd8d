// The proxy signs with its own AWS credentials only for a client that proved it holds them: the
// client's SigV4 signature (made for the proxy's host) is checked before the request is signed
// again for the upstream. Test requests are signed by the AWS SDK's own signer
// (@smithy/signature-v4), an oracle independent of tapedeck's; a loopback upstream counts every
// request that reaches it, so "nothing went upstream" is measured, not assumed.
import { ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { listenLoopback } from '../proxy/fake-upstream.ts';
import { awsClient, CREDENTIALS, MODEL } from './bedrock-clients.ts';
import { startBedrock } from './fake-bedrock.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-sigv4-proof-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CONVERSE = `/model/${encodeURIComponent(MODEL)}/converse`;
const BODY = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hello' }] }] });
const OTHER = { accessKeyId: 'AKIAANOTHERCLIENTKEY', secretAccessKey: 'anotherClientsSecret/0123456789abcdefghij', sessionToken: 'anotherClientsSessionToken0123456789' };
const MIN = 60_000;

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An upstream that answers every request with a Converse-shaped 200 and keeps what it got. */
async function startCounting(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(parts).toString() });
      const out = JSON.stringify({ output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  });
  return { ...(await listenLoopback(server)), seen };
}

interface Signing {
  service?: string;
  date?: Date;
  creds?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  path?: string;
  body?: string;
  headers?: Record<string, string>;
}

/** Headers the AWS SDK's signer gives a POST to the proxy's host. */
async function sdkSigned(proxyUrl: string, s: Signing = {}): Promise<Record<string, string>> {
  const u = new URL(proxyUrl);
  const signer = new SignatureV4({ credentials: s.creds ?? CREDENTIALS, region: 'us-east-1', service: s.service ?? 'bedrock', sha256: Sha256 });
  const signed = await signer.sign(
    new HttpRequest({ method: 'POST', protocol: 'http:', hostname: u.hostname, port: Number(u.port), path: s.path ?? CONVERSE, headers: { host: u.host, 'content-type': 'application/json', ...s.headers }, body: s.body ?? BODY }),
    { signingDate: s.date ?? new Date() },
  );
  return signed.headers as Record<string, string>;
}

/** Sends a request over HTTP/1.1 exactly as given; resolves with the answer. */
function send(proxyUrl: string, headers: Record<string, string>, body = BODY, path = CONVERSE): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const u = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method: 'POST', path, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends a request over cleartext HTTP/2 (`host` goes as `:authority`, as HTTP/2 clients send it). */
function sendH2(proxyUrl: string, headers: Record<string, string>, body = BODY, path = CONVERSE): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const { host: _host, ...rest } = headers;
  const session = h2connect(proxyUrl);
  return new Promise((resolve, reject) => {
    session.on('error', reject);
    const req = session.request({ ':method': 'POST', ':path': path, ...rest, 'content-length': String(Buffer.byteLength(body)) });
    let status = 0;
    let got: IncomingHttpHeaders = {};
    const parts: Buffer[] = [];
    req.on('response', (h) => {
      status = Number(h[':status']);
      got = h as IncomingHttpHeaders;
    });
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      session.close();
      resolve({ status, headers: got, body: Buffer.concat(parts).toString() });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The answer is AWS's 403 for a bad signature, with tapedeck's reason as its message. */
function expectRefused(a: { status: number; headers: IncomingHttpHeaders; body: string }, reason: RegExp): void {
  expect(a.status).toBe(403);
  expect(a.headers['x-amzn-errortype']).toBe('InvalidSignatureException');
  expect(a.headers['x-tapedeck-error']).toBe('E_SIGNATURE');
  const body = JSON.parse(a.body) as { message: string };
  expect(body.message).toMatch(reason);
  expect(body.message).toMatch(/nothing was sent upstream/);
  for (const s of [CREDENTIALS.secretAccessKey, CREDENTIALS.sessionToken]) expect(a.body).not.toContain(s);
}

describe('the proxy checks the client signature before it signs with its own credentials', () => {
  let up: Awaited<ReturnType<typeof startCounting>>;
  let proxy: ProxyServer;
  const warnings: string[] = [];
  beforeAll(async () => {
    up = await startCounting();
    proxy = await startProxy({ upstream: up.url, mode: 'passthrough', port: 0, awsCredentials: CREDENTIALS, onWarning: (m) => warnings.push(m) });
  });
  afterAll(async () => {
    await proxy.close();
    await up.close();
  });
  const upstreamCalls = () => up.seen.length;

  it('a signature made with the secret is re-signed and forwarded (the control)', async () => {
    const before = upstreamCalls();
    const a = await send(proxy.url, await sdkSigned(proxy.url));
    expect(a.status).toBe(200);
    expect(upstreamCalls()).toBe(before + 1);
    const got = up.seen.at(-1)!;
    expect(got.headers.authorization).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${CREDENTIALS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, `));
    expect(got.headers['x-amz-security-token']).toBe(CREDENTIALS.sessionToken);
  });

  it('a made-up signature with the proxy’s access key id: 403, nothing upstream', async () => {
    const before = upstreamCalls();
    const headers = await sdkSigned(proxy.url);
    const forged = { ...headers, authorization: headers.authorization!.replace(/Signature=[0-9a-f]+/, 'Signature=00') };
    expectRefused(await send(proxy.url, forged), /signature we calculated does not match/);
    // One hex digit off, the rest a real signature.
    const flipped = { ...headers, authorization: headers.authorization!.replace(/.$/, (c) => (c === '0' ? '1' : '0')) };
    expectRefused(await send(proxy.url, flipped), /signature we calculated does not match/);
    // Signed by someone who does not hold the secret.
    const guessed = await sdkSigned(proxy.url, { creds: { ...CREDENTIALS, secretAccessKey: 'not-the-secret' } });
    expectRefused(await send(proxy.url, guessed), /signature we calculated does not match/);
    expect(upstreamCalls()).toBe(before);
  });

  it('a real signature over another body, path or header value: 403, nothing upstream', async () => {
    const before = upstreamCalls();
    const headers = await sdkSigned(proxy.url);
    expectRefused(await send(proxy.url, headers, BODY.replace('hello', 'HELLO')), /signature we calculated does not match/);
    expectRefused(await send(proxy.url, headers, BODY, CONVERSE.replace('/converse', '/invoke')), /signature we calculated does not match/);
    expectRefused(await send(proxy.url, { ...headers, 'content-type': 'text/plain' }), /signature we calculated does not match/);
    // The body's hash stated in a header is checked against the body.
    const stated = await sdkSigned(proxy.url, { headers: { 'x-amz-content-sha256': createHash('sha256').update(BODY).digest('hex') } });
    expectRefused(await send(proxy.url, stated, BODY.replace('hello', 'HELLO')), /x-amz-content-sha256/);
    expect(upstreamCalls()).toBe(before);
  });

  it('a signature older than 15 minutes (a replay), or dated in the future: 403, nothing upstream', async () => {
    const before = upstreamCalls();
    const old = await sdkSigned(proxy.url, { date: new Date(Date.now() - 16 * MIN) });
    expectRefused(await send(proxy.url, old), /Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z/);
    const future = await sdkSigned(proxy.url, { date: new Date(Date.now() + 16 * MIN) });
    expectRefused(await send(proxy.url, future), /Signature not yet current: \d{8}T\d{6}Z is still later than \d{8}T\d{6}Z/);
    expect(upstreamCalls()).toBe(before);
    // Inside the window (a client clock 14 minutes behind) it is still the client's.
    const late = await sdkSigned(proxy.url, { date: new Date(Date.now() - 14 * MIN) });
    expect((await send(proxy.url, late)).status).toBe(200);
    expect(upstreamCalls()).toBe(before + 1);
  });

  it('a valid signature scoped to another service (sts GetCallerIdentity, or sts on a Bedrock route): 403, nothing upstream', async () => {
    const before = upstreamCalls();
    const form = 'Action=GetCallerIdentity&Version=2011-06-15';
    const sts = await sdkSigned(proxy.url, { service: 'sts', path: '/', body: form, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expectRefused(await send(proxy.url, sts, form, '/'), /scoped to correct service: 'bedrock'; it is scoped to 'sts'/);
    const stsOnBedrock = await sdkSigned(proxy.url, { service: 'sts' });
    expectRefused(await send(proxy.url, stsOnBedrock), /scoped to correct service: 'bedrock'; it is scoped to 'sts'/);
    expect(upstreamCalls()).toBe(before);
  });

  it('an unsigned payload is accepted as AWS accepts it; a chunk-signed one is refused (it cannot be signed again)', async () => {
    const before = upstreamCalls();
    const unsigned = await sdkSigned(proxy.url, { headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
    expect((await send(proxy.url, unsigned)).status).toBe(200);
    expect(up.seen.at(-1)!.headers['x-amz-content-sha256']).toBe('UNSIGNED-PAYLOAD');
    const chunked = await sdkSigned(proxy.url, { headers: { 'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' } });
    expectRefused(await send(proxy.url, chunked), /STREAMING-AWS4-HMAC-SHA256-PAYLOAD/);
    expect(upstreamCalls()).toBe(before + 1);
  });

  it('over HTTP/2, a signed host sent as :authority verifies; a made-up signature does not', async () => {
    const before = upstreamCalls();
    const headers = await sdkSigned(proxy.url);
    expect((await sendH2(proxy.url, headers)).status).toBe(200);
    expect(upstreamCalls()).toBe(before + 1);
    const forged = { ...headers, authorization: headers.authorization!.replace(/Signature=[0-9a-f]+/, 'Signature=00') };
    expectRefused(await sendH2(proxy.url, forged), /signature we calculated does not match/);
    expect(upstreamCalls()).toBe(before + 1);
  });

  it('a request signed with another access key id goes upstream exactly as sent', async () => {
    const headers = await sdkSigned(proxy.url, { creds: OTHER });
    expect((await send(proxy.url, headers)).status).toBe(200);
    const got = up.seen.at(-1)!;
    for (const name of ['authorization', 'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256']) expect(got.headers[name], name).toBe(headers[name]);
    expect(got.body).toBe(BODY);
    // Presigned (query-string) signatures are not re-signed either, whoever's key they name.
    const query = `?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${CREDENTIALS.accessKeyId}%2F20261128%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Date=20261128T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=00`;
    expect((await send(proxy.url, { 'content-type': 'application/json' }, BODY, CONVERSE + query)).status).toBe(200);
    expect(up.seen.at(-1)!.headers.authorization).toBeUndefined();
    expect(up.seen.at(-1)!.url).toBe(CONVERSE + query);
  });
});

describe('the AWS SDK through the proxy (HTTP/2, as shipped, and HTTP/1.1)', () => {
  const converse = (text: string) => new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text }] }] });

  it('records with the right secret; a client with the proxy’s key id and a wrong secret gets InvalidSignatureException and nothing goes upstream', async () => {
    const tape = join(dir, 'sdk.tape');
    const fake = await startBedrock({ verifyCredentials: CREDENTIALS });
    const proxy = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, awsCredentials: CREDENTIALS, onWarning: () => {} });
    try {
      for (const http1 of [false, true]) {
        const ok = awsClient(proxy.url, { http1 });
        expect((await ok.send(converse(`right secret ${http1}`))).output?.message?.content?.[0]?.text).toMatch(/^Echo \d+: right secret/);
        ok.destroy();
      }
      expect(fake.calls).toHaveLength(2);
      for (const http1 of [false, true]) {
        const { BedrockRuntimeClient } = await import('@aws-sdk/client-bedrock-runtime');
        const { NodeHttpHandler } = await import('@smithy/node-http-handler');
        const bad = new BedrockRuntimeClient({ region: 'us-east-1', endpoint: proxy.url, maxAttempts: 1, credentials: { ...CREDENTIALS, secretAccessKey: 'guessed' }, ...(http1 ? { requestHandler: new NodeHttpHandler() } : {}) });
        const err = (await bad.send(converse('wrong secret')).catch((e: unknown) => e)) as Error & { $metadata?: { httpStatusCode?: number } };
        bad.destroy();
        expect(err.name).toBe('InvalidSignatureException');
        expect(err.$metadata?.httpStatusCode).toBe(403);
        expect(err.message).toMatch(/signature we calculated does not match/);
      }
      expect(fake.calls).toHaveLength(2);
    } finally {
      await proxy.close();
      await fake.close();
    }
    expect(existsSync(tape)).toBe(true);
    expect((await readTape(tape)).records.filter((r) => isHttpRecord(r.value))).toHaveLength(2);
  });
});
