// The credentials `tapedeck rerecord` sends where a tape holds them redacted: --header values,
// else the provider's key from the environment. A tape may hold several hosts' recordings (an
// app that falls back from OpenAI to an OpenAI-compatible host sends both the same path), and
// each is sent again to the host it names: a key from the environment goes only to its own
// provider's host, to this machine, or to the --upstream the command line names, never to
// another host that happens to speak the same API (OPENAI_API_KEY sent to api.groq.com would hand
// it to a third party). --hostless-upstream names where the recordings with no host go, so it
// counts as named for those requests only: a recording made for api.groq.com is not sent a key
// because the user named api.groq.com for others.

import { TapedeckError } from '../errors.ts';
import { isLoopbackHost } from '../store/loopback.ts';

/** The hosts each environment key belongs to (a suffix starting with a dot: any host under it). */
const KEY_HOSTS: Readonly<Record<string, readonly string[]>> = {
  OPENAI_API_KEY: ['api.openai.com'],
  ANTHROPIC_API_KEY: ['api.anthropic.com'],
  AZURE_OPENAI_API_KEY: ['.openai.azure.com', '.cognitiveservices.azure.com', '.services.ai.azure.com'],
  GEMINI_API_KEY: ['generativelanguage.googleapis.com'],
  GOOGLE_API_KEY: ['generativelanguage.googleapis.com'],
  // SigV4: the secret never travels, but a signature made with it is the identity's for a while.
  AWS_SECRET_ACCESS_KEY: ['.amazonaws.com', '.amazonaws.com.cn'],
};

/** Whether the environment's `name` key may be sent to `to` (an origin or base URL). */
function keyGoesTo(name: string, to: string, upstream: boolean): boolean {
  if (upstream) return true;
  let host: string;
  let protocol: string;
  try {
    ({ hostname: host, protocol } = new URL(to));
    host = host.toLowerCase();
  } catch {
    return false;
  }
  // This machine (a local proxy, a test server): a key sent there stays on it.
  if (isLoopbackHost(host)) return true;
  // The origin comes from the tape, which anyone who edits it writes: a provider's host over
  // http:// would put the key on the wire in clear for whoever is on the path to read.
  if (protocol !== 'https:') return false;
  return (KEY_HOSTS[name] ?? []).some((h) => (h.startsWith('.') ? host.endsWith(h) : host === h));
}

/**
 * Credentials for the headers a tape holds redacted: --header first (sent wherever the request
 * goes), else the provider's key from the environment (the route says which provider:
 * Anthropic's SDK also sends its key as `authorization: Bearer`), to that provider's host, this
 * machine, or any host when `upstream` (the command line named where every request goes) or
 * when the call says `named` (it named where this one goes: --hostless-upstream, for a
 * recording that names no host).
 *
 * @example
 * const credentials = credentialsFrom(process.env, ['x-api-key: abc'], false)
 * credentials('POST /v1/chat/completions', 'authorization', 'https://api.openai.com') // 'Bearer sk-...'
 * credentials('POST /openai/v1/chat/completions', 'authorization', 'https://api.groq.com') // undefined
 * credentials('POST /v1/chat/completions', 'authorization', 'https://gw.example/openai', true) // 'Bearer sk-...': sent where --hostless-upstream named
 */
export function credentialsFrom(env: NodeJS.ProcessEnv, headers: readonly string[], upstream: boolean): (route: string, header: string, to: string, named?: boolean) => string | undefined {
  const given: Record<string, string> = {};
  for (const h of headers) {
    const i = h.indexOf(':');
    if (i <= 0) {
      // The value given is a credential (`x-api-key=sk-ant-…`, a `=` for the `:`): named by the
      // header name it starts with and its length, never repeated into the log.
      const name = /^[\w-]*[=\s]?/.exec(h)![0];
      throw new TapedeckError('E_ARG', `--header must be "Name: value"; got "${name}…" (${h.length} characters, no ":" after the header name).`, { hint: '--header "x-api-key: $ANTHROPIC_API_KEY"' });
    }
    given[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
  }
  return (route, header, to, named = false) => {
    const fromEnv = (name: string) => (keyGoesTo(name, to, upstream || named) ? env[name] || undefined : undefined);
    if (given[header] !== undefined) return given[header];
    // Gemini takes its key as `?key=` or `x-goog-api-key`.
    if (header === '?key' || header === 'x-goog-api-key') return /\/v1(beta|alpha)?\/(models|tunedModels)\//.test(route) ? (fromEnv('GEMINI_API_KEY') ?? fromEnv('GOOGLE_API_KEY')) : undefined;
    if (header.startsWith('?')) return undefined;
    const anthropic = /\/v1\/(messages|complete)\b/.test(route);
    const key = fromEnv(anthropic ? 'ANTHROPIC_API_KEY' : header === 'api-key' ? 'AZURE_OPENAI_API_KEY' : 'OPENAI_API_KEY');
    if (!key) return undefined;
    if (header === 'authorization') return `Bearer ${key}`;
    if (header === 'x-api-key' || header === 'api-key') return key;
    return undefined;
  };
}

/**
 * Whether the environment's AWS credentials may sign a request going to `to`: an AWS host over
 * https, this machine, or where the command line named (`named`), as for a key.
 *
 * @example
 * awsSignsFor('https://bedrock-runtime.us-east-1.amazonaws.com', false) // true
 * awsSignsFor('http://bedrock-runtime.us-east-1.amazonaws.com', false)  // false: in clear
 */
export function awsSignsFor(to: string, named: boolean): boolean {
  return keyGoesTo('AWS_SECRET_ACCESS_KEY', to, named);
}
