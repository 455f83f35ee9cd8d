/**
 * Which answers createFetch handed out were streams that carried the API's error event and were
 * not recorded: known only once the stream ended, after the caller got its response (whose
 * status is 200). The test runner's tape asks, to count them in the run summary with the 4xx/5xx
 * answers it did not record (src/testing/session.ts). Node only, as createFetch's record path.
 */

const answers = new WeakMap<Response, Promise<boolean>>();

/**
 * Notes `res`, an answer being recorded, with a promise of whether it ends as an error answer
 * that was not recorded; returns `res`.
 *
 * @example
 * return noteErrorEvent(new Response(stream, init), ended.then(() => refusedAsError))
 */
export function noteErrorEvent(res: Response, ended: Promise<boolean>): Response {
  answers.set(res, ended);
  return res;
}

/**
 * Whether `res` ended as a stream carrying the API's error event, not recorded: resolves once
 * the stream ended (at once, false, for answers not noted).
 *
 * @example
 * if (await endedWithErrorEvent(res)) errorsNotRecorded++
 */
export function endedWithErrorEvent(res: Response): Promise<boolean> {
  return answers.get(res) ?? Promise.resolve(false);
}
