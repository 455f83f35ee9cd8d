/**
 * Recording through a request interceptor that sat on the global fetch when llm-tapedeck was
 * imported. MSW (`setupServer` from `msw/node`) replaces globalThis.fetch when its server
 * listens; a setup file that calls `server.listen()` at its top level does so before the test
 * file imports llm-tapedeck, so the fetch the tape records through (./own-fetch.ts) is MSW's.
 * A handler of MSW's still answering an LLM's URL (a project moving from hand-written mocks to
 * tapes) then had its canned answer recorded as the provider's, and every later replay served
 * it; with `onUnhandledRequest: 'error'` MSW's refusal read as a provider that cannot be reached.
 * Both are told as what they are, and nothing is recorded. Looked at only on a live call through
 * a fetch replaced before the import, never on replay.
 */
import { TapedeckError } from '../errors.ts';
import { fetchInterceptorRunning, interceptorAtImport, withoutQuery } from './own-fetch.ts';

/** How MSW's own errors begin (`[MSW] Cannot bypass a request when using the "error" strategy ...`). */
const MSW_WORDS = /^\[MSW\]/;

/** What the tape's live calls are told to do instead. */
const HINT =
  "Start MSW after llm-tapedeck is imported: call server.listen() in beforeAll, as MSW's docs do, not at the top of a setup file (or import llm-tapedeck before msw in that file); the tape's live calls then go to the provider, and MSW keeps answering every other request. Remove MSW's handlers for the LLM's URLs once their tapes are recorded. Or give the tape the fetch that reaches the provider: the fetch option (tapedeckFixtures({ fetch }), openTestTape({ fetch }), createFetch({ fetch })).";

/**
 * Whether `res` was made up by a running request interceptor rather than fetched: Node's fetch
 * gives the answers it receives the type `basic`, and an answer built in JavaScript
 * (`new Response(...)`, which is how an interceptor's handler answers) is of type `default`.
 * A wrapper's or a polyfill's answers are `default` too, hence the interceptor's mark on the
 * global, when the fetch was taken and now.
 *
 * @example
 * if (answeredByInterceptor(await f(url, init))) throw interceptorRefusal(url)
 */
export function answeredByInterceptor(res: Response): boolean {
  return res.type === 'default' && interceptorAtImport && fetchInterceptorRunning();
}

/**
 * MSW's refusal of a request no handler took (`onUnhandledRequest: 'error'`), as the fetch it
 * put in place rejects with it; undefined for any other error.
 *
 * @example
 * catch (e) { const why = mswRefusal(e); if (why) throw interceptorRefusal(url, why) }
 */
export function mswRefusal(e: unknown): string | undefined {
  for (let x = e, depth = 0; x instanceof Error && depth < 3; x = x.cause, depth++) {
    if (MSW_WORDS.test(x.message)) return x.message;
  }
  return undefined;
}

/**
 * The error a live call gets when the interceptor on the fetch it went through answered it
 * (no `refused`) or refused it (`refused`: MSW's words): E_FETCH_STUBBED, nothing recorded.
 *
 * @example
 * throw interceptorRefusal('http://127.0.0.1:8080/v1/chat/completions')
 */
export function interceptorRefusal(url: string, refused?: string): TapedeckError {
  const where = withoutQuery(url);
  const what =
    refused === undefined
      ? `The call to ${where} was answered by a request interceptor on the global fetch (MSW's setupServer, or another library built on @mswjs/interceptors), not by the provider`
      : `The call to ${where} was refused by a request interceptor on the global fetch (MSW: ${refused.replace(/^\[MSW\]\s*/, '').replace(/[.\s]+$/, '')})`;
  return new TapedeckError(
    'E_FETCH_STUBBED',
    `${what}: it had replaced fetch before llm-tapedeck was imported (server.listen() ran first), so the tape's live calls went through it. Nothing was recorded.`,
    { option: 'fetch', lasting: true, hint: HINT },
  );
}
