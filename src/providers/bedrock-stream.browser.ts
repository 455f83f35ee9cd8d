// The page's stand-in for ./bedrock-stream.ts: a page only replays, so it never asks whether a
// Bedrock event stream it records is whole, nor assembles one for hooks or drift reports (their
// page stand-ins do nothing); the AWS event-stream frame decoder stays out of the page bundle.
import type { RouteMatch } from './provider.ts';

/** Unknown in a page (nothing is recorded there). */
export function complete(_bytes: Uint8Array, _contentType: string | undefined, _route?: RouteMatch): boolean | undefined {
  return undefined;
}

/** Not assembled in a page. */
export function assemble(_bytes: Uint8Array, _contentType: string | undefined, _route?: RouteMatch): Record<string, unknown> | undefined {
  return undefined;
}
