/**
 * Text an error quotes from a user's file (a bad import entry's value, a hand-written
 * recording's URL), with the secrets a tape would not store masked: such files are the ones that
 * still hold credentials (talkback, HAR and VCR.py keep them; a hand-written URL may carry its
 * `?key=`), and the error goes to the log as it is. Node-only: a page quotes no such files.
 */
import { redactor, type Redactor } from './redact.ts';

let masks: Redactor | undefined;

/**
 * `text` with key formats, URL passwords and secret query values masked: in URLs (with `://`) as
 * redaction reads them, then in any other URL-like word with a query (`htps//host/p?key=…`,
 * `host/p?access_token=…`: a mistyped URL is what such an error is about). Plain `[REDACTED]`
 * masks, as no tape's salt applies.
 *
 * @example
 * withoutSecrets('"host/v1?api_key=k1" is not an absolute URL') // '"host/v1?api_key=%5BREDACTED%5D" is not an absolute URL'
 */
export function withoutSecrets(text: string): string {
  const r = (masks ??= redactor());
  return r.text(text).replace(/[^\s"'<>?#`]+[?#][^\s"'<>`]*=[^\s"'<>`]*/g, (url) => r.url(url));
}
