/**
 * sse-assemble.ts for browser builds: a page replays recorded bytes and never reads a stream as
 * an answer (the tree, drift and the recorder's completeness check do, in Node), so the
 * assembler stays out of a bundle with a 100 KB budget (bench/size.mjs). The event parser is
 * the same (./sse-parse.ts).
 */
import type { SseEvent } from './sse-parse.ts';

export { parseSse, type SseEvent } from './sse-parse.ts';

/** No answer in a page (see sse-assemble.ts). */
export function assembleStream(_contentType: string | readonly string[] | undefined | null, _bytes: Uint8Array | string): Record<string, unknown> | undefined {
  return undefined;
}

/** A page records nothing, so it judges no stream (see sse-assemble.ts). */
export function streamComplete(_contentType: string | readonly string[] | undefined | null, _bytes: Uint8Array | string): boolean {
  return true;
}

/** The event's name as given (see sse-assemble.ts). */
export function sseEventType(event: string, _data: string): string {
  return event;
}

/** The answer as given (see sse-assemble.ts). */
export function withChunkEnvelope(assembled: Record<string, unknown>, _events: readonly SseEvent[]): Record<string, unknown> {
  return assembled;
}
