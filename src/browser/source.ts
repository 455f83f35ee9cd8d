/**
 * Bytes from where a page keeps them: a URL (fetched), a fetch Response, an ArrayBuffer or a
 * typed array. Shared by loadTape and loadWasmBuild, so both report a failed download the same
 * way (with the URL and the HTTP status).
 */
import { TapedeckError } from '../errors.ts';

/** Where bytes come from in a page. */
export type ByteSource = string | URL | Response | ArrayBuffer | ArrayBufferView;

/** The bytes of a source, and a name for messages (the URL, or what was passed). */
export async function bytesOf(source: ByteSource, what: string): Promise<{ bytes: Uint8Array; name: string }> {
  if (source instanceof ArrayBuffer) return { bytes: new Uint8Array(source), name: `<${what} bytes>` };
  if (ArrayBuffer.isView(source)) return { bytes: new Uint8Array(source.buffer, source.byteOffset, source.byteLength), name: `<${what} bytes>` };
  let res: Response;
  let name: string;
  if (typeof source === 'string' || source instanceof URL) {
    name = String(source);
    try {
      res = await fetch(source);
    } catch (e) {
      throw new TapedeckError('E_TAPE_IO', `Could not fetch the ${what} at ${name}: ${(e as Error).message}.`, {
        file: name,
        hint: 'Check the URL and that the server is up (a page cannot read file:// URLs with fetch).',
      });
    }
  } else if (typeof Response !== 'undefined' && source instanceof Response) {
    res = source;
    name = res.url || `<${what} response>`;
  } else {
    throw new TapedeckError('E_ARG', `Cannot load a ${what} from ${Object.prototype.toString.call(source)}.`, {
      hint: 'Pass a URL, a fetch Response, an ArrayBuffer or a Uint8Array.',
    });
  }
  if (!res.ok) {
    throw new TapedeckError(res.status === 404 ? 'E_TAPE_NOT_FOUND' : 'E_TAPE_IO', `The ${what} at ${name} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}.`, {
      file: name,
      status: res.status,
      hint: `Serve the ${what} file with the page (a static file next to it), and check its path.`,
    });
  }
  return { bytes: new Uint8Array(await res.arrayBuffer()), name };
}
