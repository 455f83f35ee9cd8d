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
 * `session`), so bodies keep the narrower rules of ./redact.ts.
 */

/**
 * The last words that make a header or query name a secret. `sessionid` and the session
 * cookies of Java and PHP, also sent in URLs, are one word; `session-id` is not a secret word
 * pair: a session *id* names a session for routing or tracing (MCP's `Mcp-Session-Id`,
 * Helicone's `Helicone-Session-Id`). `pass`, `pwd`, `cred`, `authz`: the short forms gateways use
 * (`x-pass`, `x-session-cred`).
 */
const SECRET_WORD = /^(?:key|apikey|auth|authz|authorization|bearer|jwt|token|session|sessionid|jsessionid|phpsessid|signature|credentials?|creds?|cookie|secret|pass|pwd|passwd|password|passphrase)$/;

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
 * Whether a header or query parameter name is a secret by its last word (see the top). Judges
 * the name's words afresh: callers keep the answer per name (traffic repeats a few dozen).
 *
 * @example
 * secretByLastWord('x-functions-key') // true
 * secretByLastWord('Idempotency-Key') // false
 * secretByLastWord('pageToken')       // false
 * secretByLastWord('max_tokens')      // false
 */
export function secretByLastWord(name: string): boolean {
  const words = name.split(WORD_BREAK);
  let i = words.length - 1;
  while (i >= 0 && (words[i] === '' || DIGITS.test(words[i]!))) i--;
  if (i < 0) return false;
  const last = words[i]!.toLowerCase();
  if (!SECRET_WORD.test(last)) return false;
  let j = i - 1;
  while (j >= 0 && words[j] === '') j--;
  return j < 0 || !NOT_SECRET_PAIR.test(`${words[j]!.toLowerCase()} ${last}`);
}
