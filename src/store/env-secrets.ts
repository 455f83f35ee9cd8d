/**
 * Secret-named variables of a `.env` file or a shell script (`DB_PASSWORD=…`, `export
 * AWS_SECRET_ACCESS_KEY="…"`) in an uploaded file: their values have no key format for the
 * credential patterns, so they are masked by their names, as secret members are. Browser builds
 * take env-secrets.browser.ts: a page records nothing.
 */
import type { Redactor } from './redact.ts';

/**
 * A `NAME=value` line of a `.env` file or a shell script (`export NAME=value`, the value bare or
 * quoted): its name, and its value's place. See {@link envSecrets}.
 */
export const ENV_LINE = /^([ \t]*(?:export[ \t]+)?)([A-Za-z_][A-Za-z0-9_.-]*)([ \t]*=[ \t]*)(["']?)(.*?)\4([ \t]*\r?)$/gm;

/**
 * Text with the values of its secret-named `NAME=value` lines masked (`DB_PASSWORD`,
 * `AWS_SECRET_ACCESS_KEY`, `STRIPE_API_KEY`: names redaction masks as members), as an uploaded
 * `.env` file holds them; the same text when it has none.
 *
 * @example
 * envSecrets('DB_HOST=db\nDB_PASSWORD=s3cr3t-Value9\n', redactor()) // 'DB_HOST=db\nDB_PASSWORD=[REDACTED]\n'
 */
export function envSecrets(text: string, r: Redactor): string {
  if (text.indexOf('=') < 0) return text;
  return text.replace(ENV_LINE, (line: string, lead: string, name: string, eq: string, quote: string, value: string, tail: string) =>
    value === '' || !r.isSecretField(name) || r.mask(value) === value ? line : `${lead}${name}${eq}${quote}${r.mask(value)}${quote}${tail}`,
  );
}
