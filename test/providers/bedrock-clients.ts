// The real Bedrock clients, configured as tests use them: static fake credentials (a test scans
// tapes for them), an endpoint on loopback.
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { NodeHttpHandler } from '@smithy/node-http-handler';

// The SDK warns once per process that its 2027 releases need Node 22; the tests run on Node 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

export const CREDENTIALS = {
  accessKeyId: 'AKIATAPEDECKFAKE7Q2X',
  secretAccessKey: 'tApEdEcKfAkEsEcReT/0123456789abcdefGHIJK',
  sessionToken: 'FwoGZXIvYXdzEFAKEtapedeckSessionTokenNeverOnDisk0123456789',
};
export const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS10YXBlZGVja2Zha2UtYXBpLWtleQ==';
/** Every secret the clients send, as it must never appear in a tape's bytes. */
export const SECRETS = [CREDENTIALS.accessKeyId, CREDENTIALS.secretAccessKey, CREDENTIALS.sessionToken, API_KEY];

export const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
export const MODEL_ARN = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0';

/**
 * The AWS SDK client. `http1` switches it to HTTP/1.1 (NodeHttpHandler); by default it speaks
 * HTTP/2 as shipped (cleartext HTTP/2 with prior knowledge to an http:// endpoint).
 */
export function awsClient(endpoint: string, opts: { http1?: boolean } = {}): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    region: 'us-east-1',
    endpoint,
    credentials: CREDENTIALS,
    maxAttempts: 1,
    ...(opts.http1 ? { requestHandler: new NodeHttpHandler() } : {}),
  });
}

/** The AI SDK's Bedrock provider, signing with SigV4, or with a Bedrock API key (Bearer). */
export function aiSdkBedrock(baseURL: string, opts: { apiKey?: boolean; fetch?: typeof fetch } = {}) {
  const f = opts.fetch ? { fetch: opts.fetch } : {};
  return createAmazonBedrock(opts.apiKey ? { baseURL, region: 'us-east-1', apiKey: API_KEY, ...f } : { baseURL, region: 'us-east-1', ...CREDENTIALS, ...f });
}
