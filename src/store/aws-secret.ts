/**
 * An AWS secret access key pasted beside its access key id under no name ("my creds are AKIA…
 * wJalr…", the two on two lines, `AKIA… / wJalr…`, a row of the console's CSV). The secret has
 * no prefix: it is 40 characters of base64's alphabet, like many other strings (a hash, a slug,
 * a piece of an image), so alone it is no credential. Beside an access key id it is one: secret
 * scanners pair the two the same way, an id, and a 40-character run of that alphabet that is not
 * part of a longer one, a short way off. Only a text that holds an id is looked at (the id is a
 * key format redaction finds already), so text without one pays nothing for this.
 *
 * The text is searched as the credential patterns search it, in its view (credential.ts,
 * searchedJsonText): the letters of a JSON escape before a run (`\nwJalr…`, `\u00a0AKIA…`) and the
 * digits of a percent-encoded separator (`%3DwJalr…`) are no part of it there. A secret's `/` and
 * `+` may be written as JSON writes a slash on request (`\/`: PHP's json_encode) or as a URL or a
 * form encodes them (`%2F`, `%2B`): such a run is the secret its characters decode to. Beside a
 * temporary id (`ASIA…`), its session token is masked the same way (SESSION_TOKEN).
 */

/** An access key id, long-term (`AKIA`) or temporary (`ASIA`): CREDENTIAL's alternative for it, searched in the same view. */
const ACCESS_KEY_ID = /\b(?:AKIA|ASIA)[0-9A-Z]{16}/g;

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

/** The most characters a secret's run takes as written: every character a `%2F` (three). */
const WRITTEN_MAX = 3 * SECRET_LENGTH;

/** A run of the secret's alphabet (base64 without its padding) as written: `/` also as `\/` or `%2F`, `+` as `%2B`. */
const SECRET_RUN = /(?:[A-Za-z0-9/+]|\\\/|%2[FfBb])+/g;
/** SECRET_RUN from a given place on (where a run the window cut goes on). */
const RUN_ON = /(?:[A-Za-z0-9/+]|\\\/|%2[FfBb])*/y;

/**
 * A session token, the third part of temporary credentials (`ASIA…` ids), pasted with the other
 * two (`aws_session_token = …` in a credentials file, `AWS_SESSION_TOKEN=…`, the JSON of `aws sts
 * assume-role`): hundreds of characters of base64 whose first bytes STS writes alike
 * (`IQoJb3JpZ2lu…` today, `FwoGZXIvYXdz…` and `AQoDYXdz…` before). By those, not by length
 * alone: a base64 image beside the id is no token.
 */
const SESSION_TOKEN = /^(?:IQoJb3JpZ2lu|FwoGZXIvYXdz|AQoDYXdz)[A-Za-z0-9/+]{88}/;

/** What stands for a `/` or a `+` in a run as written. */
const WRITTEN_SLASH = /\\\/|%2[Ff]/g;
const WRITTEN_PLUS = /%2[Bb]/g;

/**
 * The length of a separator that ends at `i` (`before`) or starts there: a `/` or a `+` as written
 * (`AKIA…/wJalr…`, a form's `AKIA…+wJalr…`, where `+` is a space). 0 for none.
 */
function separatorAt(s: string, i: number, before: boolean): number {
  // `\/` before `/`: its slash alone would leave the backslash in the run before it.
  for (const n of [2, 3, 1]) {
    const t = before ? s.slice(i - n, i) : s.slice(i, i + n);
    if (t.length === n && (n === 1 ? t === '/' || t === '+' : n === 2 ? t === '\\/' : /^%2[FfBb]$/.test(t))) return n;
  }
  return 0;
}

/**
 * Whether a 40-character run can be a secret: random base64 of that length has both capitals
 * and small letters (all but about one in 10^9 do), which a git sha or another hex digest, an
 * id of capitals and digits, and a word do not.
 */
const secretLike = (run: string): boolean => /[a-z]/.test(run) && /[A-Z]/.test(run);

/**
 * A secret access key found beside its id: where it starts, its text as written there, the
 * secret itself (`value`: the text with `\/`, `%2F`, `%2B` read as the characters they stand
 * for; the text when it has none), and where its id starts.
 */
export interface AwsSecret {
  index: number;
  text: string;
  value: string;
  id: number;
}

/**
 * The secret access keys in `s` that stand within a short way of an access key id (see the top),
 * in order, each once. `view` is the text as the credential patterns search it (credential.ts,
 * searchedJsonText of `s`), which has its length.
 *
 * @example
 * awsSecretsIn(s, searchedJsonText(s, 0)) // s = 'my creds are AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
 * // [{ index: 34, text: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', value: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', id: 13 }]
 * awsSecretsIn('commit 9fceb02d0ae598e95dc970b74767f19372d61af8', …) // []
 */
export function awsSecretsIn(s: string, view: string): AwsSecret[] {
  if (s.indexOf('AKIA') < 0 && s.indexOf('ASIA') < 0) return [];
  const out: AwsSecret[] = [];
  for (const id of view.matchAll(ACCESS_KEY_ID)) {
    const i = id.index;
    const near = (a: number, b: number): void => {
      // The letters the view blanks at the run's start (a JSON escape's, a percent-encoded
      // separator's digits) are no part of it.
      while (a < b && view.charCodeAt(a) === 0x20) a++;
      const text = s.slice(a, b);
      const value = text.indexOf('\\') < 0 && text.indexOf('%') < 0 ? text : text.replace(WRITTEN_SLASH, '/').replace(WRITTEN_PLUS, '+');
      // A temporary id's session token is longer than a secret, and masked as one.
      if (value.length !== SECRET_LENGTH && (s.charCodeAt(i + 1) !== 0x53 || !SESSION_TOKEN.test(value))) return;
      const gap = b <= i ? i - b : a >= i + ID_LENGTH ? a - (i + ID_LENGTH) : -1;
      if (gap < 0 || gap > NEAR || !secretLike(value) || out.some((x) => x.index === a)) return;
      out.push({ index: a, text, value, id: i });
    };
    // The window a near secret lies in; a run that reaches its edge inside the text is cut, and
    // so longer than a secret or farther off than NEAR.
    const lo = Math.max(0, i - NEAR - WRITTEN_MAX - 2);
    const hi = Math.min(s.length, i + ID_LENGTH + NEAR + WRITTEN_MAX + 2);
    for (const m of s.slice(lo, hi).matchAll(SECRET_RUN)) {
      const a = lo + m.index;
      let b = a + m[0].length;
      if (a === lo && lo > 0) continue;
      // A run the window's end cuts: to its own end (longer than a secret; a session token, maybe).
      if (b === hi && hi < s.length) {
        RUN_ON.lastIndex = hi;
        b = hi + RUN_ON.exec(s)![0].length;
      }
      if (b <= i || a >= i + ID_LENGTH) near(a, b);
      else {
        // The id's own run: the parts either side of it, past a separator (none: one longer word).
        const before = separatorAt(s, i, true);
        if (before > 0) near(a, i - before);
        const after = separatorAt(s, i + ID_LENGTH, false);
        if (after > 0) near(i + ID_LENGTH + after, b);
      }
      // Words of a form or a query, whose `+` is a space (`q=my+id+is+AKIA…+secret+wJalr…`): each
      // word of a run joined so is tried too (a secret's own `+` is sent there as `%2B`).
      if (s.indexOf('+', a) < 0 || s.indexOf('+', a) >= b) continue;
      for (let w = a; w < b; ) {
        const plus = s.indexOf('+', w);
        const end = plus < 0 || plus > b ? b : plus;
        if (end <= i || w >= i + ID_LENGTH) near(w, end);
        w = end + 1;
      }
    }
  }
  return out.sort((x, y) => x.index - y.index);
}
