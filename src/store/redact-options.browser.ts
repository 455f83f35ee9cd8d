/**
 * redact-options.ts for browser builds: a page never records, so redaction there only keys the
 * requests it replays, and a misspelt rule shows as a miss rather than as a secret on disk.
 * The names are checked in Node, where tapes are recorded; the bundle keeps its 100 KB budget.
 */

/** Accepts the option as it is (see redact-options.ts). */
export function checkRedactOptions(_redact: unknown): void {}

/** No names (see redact-options.ts): the page's entry does not check names. */
export const REDACT_INNER = { option: 'redact', names: [] as readonly string[] };
