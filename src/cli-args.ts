/**
 * Command-line arguments before node:util's parseArgs reads them. parseArgs takes a value that
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
