/**
 * The global fetch as it was when this module loaded, for the tape's own live calls (record,
 * update and passthrough mode) when no `fetch` option is given. A test may stub the global fetch
 * (`vi.stubGlobal('fetch', ...)`, `globalThis.fetch = ...`) and leave the stub in place: a tape
 * opened after it that read the global then sent its live calls to the stub, and recorded the
 * stub's canned answer as the provider's, over the good recording. The test runner loads this
 * module (through `llm-tapedeck/vitest`, the jest setup file, mocha's `--require`, or the test
 * file's own import) before a test runs, so what it takes is what the process started with, as
 * ../testing/real-timers.ts does for the timers.
 *
 * Taken already replaced (a setup file replaced fetch, then imported llm-tapedeck): a test double
 * (a vitest or jest mock function, a sinon stub) is not used to record, since Node keeps no other
 * reference to its own fetch: the tape's live calls are refused with E_FETCH_STUBBED
 * (./dom-fetch.ts) rather than answered by the stub. Any other function (undici's fetch or a
 * polyfill put in place on purpose, an interceptor) is recorded through, said once in a warning:
 * refusing those broke setups that replace fetch deliberately, and would break every record run
 * should a Node version write its own fetch differently.
 */
import { TapedeckError } from '../errors.ts';

/** The global fetch when this module loaded. */
export const fetchAtImport: typeof fetch | undefined = globalThis.fetch;

/**
 * Node's own fetch is a function of Node's bootstrap that loads its bundled undici by the name
 * of an internal module, in its text since Node 18; code outside Node cannot require that name,
 * so a stub, a spy or an interceptor's wrapper never carries it.
 */
const NODE_OWN = /\brequire\(\s*['"]internal\/deps\/undici\/undici['"]\s*\)/;

/**
 * Whether `f` is Node's own global fetch (not a stub, a spy, or another library's fetch).
 *
 * @example
 * isNodeFetch(globalThis.fetch) // true in plain Node; false after vi.stubGlobal('fetch', vi.fn())
 */
export function isNodeFetch(f: unknown): boolean {
  if (typeof f !== 'function') return false;
  try {
    return NODE_OWN.test(Function.prototype.toString.call(f));
  } catch {
    return false; // a Proxy over a revoked target, and the like
  }
}

/**
 * A runtime other than Node that answers to `process.versions.node` (Bun, Deno): its fetch is
 * native code, told apart from a stub by nothing sound, and used as taken.
 */
const otherRuntime = typeof process !== 'undefined' && (process.versions?.bun !== undefined || 'Deno' in globalThis);

/**
 * Whether `f` is a test double, whose answers are a test's, never a provider's: a vitest or jest
 * mock function (`vi.fn()`, `jest.fn()`, their spies), a sinon stub or spy.
 *
 * @example
 * isTestDouble(vi.fn()) // true; isTestDouble(globalThis.fetch) // false
 */
export function isTestDouble(f: unknown): boolean {
  if (typeof f !== 'function') return false;
  const m = f as { mock?: unknown; _isMockFunction?: unknown; isSinonProxy?: unknown };
  return (typeof m.mock === 'object' && m.mock !== null) || m._isMockFunction === true || m.isSinonProxy === true;
}

/**
 * The fetch the tape records through when none is given: the global fetch as taken when this
 * module loaded, unless that was a test double (undefined: recording is refused).
 */
export const nodeFetch: typeof fetch | undefined = fetchAtImport !== undefined && !isTestDouble(fetchAtImport) ? fetchAtImport : undefined;

/**
 * The key under which @mswjs/interceptors (MSW's interception in Node) keeps its running fetch
 * interceptor on the global, from MSW's `listen()` to its `close()`.
 */
const FETCH_INTERCEPTOR = Symbol.for('fetch-interceptor');

/**
 * Whether MSW's fetch interceptor (or another of @mswjs/interceptors) is running now.
 *
 * @example
 * fetchInterceptorRunning() // true between server.listen() and server.close()
 */
export function fetchInterceptorRunning(): boolean {
  return (globalThis as Record<symbol, unknown>)[FETCH_INTERCEPTOR] !== undefined;
}

/**
 * Whether the fetch taken at import is MSW's: its interceptor was running then (it puts its
 * fetch on the global as it starts). Another fetch put there before the import (a wrapper, a
 * polyfill) is not, whatever interceptor starts later over the global.
 */
export const interceptorAtImport: boolean = fetchAtImport !== undefined && fetchInterceptorRunning();

/** What the fetch taken at import was, for the warning: MSW's is named as such, not by its inner function's name. */
const replacedBy = (f: typeof fetch): string =>
  interceptorAtImport ? `MSW's request interceptor, started before llm-tapedeck was imported` : f.name ? `a function named ${JSON.stringify(f.name)}` : 'an unnamed function';

/**
 * When the fetch taken at import is neither Node's own nor a test double: what a warning says
 * once, as a tape first records through it. Undefined otherwise.
 */
export const replacedFetchNote: string | undefined =
  nodeFetch === undefined || otherRuntime || isNodeFetch(nodeFetch)
    ? undefined
    : `tapedeck: the global fetch had been replaced when llm-tapedeck was imported (${replacedBy(nodeFetch)}, not Node's own fetch); recordings are made through it. If it is a stub or an interceptor that answers LLM calls, its answers are recorded as the provider's (MSW's are refused instead): replace fetch after importing llm-tapedeck, or give the tape its fetch with the fetch option.`;

/**
 * A URL for a message: its origin and path, without its query (a key may ride there: Gemini's
 * `?key=`) or user and password.
 *
 * @example
 * withoutQuery('https://x.test/v1/models?key=abc') // 'https://x.test/v1/models'
 */
export function withoutQuery(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return url.replace(/[?#][^]*$/, ''); // not absolute: as given, cut at its query
  }
}

/**
 * What a live call is told when the global fetch was not Node's own as llm-tapedeck loaded and
 * no `fetch` option was given: its answers would have been recorded as the provider's.
 *
 * @example
 * throw stubbedFetchError('https://api.openai.com/v1/chat/completions')
 */
export function stubbedFetchError(url: string): TapedeckError {
  const where = withoutQuery(url);
  const found =
    fetchAtImport === undefined
      ? 'There was no global fetch when llm-tapedeck was imported (a test environment without one, or one that removed it)'
      : `The global fetch had been replaced by a test double when llm-tapedeck was imported (a mock function: vi.fn(), jest.fn(), vi.spyOn, a sinon stub), whose answers would be recorded as the provider's`;
  return new TapedeckError(
    'E_FETCH_STUBBED',
    `${found}. The call to ${where} was not sent and nothing was recorded.`,
    {
      option: 'fetch',
      lasting: true,
      hint: "Replace the global fetch after llm-tapedeck is imported (import it first in the setup file), and restore it when the test ends (vi.unstubAllGlobals(), or unstubGlobals: true in the vitest config); or give the tape the fetch that reaches the provider: the fetch option (tapedeckFixtures({ fetch }), openTestTape({ fetch }), createFetch({ fetch })).",
    },
  );
}
