/**
 * Whether the value of a query parameter that carries the client's credential on some APIs
 * (`?key=`, `?api-key=`, `?api_key=`, `?apikey=`, `?subscription-key=`, `?sig=`,
 * `?access_token=`: CREDENTIAL_QUERY in ./redact.ts) is one, judged by its shape: the name alone
 * cannot tell, since `?key=` is Google's API key on one host and a lookup key
 * (`?key=alpha-report`) on another, and `?access_token=` holds an OAuth token that expires hourly.
 * Other secret names (`?token=`, `?code=`, `?session=`, `?password=`) are what a request is about
 * more often than who sends it, and stay keyed whatever their value.
 *
 * A credential is masked plainly (`[REDACTED]`, in no key: a teammate's or CI's credential
 * replays the recording); any other value gets a keyed mask (two values, two requests). Both keep
 * the value off the disk, so the choice only decides what a wrong guess costs: a credential taken
 * for a lookup value is keyed, and replay with another credential MISSES, saying which parameter
 * differs; a lookup value taken for a credential is masked plainly, and two requests become one
 * whose answers replay swapped, silently. So a value that is neither clearly a credential nor
 * clearly words (a UUID, a 16-character mix of words and digits) gets the keyed mask: a loud miss
 * over a silent wrong answer.
 */
// The patterns pages search too (not credential.ts's, which adds a bot token in Node): a value
// must be judged alike where it is recorded and where a page replays it, or its route differs.
import { CREDENTIAL } from './credential-pattern.ts';

/**
 * A random-looking run (at least 16 characters of letters, digits, `+` and `/`, base64 included),
 * with a letter: with a digit too, 32 or more long (hex and base62 keys, a base64 signature), or
 * shorter with letters and digits side by side 3 times or more (`a1`, `7f`), or with a change of
 * kind (lower case, upper case, digit) at every second character or more often; with no digit
 * (one base64 signature in 1,500), 32 or more long with a change of kind at 2 characters in 5.
 * Words, slugs and camel-case names change kind about once a word (`alpha-report-2026`,
 * `customerOrderHistory`); random text of 62 symbols does about 6 times in 10. Shannon entropy (tapedeck scan's test) is
 * no help here: `alpha-report-2026` scores as high as a random 32-digit hex key, which falls under
 * 3.5 bits a character one time in five.
 */
const RUN = /[A-Za-z0-9+/]{16,}/g;

/**
 * True for a value shaped like a credential: a known key format (`AIza…`, `sk-…`, `ya29.…`, a
 * JWT: ./credential-pattern.ts) or random-looking text (RUN); also for no value, `replay` (the
 * stand-in the docs give CI) and a placeholder another tool or a CI job stands in for one
 * (`placeholder`: `dummy`, `[REDACTED]`, `<API_KEY>`), so a replay without the real key finds a
 * recording made with it.
 *
 * @example
 * queryCredential('AIzaSyD-0123456789abcdefghijklmnopqrstu', PLACEHOLDER) // true
 * queryCredential('9f86d081884c7d659a2feaa0c55ad015', PLACEHOLDER)        // true (32 hex)
 * queryCredential('alpha-report-2026', PLACEHOLDER)                       // false (keyed mask)
 */
export function queryCredential(v: string, placeholder: RegExp): boolean {
  // One expression, each test a regular expression: this runs in pages, whose bundle has a budget.
  // A known format counts when what follows its first four characters has a capital or a random
  // run: `sk-` takes any 20 of [A-Za-z0-9_-] after it, so a slug (`sk-sales-2026-q1-report`)
  // matched it, and two such lookups were one request.
  return (
    v === '' ||
    // The docs' own stand-in for a key in CI (`process.env.OPENAI_API_KEY ?? 'replay'`).
    v === 'replay' ||
    placeholder.test(v) ||
    (v.match(CREDENTIAL) ?? []).some((k) => /[A-Z]/.test(k.slice(4))) ||
    (v.match(RUN) ?? []).some((r) => {
      const changes = r.match(/(?=[a-z][A-Z\d]|[A-Z][a-z\d]|\d[A-Za-z])/g)?.length ?? 0;
      return /[a-z]/i.test(r) && (/\d/.test(r) ? r.length >= 32 || (r.match(/(?=[a-z]\d|\d[a-z])/gi)?.length ?? 0) >= 3 || changes * 2 >= r.length : r.length >= 32 && changes * 5 >= r.length * 2);
    })
  );
}
