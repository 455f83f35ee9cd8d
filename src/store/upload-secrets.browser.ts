/** upload-secrets.ts for browser builds: a page records nothing, so no upload is masked here. */
import type { Redactor } from './redact.ts';

/** The text as it is (see upload-secrets.ts). */
export function uploadedFileSecrets(text: string, _r: Redactor, _headers?: unknown): string {
  return text;
}
