/**
 * Secrets in an uploaded file's text, masked where they stand: a `.env`'s or YAML file's
 * secret-named lines (env-secrets.ts), and JSON text inside the strings of a JSON or JSONL file
 * (a batch input line whose message holds `{"client_secret": "…"}`), as a JSON request body has
 * them masked. Also the bytes of Google's resumable upload (sent alone to the upload URL, not as
 * a multipart part), which are an uploaded file too. Browser builds take upload-secrets.browser.ts:
 * a page records nothing.
 */
import { envSecrets } from './env-secrets.ts';
import { latin1Bytes, latin1Text, type Redactor } from './redact.ts';

type Headers = Record<string, string | string[] | undefined>;

const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();

/**
 * A JSON document's text (latin1, one character a byte) with its secrets masked as a JSON
 * body's are, written again; the same text when it has none or is no JSON.
 */
function jsonMasked(text: string, r: Redactor): string {
  // JSON text inside a string shows as escaped quotes: a document without them was masked whole
  // by the text scan (its members' names stand in it plainly), and is written as it was.
  if (text.indexOf('\\"') < 0 || !r.mayHaveSecrets(text)) return text;
  const at = text.search(/\S/);
  if (text[at] !== '{' && text[at] !== '[') return text;
  let doc: unknown;
  try {
    doc = JSON.parse(utf8Text.decode(latin1Bytes(text)));
  } catch {
    return text;
  }
  const red = r.value(doc);
  return red === doc ? text : latin1Text(utf8.encode(JSON.stringify(red)));
}

/**
 * The text of an uploaded file (latin1, one character a byte) with the secrets redaction knows
 * by name masked: `.env` and YAML lines, and JSON text inside the strings of a JSON file or of
 * each line of a JSONL file (only a document that holds one is written again). Credential formats
 * are left to the redactor's text scan, run after. With `headers`, only a body Google's
 * resumable upload sends (`X-Goog-Upload-Command: upload`) is read as a file.
 *
 * @example
 * uploadedFileSecrets('{"messages":[{"content":"cfg {\\"password\\":\\"hunter22\\"}"}]}\n', redactor())
 * // '{"messages":[{"content":"cfg {\\"password\\":\\"[REDACTED]\\"}"}]}\n'
 */
export function uploadedFileSecrets(text: string, r: Redactor, headers?: Headers): string {
  if (r.keepSecrets) return text;
  if (headers !== undefined) {
    const command = headers['x-goog-upload-command'];
    if (!/upload/i.test(Array.isArray(command) ? command.join(',') : (command ?? ''))) return text;
  }
  const env = envSecrets(text, r);
  const whole = jsonMasked(env, r);
  if (whole !== env || env.indexOf('\\"') < 0) return whole;
  return env
    .split('\n')
    .map((line) => jsonMasked(line, r))
    .join('\n');
}
