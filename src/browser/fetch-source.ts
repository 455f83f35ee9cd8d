/**
 * How a tape or a WebAssembly build named by URL is read: with fetch, and, in Node (component
 * tests under jsdom or happy-dom import `llm-tapedeck/browser` there), a `file:` URL from disk:
 * `new URL('./chat.tape', import.meta.url)` is how ES module code names a file beside it, and
 * Node's fetch reads no `file:` URL ("fetch failed"). Browser bundles take ./fetch-source.browser.ts
 * instead (package.json "browser"): a page has no disk, and no room for this in its budget.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

/** File system errors that mean "no file there": told as a 404, as a server would. */
const MISSING = new Set(['ENOENT', 'ENOTDIR']);

/**
 * The answer for `source`: a `file:` URL's bytes read from disk (a 404 when there is no such
 * file), any other URL fetched.
 *
 * @example
 * const res = await fetchSource(new URL('./chat.tape', import.meta.url))
 */
export async function fetchSource(source: string | URL): Promise<Response> {
  if (!String(source).startsWith('file:')) return fetch(source);
  try {
    return new Response(await readFile(fileURLToPath(String(source))));
  } catch (e) {
    if (MISSING.has((e as NodeJS.ErrnoException).code ?? '')) return new Response(null, { status: 404, statusText: 'Not Found' });
    throw e;
  }
}
