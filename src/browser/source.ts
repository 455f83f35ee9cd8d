/**
 * Bytes from where a page keeps them: a URL (fetched), a fetch Response, an ArrayBuffer or a
 * typed array. Shared by loadTape and loadWasmBuild, so both report a failed download the same
 * way (with the URL and the HTTP status).
 */
import { TapedeckError } from '../errors.ts';
import { isArrayBuffer } from '../bytes.ts';
import { fetchSource } from './fetch-source.ts';

/** Where bytes come from in a page. */
export type ByteSource = string | URL | Response | ArrayBuffer | ArrayBufferView;

/** A source string as messages show it: clipped, as a page may pass a whole tape's text. */
const clip = (s: string): string => (s.length > 300 ? `${s.slice(0, 200)}… (${s.length} characters)` : s);

/**
 * The bytes of a source, and a name for messages (the URL, or what was passed). A failed download
 * is E_TAPE_NOT_FOUND (404) or E_TAPE_IO, or `failCode` for what is no tape (a WebAssembly build).
 *
 * @example
 * const { bytes, name } = await bytesOf('/tapes/chat.tape', 'tape')
 */
export async function bytesOf(source: ByteSource, what: string, failCode?: 'E_BACKEND'): Promise<{ bytes: Uint8Array; name: string }> {
  if (isArrayBuffer(source)) return { bytes: new Uint8Array(source), name: `<${what} bytes>` };
  if (ArrayBuffer.isView(source)) return { bytes: new Uint8Array(source.buffer, source.byteOffset, source.byteLength), name: `<${what} bytes>` };
  let res: Response;
  let name: string;
  if (typeof source === 'string' || source instanceof URL) {
    name = clip(String(source));
    // The text of a tape (its JSON form read with res.text()) is no URL: fetched as one, it was a
    // request for a 37 KB path and a 404 quoting all of it.
    if (typeof source === 'string' && (/^\s*[[{]/.test(source) || (source.length > 2000 && source.includes('\n')))) {
      throw new TapedeckError('E_ARG', `A ${what} URL was given text (${source.length} characters): ${JSON.stringify(source.slice(0, 30))}….`, { hint: 'Pass the bytes: new TextEncoder().encode(text), or a URL.' });
    }
    try {
      // In Node a file: URL is read from disk (./fetch-source.ts); a page fetches it.
      res = await fetchSource(source);
    } catch (e) {
      throw new TapedeckError(failCode ?? 'E_TAPE_IO', `Could not fetch the ${what} at ${name}: ${(e as Error).message}.`, {
        file: name,
        hint: 'Check the URL and that the server is up (a page cannot read file:// URLs with fetch).',
      });
    }
  } else if (typeof Response !== 'undefined' && source instanceof Response) {
    res = source;
    name = clip(res.url) || `<${what} response>`;
    // Else arrayBuffer() below throws a bare TypeError.
    if (res.bodyUsed) throw new TapedeckError('E_ARG', `The body of the ${what} Response ${name} was already read.`, { hint: 'Pass a Response not read yet (clone it before reading: res.clone()), or the bytes read from it.' });
  } else {
    throw new TapedeckError('E_ARG', `Cannot load a ${what} from ${Object.prototype.toString.call(source)}.`, {
      hint: 'Pass a URL, a fetch Response, an ArrayBuffer or a Uint8Array.',
    });
  }
  // A mock of the page's requests (MSW's worker) answers the file's URL too when it refuses
  // requests it has no handler for: HTTP 500 "Request Handler Error", at the right path.
  if (!res.ok) {
    throw new TapedeckError(failCode ?? (res.status === 404 ? 'E_TAPE_NOT_FOUND' : 'E_TAPE_IO'), `The ${what} at ${name} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}.`, {
      file: name,
      status: res.status,
      hint: `Serve the ${what} file with the page at this path; let a mock (MSW) passthrough() it.`,
    });
  }
  return { bytes: new Uint8Array(await res.arrayBuffer()), name };
}
