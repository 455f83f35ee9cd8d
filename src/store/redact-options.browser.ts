/**
 * redact-options.ts for browser builds: a page never records, so redaction there only keys the
 * requests it replays. Its option names are checked as in Node, in the same words: a misspelt
 * rule (`feilds`) used to be taken without a word, the field went unmasked and the request
 * missed. The value checks stay in Node, where tapes are recorded: the bundle has a 100 KB
 * budget (they cost about 0.4 KB gzipped, names only about 0.25).
 */
import { closestName } from '../edit-distance.ts';
import { TapedeckError } from '../errors.ts';
import { optionNames } from '../option-names.ts';
import type { RedactOptions } from './redact.ts';

/** The names of the redact option's own options (as in redact-options.ts). */
const REDACT_OPTIONS = optionNames<RedactOptions>()(['keepSecrets', 'headers', 'fields', 'query', 'scanStrings', 'salt']);

/**
 * Throws E_ARG for a name the redact option does not have, with the nearest one, in the words of
 * redact-options.ts. Anything but an object passes.
 *
 * @example
 * checkRedactOptions({ feilds: ['ssn'] }) // throws E_ARG: Unknown redact option "feilds" … Did you mean fields?
 */
export function checkRedactOptions(redact: unknown): void {
  if (typeof redact !== 'object' || !redact) return;
  // Not checkOptionNames itself: its other case (an option given beside its parent) is Node's.
  for (const name of Object.keys(redact)) {
    if (REDACT_OPTIONS.includes(name)) continue;
    const near = closestName(name, REDACT_OPTIONS);
    throw new TapedeckError('E_ARG', `Unknown redact option ${JSON.stringify(name)}.`, { option: name, hint: `${near ? `Did you mean ${near}? ` : ''}The options of redact are ${REDACT_OPTIONS.join(', ')} (docs/proxy.md#secrets).` });
  }
}

/** No names (see redact-options.ts): the page's entry does not check names. */
export const REDACT_INNER = { option: 'redact', names: [] as readonly string[] };
