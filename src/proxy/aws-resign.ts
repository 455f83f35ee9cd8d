/**
 * SigV4 requests through the proxy: the client signed the proxy's host, the upstream checks its
 * own. The proxy re-signs for the upstream, but only with the very identity the client signed
 * with (same access key id, from the proxy's environment): it never signs for anyone else.
 */
import type { DeckRequest } from './deck.ts';
import { parseSigV4, signSigV4, type AwsCredentials } from './sigv4.ts';

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
 * another host and `creds` hold the access key it was signed with; otherwise as it came.
 *
 * @example
 * const { req, outcome } = resignForUpstream(dreq, 'https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse', creds)
 */
export function resignForUpstream(req: DeckRequest, url: string, creds: AwsCredentials | undefined, now?: Date): { req: DeckRequest; outcome: SigV4Outcome } {
  const auth = req.headers.authorization;
  const sig = parseSigV4(typeof auth === 'string' ? auth : undefined);
  const signedHost = req.headers.host;
  const upstreamHost = new URL(url).host;
  if (!sig || typeof signedHost !== 'string' || signedHost.toLowerCase() === upstreamHost) return { req, outcome: { kind: 'none' } };
  if (!creds || creds.accessKeyId !== sig.accessKeyId) return { req, outcome: { kind: 'kept', signedHost, upstreamHost } };
  const headers = signSigV4({ method: req.method, url, headers: req.headers, body: req.body }, creds, sig, now);
  return { req: { ...req, headers }, outcome: { kind: 'resigned' } };
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
