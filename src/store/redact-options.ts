/**
 * The `redact` option checked where it is given. Misspelt (`feilds`), or a name given as a string
 * instead of a list (`fields: 'ssn'`, which was read as the fields `s` and `n`), it used to be
 * taken without a word, and the value the caller asked to mask went to disk as it was.
 */
import { TapedeckError } from '../errors.ts';
import { checkOptionNames, optionNames } from '../option-names.ts';
import type { RedactOptions } from './redact.ts';

/** The names of the redact option's own options. */
const REDACT_OPTIONS = optionNames<RedactOptions>()(['keepSecrets', 'headers', 'fields', 'query', 'scanStrings', 'salt']);

const EXAMPLE = "redact: { fields: ['ssn'], headers: ['x-internal-token'] }";

/**
 * Throws E_ARG unless `redact` is undefined or redaction options: known names, lists of names
 * where lists go, true or false where a flag goes. Every entry that takes the option (createFetch,
 * the proxy, the test helpers, ReplayCache, MCP and realtime tapes) calls this where it is made.
 *
 * @example
 * checkRedactOptions({ feilds: ['ssn'] }) // throws E_ARG: Unknown redact option "feilds" … Did you mean fields?
 * checkRedactOptions({ fields: 'ssn' })   // throws E_ARG: redact.fields must be a list of names …
 */
export function checkRedactOptions(redact: unknown): void {
  if (redact === undefined) return;
  if (redact === null || typeof redact !== 'object' || Array.isArray(redact)) {
    throw new TapedeckError('E_ARG', `The redact option must be an object, not ${redact === null ? 'null' : Array.isArray(redact) ? 'an array' : typeof redact}.`, { option: 'redact', hint: `Give the rules as an object: ${EXAMPLE}, or { keepSecrets: true } to store secrets as they are.` });
  }
  checkOptionNames(redact, REDACT_OPTIONS, 'redact', 'docs/proxy.md#secrets');
  const r = redact as Record<string, unknown>;
  for (const name of ['headers', 'fields', 'query'] as const) {
    const v = r[name];
    if (v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string' && x !== ''))) continue;
    throw new TapedeckError('E_ARG', `redact.${name} must be a list of names, not ${describe(v)}.`, { option: `redact.${name}`, hint: `Give an array of strings: ${name}: [${JSON.stringify(typeof v === 'string' && v ? v : 'name')}].` });
  }
  for (const name of ['keepSecrets', 'scanStrings'] as const) {
    const v = r[name];
    if (v !== undefined && typeof v !== 'boolean') {
      throw new TapedeckError('E_ARG', `redact.${name} must be true or false, not ${describe(v)}.`, { option: `redact.${name}`, hint: `Write ${name}: true or ${name}: false.` });
    }
  }
}

/** A value as an error message names it. */
function describe(v: unknown): string {
  if (typeof v === 'string') return `the string ${JSON.stringify(v)}`;
  if (Array.isArray(v)) return 'an array holding something other than non-empty strings';
  return v === null ? 'null' : typeof v;
}

/**
 * For checkOptionNames: redaction's flags given beside `redact` instead of in it. (Not its lists:
 * a `headers` beside it may as well mean matchHeaders.)
 */
export const REDACT_INNER = { option: 'redact', names: ['keepSecrets', 'scanStrings'] };
