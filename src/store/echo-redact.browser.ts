/**
 * echo-redact.ts for browser builds: a page only replays (record and update are refused there),
 * so no answer is redacted in a page and the search for the request's secrets stays out of it.
 */
import type { Redactor } from './redact.ts';

/** The redactor as given: nothing is recorded in a page (see echo-redact.ts). */
export function echoing(r: Redactor, _req: unknown, _bodyPlain?: boolean): Redactor {
  return r;
}
