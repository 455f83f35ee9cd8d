import { closestName } from './edit-distance.ts';

/**
 * Command-line arguments before and after node:util's parseArgs reads them. parseArgs takes a value that
 * starts with a dash for a missing one and says only that the flag's "argument is ambiguous"
 * (`--timeout -5`); joined to its flag (`--timeout=-5`), the value reaches the flag's own check,
 * which says what it must be.
 */

/**
 * The arguments with a value that looks like a negative number joined to its flag, for the
 * options of a parseArgs config that take a value.
 *
 * @example
 * dashValues(['--timeout', '-5'], { timeout: { type: 'string' } }) // ['--timeout=-5']
 */
export function dashValues(args: readonly string[], options: Readonly<Record<string, { type: string }>>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = args[i + 1];
    if (a.startsWith('--') && options[a.slice(2)]?.type === 'string' && next !== undefined && /^-[\d.]/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/**
 * What parseArgs rejected, said for a person at a terminal: an unknown option as `Unknown option
 * --fial-on.` with the nearest option the command has (`didYouMean`: "Did you mean --fail-on? ",
 * or ""), without parseArgs' advice about positionals that start with a dash, which fits a typo
 * less often than the option meant; anything else as parseArgs says it, its first line.
 *
 * @example
 * argsError(new Error("Unknown option '--fial-on'. To specify..."), { 'fail-on': { type: 'string' } })
 * // { message: 'Unknown option --fial-on.', didYouMean: 'Did you mean --fail-on? ' }
 */
export function argsError(e: unknown, options: Readonly<Record<string, unknown>>): { message: string; didYouMean: string } {
  const text = e instanceof Error ? e.message : String(e);
  const unknown = /^Unknown option '(-{1,2}[^']*)'/.exec(text);
  if (unknown === null) return { message: text.split('\n')[0]!.trim(), didYouMean: '' };
  const flag = unknown[1]!;
  const near = flag.startsWith('--') ? closestName(flag.slice(2), Object.keys(options)) : undefined;
  return { message: `Unknown option ${flag}.`, didYouMean: near === undefined ? '' : `Did you mean --${near}? ` };
}
