/**
 * fetch-redirect.ts for browser builds: a page's replay fetch answers a recorded redirect with
 * the redirect itself, as it was recorded, so the hop-following stays out of a bundle with a
 * 100 KB budget (bench/size.mjs). Record the tape with the URL the redirect leads to.
 */
import type { SentRequest, TapeCall } from './fetch-redirect.ts';

export type { SentRequest };

/** The call alone, no hop followed (see fetch-redirect.ts). */
export function followRedirects(call: TapeCall, input: string | URL | Request, init: RequestInit | undefined): Promise<Response> {
  return call(input, init, {});
}
