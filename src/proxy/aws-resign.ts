/**
 * SigV4 requests through the proxy: the client signed the proxy's host, the upstream checks its
 * own. The proxy re-signs for the upstream, but only with the very identity the client signed
 * with (same access key id, from the proxy's environment), and only once the client's signature
 * proves it holds that identity's secret: the key id is no secret, so without the check anyone
 * who can reach the proxy would act as its AWS identity.
 */
import { TapedeckError } from '../errors.ts';
import { sigV4ServicesOf } from '../providers/index.ts';
import type { DeckRequest } from './deck.ts';
import { amzDate, parseSigV4, signSigV4, sigV4Mismatch, type AwsCredentials, type SigV4Authorization } from './sigv4.ts';

/** How far a signature's X-Amz-Date may be from the proxy's clock, either way (AWS's window). */
export const SIGV4_WINDOW_MS = 15 * 60_000;

/**
 * What happened to a request's signature on its way upstream: `none` (not SigV4, or signed for
 * the upstream's host already), `resigned`, or `kept` (signed for another host and left so: the
 * proxy has no credentials for that access key; the upstream will refuse it).
 */
export type SigV4Outcome = { kind: 'none' | 'resigned' } | { kind: 'kept'; signedHost: string; upstreamHost: string };

/**
 * AWS credentials from an environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN); undefined when the key pair is not both set.
 *
 * @example
 * awsCredentialsFromEnv(process.env) // { accessKeyId: 'AKIA…', secretAccessKey: '…' }
 */
export function awsCredentialsFromEnv(env: Record<string, string | undefined>): AwsCredentials | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return undefined;
  return env.AWS_SESSION_TOKEN ? { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN } : { accessKeyId, secretAccessKey };
}

/**
 * The request as it goes to `url`: re-signed for its host when it carries a SigV4 signature for
 * another host and `creds` hold the access key it was signed with; otherwise as it came. A
 * signature by that access key is checked first (see {@link checkClientSignature}): one that
 * does not prove the secret throws E_SIGNATURE, and the request must not go upstream.
 * `received`: the headers as they arrived, HTTP/2 pseudo-headers included (an AWS SDK speaking
 * HTTP/2 signs `:authority`, not `host`); default the request's.
 *
 * @example
 * const { req, outcome } = resignForUpstream(dreq, 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse', creds)
 */
export function resignForUpstream(req: DeckRequest, url: string, creds: AwsCredentials | undefined, now: Date = new Date(), received: DeckRequest['headers'] = req.headers): { req: DeckRequest; outcome: SigV4Outcome } {
  const auth = req.headers.authorization;
  const sig = parseSigV4(typeof auth === 'string' ? auth : undefined);
  const signedHost = req.headers.host;
  const upstreamHost = new URL(url).host;
  if (!sig || typeof signedHost !== 'string' || signedHost.toLowerCase() === upstreamHost) return { req, outcome: { kind: 'none' } };
  if (!creds || creds.accessKeyId !== sig.accessKeyId) return { req, outcome: { kind: 'kept', signedHost, upstreamHost } };
  // Over HTTP/2 a client may sign `host` and send it as `:authority` (curl does).
  checkClientSignature({ ...req, headers: received.host === undefined ? { ...received, host: signedHost } : received }, sig, creds, now);
  // Only what the client signed is signed again: an `x-amz-*` header added after the client's
  // signature (a captured request replayed with one more header) would otherwise be vouched for
  // by the proxy's key. Such headers are dropped, not forwarded unsigned (AWS refuses those).
  const signed = new Set(sig.signedHeaders);
  const kept: DeckRequest['headers'] = {};
  for (const [k, v] of Object.entries(req.headers)) if (!k.startsWith('x-amz-') || signed.has(k)) kept[k] = v;
  const headers = signSigV4({ method: req.method, url, headers: kept, body: req.body }, creds, sig, now);
  return { req: { ...req, headers }, outcome: { kind: 'resigned' } };
}

/** `YYYYMMDDTHHMMSSZ` as a time, or NaN. */
function amzTime(s: string): number {
  const m = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/.exec(s);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : NaN;
}

/**
 * Throws E_SIGNATURE (403, AWS's InvalidSignatureException) unless a request signed with the
 * proxy's access key id proves the client holds its secret, in the order AWS checks: the
 * credential scope names a service the request's route is for (`bedrock` for Bedrock), `host`
 * (`:authority` over HTTP/2) and `x-amz-date` are signed, the date is within 15 minutes of the
 * proxy's clock either way and is the scope's date, and the signature recomputed from the
 * request as received (method, path, query, the signed headers, the payload hash) is the one
 * sent.
 *
 * @example
 * checkClientSignature(dreq, parseSigV4(dreq.headers.authorization)!, creds) // throws for `Signature=00`
 */
export function checkClientSignature(req: DeckRequest, sig: SigV4Authorization, creds: AwsCredentials, now: Date = new Date()): void {
  const refuse = (why: string): never => {
    throw new TapedeckError('E_SIGNATURE', `${why} The request is signed with this proxy's access key id (${sig.accessKeyId}), so tapedeck checked its signature before signing it again with its own credentials; nothing was sent upstream.`, {
      hint: "Sign with the same secret access key as the proxy's (AWS_SECRET_ACCESS_KEY), a current clock, and the service of the API the proxy is for.",
    });
  };
  const services = sigV4ServicesOf(req);
  if (!services.includes(sig.service)) refuse(`Credential should be scoped to correct service: ${services.map((s) => `'${s}'`).join(' or ')}; it is scoped to '${sig.service}'.`);
  if (!sig.signedHeaders.includes('host') && !sig.signedHeaders.includes(':authority')) refuse('The signature does not sign the host header (or :authority); AWS requires it signed.');
  const date = req.headers['x-amz-date'];
  const t = typeof date === 'string' ? amzTime(date) : NaN;
  if (Number.isNaN(t) || !sig.signedHeaders.includes('x-amz-date')) refuse('The request has no signed X-Amz-Date (YYYYMMDDTHHMMSSZ); the proxy checks signatures by that date only.');
  const d = date as string;
  const n = now.getTime();
  if (t < n - SIGV4_WINDOW_MS) refuse(`Signature expired: ${d} is now earlier than ${amzDate(new Date(n - SIGV4_WINDOW_MS))} (${amzDate(now)} - 15 min.)`);
  if (t > n + SIGV4_WINDOW_MS) refuse(`Signature not yet current: ${d} is still later than ${amzDate(new Date(n + SIGV4_WINDOW_MS))} (${amzDate(now)} + 15 min.)`);
  if (d.slice(0, 8) !== sig.date) refuse(`Date in Credential scope (${sig.date}) does not match YYYYMMDD from X-Amz-Date (${d}).`);
  const mismatch = sigV4Mismatch(req, sig, creds.secretAccessKey);
  if (mismatch) refuse(`The request signature we calculated does not match the signature you provided: ${mismatch}.`);
}

/**
 * The one-line warning for an upstream that refused a signature the proxy could not re-sign,
 * or undefined when the answer is something else.
 */
export function refusedSignatureWarning(outcome: SigV4Outcome, status: number, errorType: string | null, route: string): string | undefined {
  if (outcome.kind !== 'kept' || status !== 403 || !errorType?.startsWith('InvalidSignatureException')) return undefined;
  return (
    `tapedeck: ${route}: the upstream refused the AWS signature (InvalidSignatureException): the client signed it for ${outcome.signedHost}, not ${outcome.upstreamHost}, ` +
    `and this proxy has no credentials for that access key to re-sign it. Fix: give tapedeck serve the same AWS credentials as the client (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), or use a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK).`
  );
}
