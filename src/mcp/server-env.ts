/**
 * The secrets of the environment `tapedeck mcp` starts its server with: the values the tape
 * must not hold when the server repeats them (a debug tool printing its token, a command's
 * output). Node-only: a page starts no server.
 */
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { redactor, type Redactor } from '../store/redact.ts';

let names: Redactor | undefined;

/**
 * The variables of `env` whose name says they hold a secret: the names redaction masks as JSON
 * members (`DATABASE_PASSWORD`, `OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`, `HF_TOKEN`), and any
 * name ending in `TOKEN` (`SVC_TOKEN`: in an environment a token is a credential, never a
 * tokenizer's). Not a value that names a file or folder that exists: `PWD` is the working
 * directory (`pwd` is a password's name), `GOOGLE_APPLICATION_CREDENTIALS` the path of a key
 * file, and masking them would mask every path a file server answers with.
 *
 * @example
 * serverSecrets({ SVC_TOKEN: 'f3a9c2e1…', PWD: process.cwd(), HOME: '/root' }) // { SVC_TOKEN: 'f3a9c2e1…' }
 */
export function serverSecrets(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const r = (names ??= redactor());
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '') continue;
    if (!r.isSecretField(name) && !/token$/i.test(name)) continue;
    if (isAbsolute(value) && existsSync(value)) continue;
    out[name] = value;
  }
  return out;
}
