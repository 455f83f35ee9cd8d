/**
 * Header and URL query names judged by their last word. A gateway, a function host or a backend
 * names its credential after the same few words the providers use, with any prefix:
 * `x-functions-key` (Azure Functions), `x-openai-key`, `?auth=` (Firebase), `?jwt=`, `?session=`,
 * `X-Goog-Signature`. The exact lists and credential-word suffixes of ./redact.ts name what the
 * providers send; a name whose last word is one of {@link SECRET_WORD} is a secret too, unless
 * the word before says the value names or orders something instead of opening it
 * ({@link NOT_SECRET_PAIR}: `idempotency-key`, `pageToken`, `access-control-allow-credentials`).
 *
 * Words, not letters: `monkey` does not end in the word `key`, and `max_tokens` does not end in
 * `token`. Not for JSON members and form fields: a body is keyed as stored and its names are the
 * application's (an Anthropic thinking block's `signature`, `prompt_cache_key`, a chat app's
 * `session`), so bodies keep the narrower rules of ./redact.ts; only the words of a PIN, a
 * one-time password and a DSN ({@link CODE_PAIR}) judge every name alike.
 */

/**
 * The last words that make a header or query name a secret. `sessionid` and the session
 * cookies of Java and PHP, also sent in URLs, are one word; `session-id` is not a secret word
 * pair: a session *id* names a session for routing or tracing (MCP's `Mcp-Session-Id`,
 * Helicone's `Helicone-Session-Id`). `pass`, `pwd`, `cred`, `authz`, `authn`: the short forms gateways use
 * (`x-pass`, `x-session-cred`). `authentication`: a misnomer for `authorization` that some gateways and
 * in-house APIs take their key in, with no scheme word before it.
 */
const SECRET_WORD = /^(?:key|apikey|auth|authz|authn|authorization|authentication|bearer|jwt|token|session|sessionid|jsessionid|phpsessid|signature|credentials?|creds?|cookie|secret|pass|pwd|passwd|password|passphrase)$/;

/**
 * The word before and the last word, where the word before makes the name no secret: a key that
 * names a request or a cache entry, or is public (`Idempotency-Key`, `Surrogate-Key`,
 * `Sec-WebSocket-Key`, also read as `web socket key`, tapedeck's own `x-tapedeck-key`, a request
 * key's digest, `?public_key=`); a page cursor (`pageToken`, `nextToken`, `$skipToken`: they decide which page
 * comes back, and rerecord must send them again); CORS's `Access-Control-Allow-Credentials: true`,
 * which a browser must see as sent; Azure's `azureml-model-session` answer header.
 */
const NOT_SECRET_PAIR =
  /^(?:(?:idempotency|cache|surrogate|(?:web)?socket|tapedeck|public) key|(?:page|next|prev|continuation|cursor|skip|sync) token|allow credentials|model session)$/;

/**
 * Where a name splits into words: a run of anything but letters and digits (`-`, `_`, `.`,
 * `$`), a lower-case letter or digit before an upper-case one (`pageToken`), and an acronym's
 * end (`APIKey`, `JWTAuth`).
 */
const WORD_BREAK = /[^\p{L}\p{N}]+|(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;

/** An all-digit word: a version or variant after the word that matters (`x-hub-signature-256`). */
const DIGITS = /^\p{N}+$/u;

/**
 * The word before and the last word (or a lone last word, after a space) of a name that is a
 * secret whatever it names, a JSON member and a form field too: a PIN, a one-time password, a
 * DSN (a Sentry DSN holds its project's key, a database DSN its password), and `code` after one
 * of the first three or `mfa` (`otp_code`, `pin_code`: a bare `code` is a chat body's source
 * code). Words, not letters: `spin`, `pinned`, `option`, `hotpot` and `dsn_count` are no secrets.
 */
const CODE_PAIR = /(?:^| )(?:pin|otp|totp|dsn)$|^(?:pin|otp|totp|mfa) code$/;

/**
 * Whether a header or query parameter name is a secret by its last word (see the top), or by
 * CODE_PAIR. With `codesOnly` (a member's or a field's name), by CODE_PAIR alone, and the last
 * word must end the name (the redactor's cheap test reads a member's name from its end). Judges
 * the name's words afresh: callers keep the answer per name (traffic repeats a few dozen).
 *
 * @example
 * secretByLastWord('x-functions-key') // true
 * secretByLastWord('Idempotency-Key') // false
 * secretByLastWord('pageToken')       // false
 * secretByLastWord('max_tokens')      // false
 * secretByLastWord('x-sentry-dsn')    // true
 * secretByLastWord('otp_code', true)  // true
 * secretByLastWord('dsn_count', true) // false
 * secretByLastWord('api_key', true)   // false (a member's name keeps the rules of ./redact.ts)
 */
export function secretByLastWord(name: string, codesOnly = false): boolean {
  const words = name.split(WORD_BREAK);
  let i = words.length - 1;
  while (!codesOnly && i >= 0 && (words[i] === '' || DIGITS.test(words[i]!))) i--;
  if (i < 0) return false;
  const last = words[i]!.toLowerCase();
  let j = i - 1;
  while (j >= 0 && words[j] === '') j--;
  const pair = `${j < 0 ? '' : words[j]!.toLowerCase()} ${last}`;
  return CODE_PAIR.test(pair) || (!codesOnly && SECRET_WORD.test(last) && !NOT_SECRET_PAIR.test(pair));
}

/**
 * Whether a form field is a secret for the form it is in: the `code` of an OAuth token request
 * for the authorization-code grant (RFC 6749 4.1.3), which with the client's credentials or PKCE
 * verifier obtains a token. Elsewhere a `code` is what a user wrote.
 *
 * @example
 * grantCode('code', 'grant_type=authorization_code&code=SplxlOBeZQQYbYS6WxSbIA') // true
 * grantCode('code', 'lang=python&code=print') // false
 */
export const grantCode = (name: string, form: string): boolean => name === 'code' && /(?:^|&)grant_type=authorization_code(?:&|$)/.test(form);
