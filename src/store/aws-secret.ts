/**
 * An AWS secret access key pasted beside its access key id under no name ("my creds are AKIA…
 * wJalr…", the two on two lines, `AKIA… / wJalr…`, a row of the console's CSV). The secret has
 * no prefix: it is 40 characters of base64's alphabet, like many other strings (a hash, a slug,
 * a piece of an image), so alone it is no credential. Beside an access key id it is one: secret
 * scanners pair the two the same way, an id, and a 40-character run of that alphabet that is not
 * part of a longer one, a short way off. Only a text that holds an id is looked at (the id is a
 * key format redaction finds already), so text without one pays nothing for this.
 */

/** An access key id, long-term (`AKIA`) or temporary (`ASIA`): CREDENTIAL's alternative for it. */
// After a JSON escape's letter too (`\nAKIA…` in a raw JSON answer), where `\b` fails.
const ACCESS_KEY_ID = /(?:\b|(?<=\\[nrtbf]))(?:AKIA|ASIA)[0-9A-Z]{16}/g;

/** An id's length. */
const ID_LENGTH = 20;

/**
 * How many characters may stand between an id and its secret, either side: a JSON credentials
 * object (`"AccessKeyId": "…", "Status": "Active", "SecretAccessKey": "…"`, as `aws iam
 * create-access-key` prints it, with its indentation, or escaped inside a JSON string) and a
 * `~/.aws/credentials` file's two lines fit; the secret of another pair further down does not
 * need it (its own id is near it).
 */
const NEAR = 128;

/** A secret's length. */
const SECRET_LENGTH = 40;

/** A run of the secret's alphabet (base64 without its padding). */
const SECRET_RUN = /[A-Za-z0-9/+]+/g;

const inAlphabet = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2f || c === 0x2b;

/** Letters of the JSON escapes a line break or tab is written as (`\n`), which join a run in JSON text. */
const ESCAPE_LETTERS = /[nrtbf]/;

/**
 * Whether a 40-character run can be a secret: random base64 of that length has both capitals
 * and small letters (all but about one in 10^9 do), which a git sha or another hex digest, an
 * id of capitals and digits, and a word do not.
 */
const secretLike = (run: string): boolean => /[a-z]/.test(run) && /[A-Z]/.test(run);

/** A secret access key found beside its id: where it starts, its text, and where its id starts. */
export interface AwsSecret {
  index: number;
  text: string;
  id: number;
}

/**
 * The secret access keys in `s` that stand within a short way of an access key id (see the top),
 * in order, each once.
 *
 * @example
 * awsSecretsIn('my creds are AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')
 * // [{ index: 34, text: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', id: 13 }]
 * awsSecretsIn('commit 9fceb02d0ae598e95dc970b74767f19372d61af8') // []
 */
export function awsSecretsIn(s: string): AwsSecret[] {
  if (s.indexOf('AKIA') < 0 && s.indexOf('ASIA') < 0) return [];
  const out: AwsSecret[] = [];
  for (const id of s.matchAll(ACCESS_KEY_ID)) {
    const i = id.index;
    // The window a near secret lies in; a run that reaches its edge inside the text is cut, and
    // so longer than a secret or farther off than NEAR.
    const lo = Math.max(0, i - NEAR - SECRET_LENGTH - 2);
    const hi = Math.min(s.length, i + ID_LENGTH + NEAR + SECRET_LENGTH + 2);
    const window = s.slice(lo, hi);
    for (const m of window.matchAll(SECRET_RUN)) {
      let a = lo + m.index;
      const b = a + m[0].length;
      if ((a === lo && lo > 0 && inAlphabet(s.charCodeAt(lo - 1))) || (b === hi && hi < s.length && inAlphabet(s.charCodeAt(hi)))) continue;
      // JSON text (a body read raw, a stream's text): `\n` before the secret is a line break.
      if (s.charCodeAt(a - 1) === 0x5c && ESCAPE_LETTERS.test(s[a]!)) a++;
      if (b - a !== SECRET_LENGTH) continue;
      const gap = b <= i ? i - b : a >= i + ID_LENGTH ? a - (i + ID_LENGTH) : -1;
      if (gap < 0 || gap > NEAR) continue;
      const text = s.slice(a, b);
      if (!secretLike(text) || out.some((x) => x.index === a)) continue;
      out.push({ index: a, text, id: i });
    }
  }
  return out.sort((x, y) => x.index - y.index);
}
