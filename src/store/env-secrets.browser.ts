/** env-secrets.ts for browser builds: a page records nothing, so no upload is masked here. */
import type { Redactor } from './redact.ts';

/** The text as it is (see env-secrets.ts). */
export function envSecrets(text: string, _r: Redactor): string {
  return text;
}
