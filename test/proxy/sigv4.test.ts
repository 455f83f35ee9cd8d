// tapedeck's SigV4 signer against the AWS SDK's own (@smithy/signature-v4) on the same requests:
// the Authorization headers must be identical, byte for byte.
import { Sha256 } from '@smithy/core/checksum';
import { HttpRequest } from '@smithy/core/protocols';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { awsCredentialsFromEnv, checkClientSignature, resignForUpstream } from '../../src/proxy/aws-resign.ts';
import { parseSigV4, signSigV4, sigV4Mismatch, type AwsCredentials } from '../../src/proxy/sigv4.ts';

const creds: AwsCredentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const withToken: AwsCredentials = { ...creds, sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//token+with/odd=chars' };
const date = new Date('2026-11-26T02:45:07Z');

interface Case {
  name: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  creds?: AwsCredentials;
  service?: string;
}

const cases: Case[] = [
  { name: 'Converse with an encoded model id (":" as %3A)', method: 'POST', url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse', body: '{"messages":[]}' },
  { name: 'an ARN model id (":" and "/" encoded)', method: 'POST', url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-v1%3A0/converse-stream', body: '{}' },
  { name: 'a raw ":" and a literal "%25" in the path', method: 'POST', url: 'http://127.0.0.1:8080/model/a:b%25c/invoke', body: 'x' },
  { name: 'a query string, repeated and unsorted names, odd characters', method: 'GET', url: 'https://bedrock.us-west-2.amazonaws.com/foundation-models?byProvider=anthropic&b=2&a=z&a=y&empty=&flag&sp=a%20b&star=*', service: 'bedrock' },
  { name: 'a session token and extra x-amz headers with odd spacing', method: 'POST', url: 'https://bedrock-runtime.eu-west-1.amazonaws.com/model/m/invoke', headers: { 'x-amz-user-agent': 'aws-sdk-js/3.0   ua', 'x-amzn-bedrock-trace': 'ENABLED' }, body: '{"a":1}', creds: withToken },
  { name: 'a given x-amz-content-sha256', method: 'PUT', url: 'https://example.amazonaws.com/a/./b/../c/', headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }, body: 'payload', service: 'execute-api' },
  { name: 'an empty body', method: 'POST', url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse' },
];

async function sdkSign(c: Case, region: string, service: string): Promise<string> {
  return (await sdkSignedHeaders(c, region, service)).authorization!;
}

/** Every header of the SDK's signed request (host, x-amz-*, authorization). */
async function sdkSignedHeaders(c: Case, region: string, service: string): Promise<Record<string, string>> {
  const url = new URL(c.url);
  const query: Record<string, string | string[]> = {};
  // The SDK holds query values decoded, as its HttpRequest does.
  for (const pair of url.search.slice(1).split('&').filter(Boolean)) {
    const [k, v = ''] = pair.split('=').map(decodeURIComponent) as [string, string?];
    query[k] = k in query ? [query[k]!, v].flat() : v;
  }
  // Only headers tapedeck signs: host and x-amz-* (the SDK would sign content-type too).
  const headers: Record<string, string> = { host: url.host };
  for (const [k, v] of Object.entries(c.headers ?? {})) if (k.startsWith('x-amz-')) headers[k] = v;
  const signer = new SignatureV4({ credentials: c.creds ?? creds, region, service, sha256: Sha256 });
  const out = await signer.sign(new HttpRequest({ method: c.method, protocol: url.protocol, hostname: url.hostname, path: url.pathname, query, headers, body: c.body }), { signingDate: date });
  return out.headers as Record<string, string>;
}

describe('SigV4 signer', () => {
  for (const c of cases) {
    it(`signs as the AWS SDK does: ${c.name}`, async () => {
      const region = new URL(c.url).hostname.split('.')[1] ?? 'us-east-1';
      const scope = { region: /^[a-z]{2}-[a-z]+-\d$/.test(region) ? region : 'us-east-1', service: c.service ?? 'bedrock' };
      const ours = signSigV4({ method: c.method, url: c.url, headers: { 'content-type': 'application/json', 'user-agent': 'tapedeck-test', ...c.headers }, body: Buffer.from(c.body ?? '') }, c.creds ?? creds, scope, date);
      expect(ours.authorization).toBe(await sdkSign(c, scope.region, scope.service));
      expect(ours['x-amz-date']).toBe('20261126T024507Z');
      expect(ours['x-amz-security-token']).toBe(c.creds?.sessionToken);
      expect(ours['user-agent']).toBe('tapedeck-test');
    });
  }

  for (const c of cases) {
    it(`verifies what the AWS SDK signs, and nothing else: ${c.name}`, async () => {
      const url = new URL(c.url);
      const region = url.hostname.split('.')[1] ?? 'us-east-1';
      const scope = { region: /^[a-z]{2}-[a-z]+-\d$/.test(region) ? region : 'us-east-1', service: c.service ?? 'bedrock' };
      const headers = await sdkSignedHeaders(c, scope.region, scope.service);
      const authorization = headers.authorization!;
      const received = { method: c.method, url: url.pathname + url.search, headers, body: Buffer.from(c.body ?? '') };
      const sig = parseSigV4(authorization)!;
      expect(sigV4Mismatch(received, sig, (c.creds ?? creds).secretAccessKey)).toBeUndefined();
      expect(sigV4Mismatch(received, sig, 'another secret')).toMatch(/not made with this access key's secret/);
      expect(sigV4Mismatch({ ...received, method: c.method === 'POST' ? 'PUT' : 'POST' }, sig, (c.creds ?? creds).secretAccessKey)).toBeDefined();
      expect(sigV4Mismatch({ ...received, url: received.url.replace(/\/[^/?]*(\?|$)/, '/x$1') }, sig, (c.creds ?? creds).secretAccessKey)).toBeDefined();
      if (c.headers?.['x-amz-content-sha256'] === undefined) expect(sigV4Mismatch({ ...received, body: Buffer.from(`${c.body ?? ''}!`) }, sig, (c.creds ?? creds).secretAccessKey)).toBeDefined();
    });
  }

  it('reads the Credential scope and signed headers of an Authorization header, nothing else', () => {
    expect(parseSigV4('AWS4-HMAC-SHA256 Credential=AKID/20261126/us-east-1/bedrock/aws4_request, SignedHeaders=host;X-Amz-Date, Signature=0a1b')).toEqual({ accessKeyId: 'AKID', date: '20261126', region: 'us-east-1', service: 'bedrock', signedHeaders: ['host', 'x-amz-date'], signature: '0a1b' });
    expect(parseSigV4('Bearer ABSK...')).toBeUndefined();
    expect(parseSigV4('AWS4-HMAC-SHA256 Credential=AKID/2026/us-east-1/bedrock/aws4_request, Signature=0a')).toBeUndefined();
    expect(parseSigV4(undefined)).toBeUndefined();
  });

  it('re-signs only for another host, only with the access key the client signed with, and only once its signature verifies', async () => {
    // The client's request, signed for the proxy's host by the AWS SDK's signer.
    const body = Buffer.from('{"messages":[]}');
    const client = await new SignatureV4({ credentials: creds, region: 'us-east-1', service: 'bedrock', sha256: Sha256 }).sign(
      new HttpRequest({ method: 'POST', protocol: 'http:', hostname: '127.0.0.1', port: 8080, path: '/model/m/converse', headers: { host: '127.0.0.1:8080', 'content-type': 'application/json' }, body }),
      { signingDate: new Date(date.getTime() - 60_000) },
    );
    const req = { method: 'POST', url: '/model/m/converse', headers: client.headers as Record<string, string>, body };
    const up = 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse';
    const resigned = resignForUpstream(req, up, creds, date);
    expect(resigned.outcome.kind).toBe('resigned');
    expect(resigned.req.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/20261126\/us-east-1\/bedrock\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, /);
    expect(resigned.req.headers.host).toBe('127.0.0.1:8080'); // not forwarded: fetch sets the upstream's
    // A made-up signature with the same key id is never signed again.
    const forged = { ...req, headers: { ...req.headers, authorization: String(req.headers.authorization).replace(/Signature=[0-9a-f]+/, 'Signature=00') } };
    expect(() => resignForUpstream(forged, up, creds, date)).toThrow(expect.objectContaining({ code: 'E_SIGNATURE' }));
    expect(() => checkClientSignature(forged, parseSigV4(forged.headers.authorization)!, creds, date)).toThrow(/signature we calculated does not match/);
    expect(() => checkClientSignature(req, parseSigV4(req.headers.authorization)!, creds, new Date(date.getTime() + 15 * 60_000))).toThrow(/Signature expired/);
    expect(() => checkClientSignature(req, parseSigV4(req.headers.authorization)!, creds, date)).not.toThrow();
    // Another key id, or no credentials: forwarded as signed, unchecked.
    expect(resignForUpstream(forged, up, { ...creds, accessKeyId: 'AKIAOTHERKEY' }).outcome).toEqual({ kind: 'kept', signedHost: '127.0.0.1:8080', upstreamHost: 'bedrock-runtime.us-east-1.amazonaws.com' });
    expect(resignForUpstream(forged, up, undefined).outcome.kind).toBe('kept');
    expect(resignForUpstream(forged, 'http://127.0.0.1:8080/model/m/converse', creds).outcome.kind).toBe('none');
    expect(resignForUpstream({ ...req, headers: { ...req.headers, authorization: 'Bearer x' } }, up, creds).outcome.kind).toBe('none');
    // Failed before: an x-amz-* header added after the client signed (its signature still checks
    // out: the header is not in it) was signed by the proxy's key. It is dropped instead.
    const added = { ...req, headers: { ...req.headers, 'x-amz-target': 'evil' } };
    const out = resignForUpstream(added, up, creds, date);
    expect(out.outcome.kind).toBe('resigned');
    expect(out.req.headers['x-amz-target']).toBeUndefined();
    expect(out.req.headers.authorization).toMatch(/SignedHeaders=host;x-amz-content-sha256;x-amz-date, /);
  });

  it('takes credentials from the environment only when the key pair is complete', () => {
    expect(awsCredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: 'S', AWS_SESSION_TOKEN: 'T' })).toEqual({ accessKeyId: 'A', secretAccessKey: 'S', sessionToken: 'T' });
    expect(awsCredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: 'S' })).toEqual({ accessKeyId: 'A', secretAccessKey: 'S' });
    expect(awsCredentialsFromEnv({ AWS_ACCESS_KEY_ID: 'A' })).toBeUndefined();
  });
});
