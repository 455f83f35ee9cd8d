/**
 * The name=value pairs of a URL's query string or of a form body, as the request's redaction,
 * the search for a request's secrets in its answer and the secret scan all read them: split on
 * `&`, a name and value each as written and as meant (`+` a space, percent escapes decoded; a
 * malformed escape leaves the text as written, never throws). One reading for all of them, so a
 * value masked in one place is the value looked for in the others.
 */

/** One `&`-separated piece of a query string or form body. */
export interface QueryPair {
  /** The piece as written: `api%2Dkey=a+b`. */
  readonly pair: string;
  /** The name as meant: `api-key` (the whole piece when it has no `=`). */
  readonly name: string;
  /** The value as written (`a+b`); undefined for a piece with no `=` (`?flag`, an empty piece). */
  readonly raw: string | undefined;
  /** The value as meant (`a b`); undefined with `raw`. */
  readonly value: string | undefined;
}

/**
 * A query or form name or value as it was meant: `+` is a space, percent escapes decoded; the
 * text as written when its escapes are malformed (`%zz`, a lone `%E2`).
 *
 * @example
 * queryDecode('a+b%3D') // 'a b='
 * queryDecode('100%')   // '100%'
 */
export function queryDecode(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * The query string of a URL, a route (`POST /v1/x?key=...`) or the text after a `?`: from the
 * first `?` to the fragment's `#` (not part of the query); undefined without a `?`.
 *
 * @example
 * urlQuery('/v1/x?key=abc#top') // 'key=abc'
 * urlQuery('/v1/x')             // undefined
 */
export function urlQuery(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const hash = url.indexOf('#', q);
  return url.slice(q + 1, hash < 0 ? undefined : hash);
}

/**
 * The pairs of a query string (the text after `?`; a `#` ends it), in order, repeated names
 * each in their place.
 *
 * @example
 * queryPairs('key=a+b&key=%zz&flag#frag')
 * // [{ pair: 'key=a+b', name: 'key', raw: 'a+b', value: 'a b' },
 * //  { pair: 'key=%zz', name: 'key', raw: '%zz', value: '%zz' },
 * //  { pair: 'flag', name: 'flag', raw: undefined, value: undefined }]
 */
export function queryPairs(query: string): QueryPair[] {
  const hash = query.indexOf('#');
  return formPairs(hash < 0 ? query : query.slice(0, hash));
}

/**
 * The pairs of a form body (`application/x-www-form-urlencoded`): as {@link queryPairs}, with
 * a `#` part of the text (a form has no fragment).
 *
 * @example
 * formPairs('password=p%40ss&note=a#b') // [..., { pair: 'note=a#b', name: 'note', raw: 'a#b', value: 'a#b' }]
 */
export function formPairs(text: string): QueryPair[] {
  return text.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    if (eq < 0) return { pair, name: queryDecode(pair), raw: undefined, value: undefined };
    const raw = pair.slice(eq + 1);
    return { pair, name: queryDecode(pair.slice(0, eq)), raw, value: queryDecode(raw) };
  });
}
