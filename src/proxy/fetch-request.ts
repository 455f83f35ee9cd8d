/**
 * A URL with a user name or password in it (`http://user:pass@gateway/v1/…`, a base URL given to
 * an SDK with a tapedeck fetch). Node's fetch (undici) refuses one, and its TypeError quotes the
 * whole URL, password and all: "Request cannot be constructed from a URL that includes
 * credentials: …". Thrown from a tapedeck fetch, in any mode, that message reached the SDK's
 * error (as its cause), the test's output and CI logs. Such a call is answered instead with an
 * E_ARG error that shows the URL without its password or query and says where credentials go;
 * Node's TypeError is never made, so no printed cause can carry it. Node only (./fetch-redirect.ts,
 * which every call of a tapedeck fetch passes): a page keeps the browser's own error.
 */
import { TapedeckError } from '../errors.ts';
import { hiddenUserinfo } from '../store/url-userinfo.ts';
import { errorAnswer, statusTextOf } from './http-errors.ts';

/** A URL's userinfo (`user:password@`, `token@`) after its scheme. */
const USERINFO = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i;

/** Whether a URL has userinfo, which fetch refuses. */
function hasUserinfo(url: string): boolean {
  return USERINFO.test(url);
}

/**
 * The answer to a call whose URL has userinfo (see the top): a 400 of an E_ARG error, in the
 * error shape of the API its path names (the SDK raises it as the API's error, with its message,
 * and does not retry it); undefined for any other call, which goes on.
 *
 * @example
 * userinfoRefused('https://api.openai.com/v1/models') // undefined
 * userinfoRefused('https://me:pw@gw.example/v1/models')?.status // 400: "… https://me:***@gw.example/v1/models …"
 */
export function userinfoRefused(input: string | URL | Request): Response | undefined {
  // A Request cannot hold one: making it threw already.
  if (input instanceof Request) return undefined;
  const url = String(input);
  if (!hasUserinfo(url)) return undefined;
  // Cut at its query too: a key may ride there (Gemini's ?key=).
  const shown = hiddenUserinfo(url.replace(/[?#][^]*$/, ''));
  let path: string | undefined;
  try {
    path = new URL(url).pathname;
  } catch {
    // not a URL at all (a port out of range): said so, in OpenAI's shape
  }
  const error = new TapedeckError('E_ARG', path !== undefined ? `fetch refuses a URL with a user name or password in it: ${shown}. Nothing was sent.` : `Invalid URL ${shown}. Nothing was sent.`, {
    hint:
      path !== undefined
        ? 'Take user:password@ out of the URL (the base URL given to the SDK) and send the credentials in a header: Authorization: Basic <base64 of user:password>, or the API key header the provider reads.'
        : 'Check the URL (its host and port), and send credentials in a header rather than in the URL.',
  });
  const answer = errorAnswer(error, path ?? '/', {}, 400, false, true);
  return new Response(answer.body, { status: 400, statusText: statusTextOf(400), headers: answer.headers });
}
