/**
 * AWS Signature Version 4 for request headers (the `AWS4-HMAC-SHA256` scheme), as AWS computes
 * it for every service but S3: the proxy re-signs a request for the host it forwards it to.
 */
import { createHash, createHmac } from 'node:crypto';

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
}

const AUTH = /^AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request\s*,\s*SignedHeaders=([^,\s]+)\s*,\s*Signature=[0-9a-f]+\s*$/i;

/**
 * Reads a SigV4 Authorization header; undefined for anything else (a Bearer token, Basic auth).
 *
 * @example
 * parseSigV4('AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=ab12')
 * // { accessKeyId: 'AKID', date: '20260101', region: 'us-east-1', service: 'bedrock', signedHeaders: ['host', 'x-amz-date'] }
 */
export function parseSigV4(authorization: string | undefined): SigV4Authorization | undefined {
  const m = authorization === undefined ? null : AUTH.exec(authorization);
  if (!m) return undefined;
  return { accessKeyId: m[1]!, date: m[2]!, region: m[3]!, service: m[4]!, signedHeaders: m[5]!.toLowerCase().split(';') };
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

/** `YYYYMMDDTHHMMSSZ` */
function amzDate(d: Date): string {
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
  for (const [k, v] of Object.entries(out)) {
    if (!k.startsWith('x-amz-')) continue;
    canonical[k] = (Array.isArray(v) ? v.join(',') : v).replace(/[\r\n]/g, ' ').replace(/[ \t]+/g, ' ').trim();
  }
  const names = Object.keys(canonical).sort();
  const signedHeaders = names.join(';');
  const canonicalRequest = [req.method.toUpperCase(), canonicalPath(url.pathname), canonicalQuery(url.search), names.map((n) => `${n}:${canonical[n]}`).join('\n') + '\n', signedHeaders, payloadHash].join('\n');
  const shortDate = longDate.slice(0, 8);
  const credentialScope = `${shortDate}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', longDate, credentialScope, hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${creds.secretAccessKey}`, shortDate);
  for (const part of [scope.region, scope.service, 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  out.authorization = `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return out;
}
