/**
 * AWS Signature Version 4 for request headers (the `AWS4-HMAC-SHA256` scheme), as AWS computes
 * it for every service but S3: the proxy checks a client's signature and re-signs the request
 * for the host it forwards it to.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** An AWS identity: the access key pair and, for temporary credentials, the session token. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** What an `Authorization: AWS4-HMAC-SHA256 …` header says. */
export interface SigV4Authorization {
  accessKeyId: string;
  /** The scope's date, `YYYYMMDD`. */
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  /** The signature, as sent (hex). */
  signature: string;
}

const AUTH = /^AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request\s*,\s*SignedHeaders=([^,\s]+)\s*,\s*Signature=([0-9a-f]+)\s*$/i;

/**
 * Reads a SigV4 Authorization header; undefined for anything else (a Bearer token, Basic auth).
 *
 * @example
 * parseSigV4('AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=ab12')
 * // { accessKeyId: 'AKID', date: '20260101', region: 'us-east-1', service: 'bedrock', signedHeaders: ['host', 'x-amz-date'], signature: 'ab12' }
 */
export function parseSigV4(authorization: string | undefined): SigV4Authorization | undefined {
  const m = authorization === undefined ? null : AUTH.exec(authorization);
  if (!m) return undefined;
  return { accessKeyId: m[1]!, date: m[2]!, region: m[3]!, service: m[4]!, signedHeaders: m[5]!.toLowerCase().split(';'), signature: m[6]! };
}

// RFC 3986 unreserved characters stay, everything else is %XX (upper case), as AWS asks.
function escape(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The canonical URI: the path as sent (already percent-encoded by the client, so a model id's
 * `:` arrives as `%3A`), dot and empty segments removed, then each segment encoded once more
 * (`%3A` becomes `%253A`), as AWS does for every service but S3.
 */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const s of path.split('/')) {
    if (s === '' || s === '.') continue;
    if (s === '..') segments.pop();
    else segments.push(s);
  }
  const joined = (path.startsWith('/') ? '/' : '') + segments.join('/') + (segments.length > 0 && path.endsWith('/') ? '/' : '');
  return escape(joined).replace(/%2F/g, '/');
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The canonical query: names and values decoded, encoded the AWS way, sorted by name then value. */
function canonicalQuery(search: string): string {
  const byName = new Map<string, string[]>();
  for (const pair of search.replace(/^\?/, '').split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const name = escape(decode(eq < 0 ? pair : pair.slice(0, eq)));
    const value = escape(decode(eq < 0 ? '' : pair.slice(eq + 1)));
    if (name.toLowerCase() === 'x-amz-signature') continue;
    const list = byName.get(name) ?? [];
    list.push(`${name}=${value}`);
    byName.set(name, list);
  }
  return [...byName.keys()]
    .sort()
    .map((n) => byName.get(n)!.sort().join('&'))
    .join('&');
}

const hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/**
 * A time as SigV4 writes it, `YYYYMMDDTHHMMSSZ`.
 *
 * @example
 * amzDate(new Date('2026-11-26T02:45:07.123Z')) // '20261126T024507Z'
 */
export function amzDate(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z').replace(/[-:]/g, '');
}

/** A request to sign: method, absolute URL (its host is the one signed), headers, body bytes. */
export interface SignableRequest {
  method: string;
  url: string;
  /** Lower-case names; a repeated header's values are signed joined with `,`. */
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
}

/** A header value as SigV4 signs it: repeated values joined with `,`, runs of spaces made one, trimmed. */
function canonicalValue(v: string | string[]): string {
  return (Array.isArray(v) ? v.join(',') : v).replace(/[\r\n]/g, ' ').replace(/[ \t]+/g, ' ').trim();
}

/**
 * The signature of a canonical request (`canonical`: the signed headers' names, lower case, to
 * their canonical values), per the SigV4 spec: canonical request, string to sign, signing key.
 */
function signatureOf(secret: string, method: string, path: string, search: string, canonical: Record<string, string>, payloadHash: string, longDate: string, scope: { region: string; service: string }): { signature: string; signedHeaders: string; credentialScope: string } {
  const names = Object.keys(canonical).sort();
  const signedHeaders = names.join(';');
  const canonicalRequest = [method.toUpperCase(), canonicalPath(path), canonicalQuery(search), names.map((n) => `${n}:${canonical[n]}`).join('\n') + '\n', signedHeaders, payloadHash].join('\n');
  const shortDate = longDate.slice(0, 8);
  const credentialScope = `${shortDate}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', longDate, credentialScope, hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${secret}`, shortDate);
  for (const part of [scope.region, scope.service, 'aws4_request']) key = hmac(key, part);
  return { signature: createHmac('sha256', key).update(stringToSign).digest('hex'), signedHeaders, credentialScope };
}

/**
 * Signs a request with SigV4 for the host of its URL. Returns its headers with `x-amz-date`,
 * `x-amz-content-sha256` (when absent: the body's SHA-256), `x-amz-security-token` (set from the
 * credentials, or removed) and `authorization` replaced; signed are `host` and every `x-amz-*`
 * header.
 *
 * @example
 * const headers = signSigV4({ method: 'POST', url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse', headers: { 'content-type': 'application/json' }, body }, creds, { region: 'us-east-1', service: 'bedrock' })
 */
export function signSigV4(req: SignableRequest, creds: AwsCredentials, scope: { region: string; service: string }, now: Date = new Date()): Record<string, string | string[]> {
  const url = new URL(req.url);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && k !== 'authorization' && k !== 'x-amz-date' && k !== 'x-amz-security-token') out[k] = v;
  const longDate = amzDate(now);
  out['x-amz-date'] = longDate;
  if (creds.sessionToken) out['x-amz-security-token'] = creds.sessionToken;
  const payloadHash = typeof out['x-amz-content-sha256'] === 'string' ? out['x-amz-content-sha256'] : hex(req.body);
  out['x-amz-content-sha256'] ??= payloadHash;

  const canonical: Record<string, string> = { host: url.host };
  for (const [k, v] of Object.entries(out)) if (k.startsWith('x-amz-')) canonical[k] = canonicalValue(v);
  const { signature, signedHeaders, credentialScope } = signatureOf(creds.secretAccessKey, req.method, url.pathname, url.search, canonical, payloadHash, longDate, scope);
  out.authorization = `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return out;
}

/** A payload hash a client may sign instead of the body's SHA-256: the body is then not signed at all. */
export const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

/**
 * Why a request's SigV4 signature is not right for `secret`, or undefined when it is. The request
 * is the one received (`url` its path and query as sent, `headers` as they came, `host` included); its
 * payload hash is `x-amz-content-sha256` when sent, which must then be the body's SHA-256 or
 * `UNSIGNED-PAYLOAD`. The signature is compared in constant time. Checks nothing but the
 * signature: dates, scopes and key ids are the caller's policy.
 *
 * @example
 * sigV4Mismatch({ method: 'POST', url: '/model/m/converse', headers, body }, parseSigV4(headers.authorization)!, secret) // undefined
 */
export function sigV4Mismatch(req: SignableRequest, sig: SigV4Authorization, secret: string): string | undefined {
  const stated = req.headers['x-amz-content-sha256'];
  let payloadHash: string;
  if (stated === undefined) payloadHash = hex(req.body);
  else if (typeof stated !== 'string') return 'x-amz-content-sha256 is sent more than once';
  else if (stated === UNSIGNED_PAYLOAD) payloadHash = stated;
  else if (/^[0-9a-f]{64}$/.test(stated)) {
    if (stated !== hex(req.body)) return 'the x-amz-content-sha256 header is not the SHA-256 of the body sent';
    payloadHash = stated;
  } else {
    return `x-amz-content-sha256 is ${JSON.stringify(stated.slice(0, 60))}: only the body's SHA-256 or ${UNSIGNED_PAYLOAD} can be signed again (a chunk-signed or trailer payload carries signatures made from the client's)`;
  }
  const canonical: Record<string, string> = {};
  for (const name of sig.signedHeaders) {
    const v = req.headers[name];
    if (v === undefined) return `the signed header ${JSON.stringify(name)} is missing`;
    canonical[name] = canonicalValue(v);
  }
  const longDate = req.headers['x-amz-date'];
  if (typeof longDate !== 'string') return 'x-amz-date is missing';
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const expected = Buffer.from(signatureOf(secret, req.method, path, q < 0 ? '' : req.url.slice(q), canonical, payloadHash, longDate, sig).signature);
  const given = Buffer.from(sig.signature);
  // Equal lengths for timingSafeEqual; a length says nothing about the secret.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "it was not made with this access key's secret over the bytes received (method, path, query, signed headers, body)";
  return undefined;
}
