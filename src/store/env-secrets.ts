/**
 * Secret-named variables of a `.env` file or a shell script (`DB_PASSWORD=…`, `export
 * AWS_SECRET_ACCESS_KEY="…"`) and secret-named keys of a YAML file (`password: …`) in an uploaded file: their values have no key format for the
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
 * A `name: value` line of a YAML file (a `docker-compose.yml`'s `POSTGRES_PASSWORD: …`, a
 * config's `api_key: "…"`, a list item's `- token: …`), the value a plain or quoted scalar on the
 * line: the same groups as {@link ENV_LINE}. A block scalar (`key: |`) or a value that starts a
 * comment holds no secret on the line and is left alone by the value tests in envSecrets.
 */
export const YAML_LINE = /^([ \t]*(?:-[ \t]+)?)([A-Za-z_][A-Za-z0-9_.-]*)([ \t]*:[ \t]+)(["']?)(.*?)\4([ \t]*\r?)$/gm;

/** Whether a line's value (ENV_LINE or YAML_LINE group 5) can be a secret: not empty, not a YAML block scalar or comment. */
export const valueMayBeSecret = (value: string): boolean => value !== '' && !/^[|>#]/.test(value);

/**
 * Text with the values of its secret-named `NAME=value` and YAML `name: value` lines masked
 * (`DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`, `api_key`: names redaction masks as members), as an
 * uploaded `.env` or YAML file holds them; the same text when it has none.
 *
 * @example
 * envSecrets('DB_HOST=db\nDB_PASSWORD=s3cr3t-Value9\n', redactor()) // 'DB_HOST=db\nDB_PASSWORD=[REDACTED]\n'
 * envSecrets('db:\n  password: s3cr3t-Value9\n', redactor()) // 'db:\n  password: [REDACTED]\n'
 */
export function envSecrets(text: string, r: Redactor): string {
  const masked = (line: string, lead: string, name: string, sep: string, quote: string, value: string, tail: string): string =>
    !valueMayBeSecret(value) || !r.isSecretField(name) || r.mask(value) === value ? line : `${lead}${name}${sep}${quote}${r.mask(value)}${quote}${tail}`;
  let out = text.indexOf('=') < 0 ? text : text.replace(ENV_LINE, masked);
  if (out.indexOf(':') >= 0) out = out.replace(YAML_LINE, masked);
  return out;
}
