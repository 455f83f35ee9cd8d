// Recording SigV4-signed Bedrock calls through the proxy. The client signs the proxy's host; the
// loopback Bedrock checks signatures for its own host with the AWS SDK's signer, as AWS does.
// With the client's credentials in its environment the proxy re-signs and the call is recorded;
// with another identity's it forwards the request as signed, Bedrock refuses, the proxy says
// once how to fix it, and nothing is recorded.
import { ConverseCommand, ConverseStreamCommand, type ConverseStreamOutput } from '@aws-sdk/client-bedrock-runtime';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { awsClient, CREDENTIALS, MODEL, MODEL_ARN, SECRETS } from './bedrock-clients.ts';
import { startBedrock } from './fake-bedrock.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-sigv4-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const converse = (text: string, modelId = MODEL) => new ConverseCommand({ modelId, messages: [{ role: 'user', content: [{ text }] }] });
async function streamText(stream: AsyncIterable<ConverseStreamOutput> | undefined): Promise<string> {
  let out = '';
  for await (const e of stream!) out += e.contentBlockDelta?.delta?.text ?? '';
  return out;
}
async function recordCount(tape: string): Promise<number> {
  if (!existsSync(tape)) return 0;
  return (await readTape(tape)).records.filter((r) => isHttpRecord(r.value)).length;
}

describe('SigV4 through the proxy', () => {
  it('the loopback Bedrock accepts the SDK signing its own host and refuses a signature for another', async () => {
    const fake = await startBedrock({ verifyCredentials: CREDENTIALS });
    const direct = awsClient(fake.url, { http1: true }); // the fake speaks HTTP/1.1 only
    const ok = await direct.send(converse('direct'));
    expect(ok.output?.message?.content?.[0]?.text).toMatch(/^Echo \d+: direct$/);
    direct.destroy();
    // Forwarded unchanged, the signature names the proxy's host: refused.
    const proxy = await startProxy({ upstream: fake.url, mode: 'passthrough', port: 0, awsCredentials: false, onWarning: () => {} });
    const viaProxy = awsClient(proxy.url);
    const err = (await viaProxy.send(converse('via proxy')).catch((e: unknown) => e)) as Error;
    expect(err.name).toBe('InvalidSignatureException');
    viaProxy.destroy();
    await proxy.close();
    await fake.close();
  });

  it('re-signs for the upstream with the same credentials from its environment, and records', async () => {
    const tape = join(dir, 'resigned.tape');
    const fake = await startBedrock({ verifyCredentials: CREDENTIALS, gapMs: 1 });
    const warnings: string[] = [];
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, awsCredentials: CREDENTIALS, onWarning: (m) => warnings.push(m) });
    const client = awsClient(rec.url); // HTTP/2 to the proxy, as shipped
    const plain = await client.send(converse('hello signed'));
    const streamed = await streamText((await client.send(new ConverseStreamCommand({ modelId: MODEL_ARN, messages: [{ role: 'user', content: [{ text: 'stream signed' }] }] }))).stream);
    const h1 = awsClient(rec.url, { http1: true });
    const viaH1 = await h1.send(converse('hello over http/1.1'));
    client.destroy();
    h1.destroy();
    await rec.close();
    await fake.close();
    expect(plain.output?.message?.content?.[0]?.text).toMatch(/^Echo \d+: hello signed$/);
    expect(streamed).toMatch(/^Echo \d+: stream signed $/);
    expect(viaH1.output?.message?.content?.[0]?.text).toMatch(/^Echo \d+: hello over http\/1\.1$/);
    expect(warnings).toEqual([]);
    // Bedrock saw a signature by the client's access key, for its own host.
    for (const c of fake.calls) expect(String(c.headers.authorization)).toMatch(new RegExp(`^AWS4-HMAC-SHA256 Credential=${CREDENTIALS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request, SignedHeaders=host;`));
    expect(await recordCount(tape)).toBe(3);
    const bytes = readFileSync(tape);
    for (const s of [...SECRETS, 'Signature=', 'AWS4-HMAC-SHA256']) expect(bytes.includes(Buffer.from(s)), `${s} on the tape`).toBe(false);

    // Replay needs no signature at all.
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    const again = awsClient(play.url);
    expect((await again.send(converse('hello signed'))).output).toEqual(plain.output);
    again.destroy();
    await play.close();
  });

  it('takes the credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN by default', async () => {
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY, token: process.env.AWS_SESSION_TOKEN };
    const restore = (k: string, v: string | undefined) => (v === undefined ? delete process.env[k] : (process.env[k] = v));
    process.env.AWS_ACCESS_KEY_ID = CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = CREDENTIALS.secretAccessKey;
    process.env.AWS_SESSION_TOKEN = CREDENTIALS.sessionToken;
    const tape = join(dir, 'env.tape');
    const fake = await startBedrock({ verifyCredentials: CREDENTIALS });
    try {
      const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
      const client = awsClient(rec.url);
      expect((await client.send(converse('from env'))).output?.message?.content?.[0]?.text).toMatch(/^Echo \d+: from env$/);
      client.destroy();
      await rec.close();
      expect(await recordCount(tape)).toBe(1);
    } finally {
      restore('AWS_ACCESS_KEY_ID', saved.id);
      restore('AWS_SECRET_ACCESS_KEY', saved.secret);
      restore('AWS_SESSION_TOKEN', saved.token);
      await fake.close();
    }
  });

  it("never signs for another identity: forwarded as signed, refused, one warning with the fix, nothing recorded", async () => {
    const tape = join(dir, 'foreign.tape');
    const fake = await startBedrock({ verifyCredentials: CREDENTIALS });
    const warnings: string[] = [];
    const other = { accessKeyId: 'AKIAPROXYOWNIDENTITY', secretAccessKey: 'proxyOwnSecret/abcdefghijklmnopqrstuvwxyz' };
    const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, awsCredentials: other, onWarning: (m) => warnings.push(m) });
    const client = awsClient(rec.url);
    const errs: Error[] = [];
    for (const text of ['first', 'second']) errs.push((await client.send(converse(text)).catch((e: unknown) => e)) as Error);
    client.destroy();
    await rec.close();
    await fake.close();
    expect(errs.map((e) => e.name)).toEqual(['InvalidSignatureException', 'InvalidSignatureException']);
    // The proxy's own key never went upstream: Bedrock saw the client's signature unchanged.
    for (const c of fake.calls) expect(String(c.headers.authorization)).toContain(`Credential=${CREDENTIALS.accessKeyId}/`);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).not.toContain('\n');
    expect(warnings[0]).toMatch(/InvalidSignatureException/);
    expect(warnings[0]).toMatch(/AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN/);
    expect(warnings[0]).toMatch(/AWS_BEARER_TOKEN_BEDROCK/);
    for (const s of [...SECRETS, other.secretAccessKey]) expect(warnings[0]).not.toContain(s);
    expect(await recordCount(tape)).toBe(0);
  });
});
