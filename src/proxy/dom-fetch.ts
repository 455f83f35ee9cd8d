/**
 * The upstream fetch under a DOM test environment. vitest's happy-dom environment replaces Node's
 * globalThis.fetch (and Request, Response, Headers) with happy-dom's before a test file is
 * imported, and happy-dom's fetch applies a web page's same-origin policy (the page being
 * http://localhost:3000): a call to a provider that sends no CORS headers is refused before it
 * leaves, which read as an upstream that cannot be reached ("recording needs the network and a
 * real API key"). Node keeps no other reference to its own fetch once the global is replaced, so
 * tapedeck cannot take it back; a call the environment's fetch refuses is told as what it is,
 * with the ways out. Outside such an environment the fetch is Node's own as it was when
 * llm-tapedeck loaded (./own-fetch.ts), whatever a test put on the global since; one that was
 * not Node's own then (a stub set before the import) is not recorded from: its calls are refused.
 */
import { Readable } from 'node:stream';
import { TapedeckError } from '../errors.ts';
import { answeredByInterceptor, interceptorRefusal, mswRefusal } from './interceptor-fetch.ts';
import { fetchAtImport, nodeFetch, replacedFetchNote, stubbedFetchError } from './own-fetch.ts';

/** Whether the replaced-fetch warning was given (once a process). */
let noted = false;

/** What refusals of a DOM environment's fetch say (happy-dom's: "Cross-Origin Request Blocked"). */
const SAME_ORIGIN = /cross-origin|same.origin|\bCORS\b/i;

/** The refusals made here: passed on as they are, not taken for an unreachable upstream. */
const refusals = new WeakSet<object>();

/** The DOM test environment whose fetch is the global one, by the user agent it gives; undefined in plain Node. */
function domEnvironment(): string | undefined {
  if (typeof process === 'undefined' || !process.versions?.node) return undefined;
  const ua = (globalThis as { navigator?: { userAgent?: unknown } }).navigator?.userAgent;
  return typeof ua === 'string' && /\bHappyDOM\//.test(ua) ? 'happy-dom' : undefined;
}

/** Statuses whose answer has no body (a Response with one cannot be made). */
const NO_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A polyfill's answer as a web Response: node-fetch 2 (on the global in projects written for a
 * Node without fetch) gives its body as a Node stream, which the upstream link cannot read
 * ("getReader is not a function"). Any other answer is returned as it is, untouched.
 *
 * @example
 * const res = webResponse(await nodeFetch(url)) // res.body.getReader() works
 */
function webResponse(res: Response): Response {
  const body = res.body as unknown;
  if (body === null || body === undefined || typeof (body as { getReader?: unknown }).getReader === 'function') return res;
  if (!(body instanceof Readable)) return res;
  const headers = new Headers();
  for (const [name, value] of res.headers as unknown as Iterable<[string, string]>) headers.append(name, value);
  const web = NO_BODY.has(res.status) ? null : (Readable.toWeb(body) as unknown as ReadableStream<Uint8Array>);
  if (web === null) body.destroy();
  return new Response(web, { status: res.status, statusText: res.statusText, headers });
}

/**
 * `f`, its answers read as web Responses (see webResponse): for a fetch given as an option,
 * which may be node-fetch 2.
 *
 * @example
 * const link = new UpstreamLink(webAnswers(nodeFetch), {})
 */
export function webAnswers(f: typeof fetch): typeof fetch {
  return (input, init) => f(input, init).then(webResponse);
}

/** The URL a fetch was called with, for messages. */
const urlOf = (input: string | URL | Request): string => (typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);

/**
 * The fetch that reaches the upstream when none was given: Node's own, taken when llm-tapedeck
 * loaded (a test's later stub of the global is not where the tape records from); under a DOM
 * test environment, whose fetch was on the global by then, that one, wrapped so that a call its
 * same-origin policy refused fails with E_ARG saying so; a fetch put in place before the import
 * that is no test double, as it is (a warning says so once), but for what a request interceptor
 * such as MSW's answers or refuses itself (E_FETCH_STUBBED); a test double put there before the
 * import, one that refuses every call with E_FETCH_STUBBED. Looked at once per handler or
 * tapedeck fetch, never per call.
 *
 * @example
 * const f = defaultUpstreamFetch() // Node's fetch, as it was when llm-tapedeck was imported
 */
export function defaultUpstreamFetch(): typeof fetch {
  const f = fetchAtImport;
  const env = domEnvironment();
  if (nodeFetch !== undefined && env === undefined) {
    // Replaced before the import, by no test double: recorded through, said once.
    if (replacedFetchNote === undefined) return nodeFetch;
    const note = replacedFetchNote;
    // A request interceptor (MSW) may be that fetch: what it answers or refuses itself is no
    // provider's answer, nor an unreachable provider (./interceptor-fetch.ts).
    const through = nodeFetch;
    return (input, init) => {
      // Said with the first call that goes out, not when a tape opens: a replay run sends
      // nothing, and an APM agent's wrapper would have it printed on every CI run.
      if (!noted) {
        noted = true;
        process.emitWarning(note, { code: 'TAPEDECK_FETCH_REPLACED' });
      }
      return through(input, init).then(
        (res) => {
          if (!answeredByInterceptor(res)) return webResponse(res);
          void res.body?.cancel().catch(() => undefined);
          const err = interceptorRefusal(urlOf(input));
          refusals.add(err);
          throw err;
        },
        (e: unknown) => {
          const why = mswRefusal(e);
          if (why === undefined) throw e;
          const err = interceptorRefusal(urlOf(input), why);
          refusals.add(err);
          throw err;
        },
      );
    };
  }
  if (env === undefined || f === undefined || nodeFetch === undefined) {
    return (input) => {
      const err = stubbedFetchError(urlOf(input));
      refusals.add(err);
      return Promise.reject(err);
    };
  }
  return (input, init) =>
    f(input, init).catch((e: unknown) => {
      const why = e instanceof Error ? e.message : String(e);
      if (!SAME_ORIGIN.test(why)) throw e;
      const url = urlOf(input);
      const err = new TapedeckError(
        'E_ARG',
        `The ${env} test environment's fetch refused the call to ${url} (${why.replace(/[.\s]+$/, '')}): the ${env} environment puts its own fetch in place of Node's, and that fetch applies a web page's same-origin policy. The request was not sent (its CORS preflight, at most), nothing was recorded.`,
        {
          option: 'fetch',
          environment: env,
          lasting: true,
          hint: "Run the test file in Node's environment, where the tapes replay as well: put // @vitest-environment node at its top (or set environment: 'node' for the files that record). Or give tapedeck a fetch that reaches the network: the fetch option (tapedeckFixtures({ fetch }), openTestTape({ fetch }), createFetch({ fetch })), such as undici's.",
        },
      );
      refusals.add(err);
      throw err;
    });
}

/**
 * Whether `e` is a refusal of {@link defaultUpstreamFetch}'s: its own words, not an upstream
 * that could not be reached.
 *
 * @example
 * catch (e) { throw refusedByEnvironment(e) ? e : unreachable(url, e) }
 */
export function refusedByEnvironment(e: unknown): boolean {
  return typeof e === 'object' && e !== null && refusals.has(e);
}
