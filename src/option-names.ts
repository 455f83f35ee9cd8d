/**
 * Option objects checked for names their function does not take.
 *
 * In plain JavaScript nothing stops `createFetch({ tape, mdoe: 'record' })` or
 * `redact: { feilds: ['ssn'] }`: the misspelt option was dropped without a word, so the tape
 * replayed instead of recording, or the field the caller asked to mask was written to disk.
 * TypeScript callers get the same names checked when they compile; the lists below are checked
 * against the option types (see optionNames), so they cannot fall behind them.
 */
import { closestName } from './edit-distance.ts';
import { TapedeckError } from './errors.ts';

/** The names of T's options missing from the list L (never: none is). */
type Missing<T, L extends readonly string[]> = Exclude<keyof T, L[number]>;

/**
 * The names of the options type T, as a list the compiler checks: a name T does not have, or a
 * name of T left out, does not compile.
 *
 * @example
 * const NAMES = optionNames<{ tape?: string; mode?: string }>()(['tape', 'mode'])
 */
export function optionNames<T>(): <const L extends readonly (keyof T & string)[]>(names: L & ([Missing<T, L>] extends [never] ? unknown : { missing: Missing<T, L> })) => readonly string[] {
  return (names) => names;
}

/**
 * A list of names without some of them, typed as what is left (for options types made with Omit).
 *
 * @example
 * namesWithout(['tape', 'mode', 'match'] as const, 'tape') // ['mode', 'match']
 */
export function namesWithout<const L extends readonly string[], const X extends string>(names: L, ...omit: X[]): Exclude<L[number], X>[] {
  return names.filter((n): n is Exclude<L[number], X> => !(omit as readonly string[]).includes(n));
}

/**
 * Throws E_ARG unless `value` is an object (not null, not an array): what an entry that reads
 * members of its argument must be given. In plain JavaScript a forgotten or misplaced argument
 * otherwise surfaces as Node's TypeError about reading a property of undefined, which names
 * neither the function nor what it takes. `where` names the function, `example` is a call that
 * works, `takes` what the argument is (an options object unless said).
 *
 * @example
 * checkOptionsObject(undefined, 'createHandler', "createHandler({ tape: 'app.tape', upstream: 'https://api.openai.com' })")
 * // throws E_ARG: createHandler takes an options object; got undefined. hint: Pass one, e.g. createHandler({ ... })
 */
export function checkOptionsObject(value: unknown, where: string, example: string, takes = 'an options object'): asserts value is object {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return;
  throw new TapedeckError('E_ARG', `${where} takes ${takes}; got ${describeArgument(value)}.`, { hint: `Pass one, e.g. ${example}` });
}

/**
 * A wrong argument in the words of an E_ARG's "got …": `null`, `undefined`, `an empty string`,
 * `an array`, `the string "…"` (its first 40 characters), else its type. One reading for every
 * entry that names what it was given.
 *
 * @example
 * describeArgument([]) // 'an array'
 * describeArgument({}) // 'object'
 */
export function describeArgument(value: unknown): string {
  if (value === null) return 'null';
  if (value === '') return 'an empty string';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}` : typeof value;
}

/**
 * Throws E_ARG for the first own name of `opts` that is not in `known`, with the nearest known
 * name and where the options are described. `where` names the function (`createFetch`) or the
 * option holding them (`redact`). A name that belongs inside one of the options (`keepSecrets`
 * given beside `redact` instead of in it) is shown where it goes. Anything but an object passes:
 * each entry's own checks say what its options must be.
 *
 * @example
 * checkOptionNames({ tape: 'a.tape', mdoe: 'record' }, ['tape', 'mode'], 'createFetch', 'docs/api.md')
 * // throws E_ARG: Unknown createFetch option "mdoe". hint: Did you mean mode? ...
 */
export function checkOptionNames(opts: unknown, known: readonly string[], where: string, docs: string, inner?: { option: string; names: readonly string[] }): void {
  if (opts === null || typeof opts !== 'object') return;
  for (const name of Object.keys(opts)) {
    if (known.includes(name)) continue;
    if (inner?.names.includes(name)) {
      throw new TapedeckError('E_ARG', `${name} is not an option of ${where} itself: it goes in its ${inner.option} option.`, { option: name, hint: `Write ${inner.option}: { ${name}: ... } (${docs}).` });
    }
    const near = closestName(name, known);
    throw new TapedeckError('E_ARG', `Unknown ${where} option ${JSON.stringify(name)}.`, {
      option: name,
      hint: `${near ? `Did you mean ${near}? ` : ''}The options of ${where} are ${known.join(', ')} (${docs}).`,
    });
  }
}
