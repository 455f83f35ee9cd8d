/**
 * stream-redact.ts for browser builds: a page only replays (record and update are refused
 * there), so no answer is redacted for a tape in a page, and the event-stream encoder and the
 * credential search across events stay out of the page's bundle.
 */

/** No stream is redacted in a page (see stream-redact.ts). */
export function redactStream(_body: Uint8Array, _contentType: string | undefined, _masks: unknown): undefined {
  return undefined;
}

/** The body redacted by the redactor alone, as in Node for a body that is no stream. */
export function redactAnswerBody(body: Uint8Array, contentType: string | undefined, masks: { bytes(body: Uint8Array, contentType?: string, known?: unknown): Uint8Array }, known?: unknown): { body: Uint8Array } {
  return { body: masks.bytes(body, contentType, known) };
}

/** The answer as it is: a page records nothing (see stream-redact.ts). */
export function redactedResponse<R>(r: R, _known: unknown, _masks: unknown): R {
  return r;
}
