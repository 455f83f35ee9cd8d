/**
 * Node's own Web globals for the CommonJS bundle of llm-tapedeck/jest (scripts/build.mjs injects
 * this module into it: esbuild replaces the bundle's free references to these names with its
 * exports). jest runs a test file, and its setup files, with the test environment's object for
 * their global: under `testEnvironment: 'jsdom'` a DOM window, which has no TextEncoder,
 * TextDecoder, setImmediate, fetch, Request, Response, ReadableStream or structuredClone, and an
 * AbortController of its own that Node's fetch refuses. The bundle's core used TextEncoder as it
 * loaded, so every test file of such a project failed to run, tapes or not. The bundle takes
 * them from Node instead, and leaves the environment's global as it is: a test that uses no tape
 * sees the window it had.
 *
 * Node's modules give most of them; fetch and its classes, AbortController and structuredClone
 * are on Node's own global object only, which node:vm's runInThisContext evaluates in (jest's
 * test environment is another vm context). In jest's node environment those globals are Node's
 * already (jest copies them in), so nothing changes there.
 */
import { TextDecoder as NodeTextDecoder, TextEncoder as NodeTextEncoder } from 'node:util';
import * as nodeTimers from 'node:timers';
import { ReadableStream as NodeReadableStream, TransformStream as NodeTransformStream, WritableStream as NodeWritableStream } from 'node:stream/web';
import { runInThisContext } from 'node:vm';

/** The test environment's global object (the module runs in it). */
const env = globalThis;
/** Node's own global object. */
const node = runInThisContext('globalThis') as typeof globalThis;

// The fetch family and what travels with it, taken together: Node's fetch checks that a
// request's signal is its own AbortSignal, and its body streams are its own.
export const fetch: typeof globalThis.fetch = node.fetch;
export const Request: typeof globalThis.Request = node.Request;
export const Response: typeof globalThis.Response = node.Response;
export const Headers: typeof globalThis.Headers = node.Headers;
export const FormData: typeof globalThis.FormData = node.FormData;
export const AbortController: typeof globalThis.AbortController = node.AbortController;
export const AbortSignal: typeof globalThis.AbortSignal = node.AbortSignal;
export const structuredClone: typeof globalThis.structuredClone = node.structuredClone;
export const TextEncoder = NodeTextEncoder;
export const TextDecoder = NodeTextDecoder;
export const ReadableStream = NodeReadableStream;
export const WritableStream = NodeWritableStream;
export const TransformStream = NodeTransformStream;
export const setImmediate = nodeTimers.setImmediate;
export const clearImmediate = nodeTimers.clearImmediate;

// Timers: a DOM window's return numbers (no unref(), which tapedeck calls on its own timers), so
// there Node's are used. Where the environment has Node's timers they are looked up at each call,
// as before, so that fake timers a test installs later apply to tapedeck as they always did.
const timers: Pick<typeof globalThis, 'setTimeout' | 'clearTimeout' | 'setInterval' | 'clearInterval'> = typeof env.setImmediate === 'function' ? env : nodeTimers;
export const setTimeout = ((...a: Parameters<typeof globalThis.setTimeout>) => timers.setTimeout(...a)) as typeof globalThis.setTimeout;
export const clearTimeout = ((t: Parameters<typeof globalThis.clearTimeout>[0]) => timers.clearTimeout(t)) as typeof globalThis.clearTimeout;
export const setInterval = ((...a: Parameters<typeof globalThis.setInterval>) => timers.setInterval(...a)) as typeof globalThis.setInterval;
export const clearInterval = ((t: Parameters<typeof globalThis.clearInterval>[0]) => timers.clearInterval(t)) as typeof globalThis.clearInterval;

/** Read through `globalThis.<name>`: the environment's when it has one, else Node's. */
const FALLBACK = new Set<PropertyKey>(['fetch', 'Request', 'Response', 'Headers', 'FormData', 'AbortController', 'AbortSignal', 'structuredClone', 'TextEncoder', 'TextDecoder', 'ReadableStream', 'WritableStream', 'TransformStream', 'setImmediate', 'clearImmediate']);

/**
 * The bundle's `globalThis`: the environment's global object, whose missing Web globals read as
 * Node's. Writes go to the environment's (the fetch switch of tape().install() routes the fetch
 * the test's code calls), and a global the environment has is its own (a stub of the global
 * fetch is still seen, and refused, as one).
 */
const scope: typeof globalThis =
  node === env
    ? env
    : new Proxy(env, {
        get(target, key) {
          const value: unknown = Reflect.get(target, key);
          return value === undefined && FALLBACK.has(key) ? (node as unknown as Record<PropertyKey, unknown>)[key] : value;
        },
      });
export { scope as globalThis };
