/**
 * The 413 for a request body over the limit, sent once the client has stopped sending. Answered
 * at once, with the connection closed after it, the rest of the body arrived at a closed socket:
 * the kernel answered it with a reset, and a client that writes its whole body before it reads
 * the answer (Python's httpx and aiohttp, most HTTP/1.1 clients) got a broken pipe instead of
 * the 413 and its hint (raise --max-body). So the rest is read and dropped first, for a while
 * (a server may close "after reading and discarding the rest of the request", RFC 9112 9.6).
 */
import type { IncomingMessage } from 'node:http';

/**
 * How long the rest of an oversized body is read and dropped before the 413 goes out anyway: a
 * loopback client sends tens of megabytes in that time, and a slow one is not waited for long.
 */
export const DRAIN_MS = 3000;

/**
 * Calls `answer` once the rest of `req`'s body has arrived and been dropped, or after `drainMs`,
 * whichever comes first. At once when nothing more is coming: the request ended, or its client
 * asked before sending (`Expect: 100-continue`, refused without a 100, so it sends no body), or
 * it is an HTTP/2 stream (its reset ends the upload, the connection stays).
 *
 * @example
 * if (declared > max) return afterOversizedBody(req, () => done(tooLarge(declared, max)))
 */
export function afterOversizedBody(req: IncomingMessage, answer: () => void, drainMs = DRAIN_MS): void {
  if (req.complete || req.readableEnded || req.httpVersionMajor === 2 || /100-continue/i.test(String(req.headers.expect ?? ''))) {
    req.resume();
    return answer();
  }
  let answered = false;
  const go = () => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    req.off('end', go);
    req.off('close', go);
    req.off('error', go);
    answer();
  };
  const timer = setTimeout(go, drainMs);
  req.on('end', go);
  req.on('close', go);
  req.on('error', go);
  req.resume();
}
