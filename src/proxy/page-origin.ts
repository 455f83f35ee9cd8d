/**
 * tapedeck's own answers (a miss, a malformed body, an upstream failure) to a page served from
 * this machine (a dev server: http://localhost:5173). The API's answers carry its CORS headers,
 * recorded and replayed; tapedeck's had none, so the browser hid them and the page saw a failed
 * fetch ("TypeError: Failed to fetch"; the OpenAI SDK in a page says "Connection error." and
 * retries), the miss only in the proxy's log. So did a replayed answer recorded from Node (no
 * CORS headers), and its preflight, never recorded, missed. Only a loopback origin is let read
 * them: a miss quotes the closest recording's text, which a page of any site the user opens must
 * not read.
 */
const LOOPBACK_ORIGIN = /^https?:\/\/(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

/** What a page reads of tapedeck's answer besides its body. */
const EXPOSED = 'x-tapedeck-match, x-tapedeck-error, x-tapedeck-key, x-tapedeck-message';

/**
 * The headers that let the page at `origin` read tapedeck's own answer, when it is a page of this
 * machine; undefined for any other origin (or none: SDKs and curl send none).
 *
 * @example
 * pageAccess('http://localhost:5173') // { 'access-control-allow-origin': 'http://localhost:5173', ... }
 * pageAccess('https://example.com') // undefined
 */
export function pageAccess(origin: string | string[] | undefined): Record<string, string> | undefined {
  if (typeof origin !== 'string' || !LOOPBACK_ORIGIN.test(origin)) return undefined;
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED, vary: 'origin' };
}

/**
 * What a preflight the tape has no recording of is allowed: the method and headers it asks for
 * (given to a page of this machine only, by pageAccess's check).
 *
 * @example
 * preflightAllowed({ 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' })
 * // { 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'authorization', 'access-control-max-age': '600' }
 */
export function preflightAllowed(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const method = headers['access-control-request-method'];
  const asked = headers['access-control-request-headers'];
  return {
    'access-control-allow-methods': typeof method === 'string' ? method : 'POST',
    ...(typeof asked === 'string' ? { 'access-control-allow-headers': asked } : {}),
    'access-control-max-age': '600',
  };
}
