/**
 * A wait the caller's AbortSignal ends: what `fetch` promises for every step before an answer
 * starts. A step that does not take a signal itself (opening a shared store, asking it for
 * other proxies' recordings) would otherwise keep the call pending after the caller gave up.
 */

/**
 * `p`, or a rejection with the signal's reason as soon as it aborts (the step itself runs on;
 * its late result is dropped).
 *
 * @example
 * const d = await untilAborted(opening, signal)
 */
export function untilAborted<T>(p: T | Promise<T>, signal: AbortSignal): Promise<T> {
  if (!(p instanceof Promise)) return Promise.resolve(p);
  if (signal.aborted) {
    p.catch(() => {});
    return Promise.reject(signal.reason);
  }
  let onAbort: (() => void) | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    }),
  ]).finally(() => signal.removeEventListener('abort', onAbort!));
}
