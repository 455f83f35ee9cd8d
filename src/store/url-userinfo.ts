/**
 * A URL's userinfo as an error or a hint shows it, for URLs written as given (one that does not
 * parse, or a mistyped one without its scheme), which URL parsing cannot strip. One place, so
 * the proxy's upstream errors and rerecord's option errors hide a password alike.
 */

/** The userinfo at a URL's start, with or without its scheme: group 1 the scheme and `//`, group 2 the user name before a `:`. */
const USERINFO = /^((?:[a-z][a-z0-9+.-]*:)?\/\/)?(?:([^/@:]*):)?[^/@]*@/i;

/**
 * `url` with its userinfo's password (or a user name alone, which is a token) shown as `***`;
 * the rest as written.
 *
 * @example
 * hiddenUserinfo('https://admin:pw@gw.example:99999') // 'https://admin:***@gw.example:99999'
 * hiddenUserinfo('admin:pw@gw.example')               // 'admin:***@gw.example'
 * hiddenUserinfo('https://tok@gw.example')            // 'https://***@gw.example'
 */
export function hiddenUserinfo(url: string): string {
  return url.replace(USERINFO, (_m, scheme: string | undefined, user: string | undefined) => `${scheme ?? ''}${user === undefined ? '' : `${user}:`}***@`);
}
