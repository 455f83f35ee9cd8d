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
 * dashValues(['--', '--timeout', '-5'], { timeout: { type: 'string' } }) // unchanged: arguments after --
 */
export function dashValues(args: readonly string[], options: Readonly<Record<string, { type: string }>>): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = args[i + 1];
    // Past `--` every word is an argument, one that looks like a flag and a number too.
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
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

/**
 * The words of a command line before `--` (options and arguments) and after it (arguments only,
 * even one that starts with a dash), as POSIX utilities read `--`: `tapedeck verify -- -x.tape`
 * names the tape `-x.tape`.
 *
 * @example
 * splitAtDashes(['--force', '--', '-x.json', 'out.tape']) // { before: ['--force'], after: ['-x.json', 'out.tape'] }
 */
export function splitAtDashes(args: readonly string[]): { before: string[]; after: string[] } {
  const at = args.indexOf('--');
  return at < 0 ? { before: [...args], after: [] } : { before: args.slice(0, at), after: args.slice(at + 1) };
}

/**
 * The first word before `--` that is a file's name starting with one dash (`-old.tape`), not an
 * option: it holds a dot or a slash, which no option's name does, or it names something on disk.
 * Read as an option, such a word was "Unknown option -old.tape" (or `-o`, the letter node:util's
 * parser reports), which does not say how to give the file. A negative number (`--port -5`, a
 * flag's value) is none.
 *
 * @example
 * dashPath(['verify', '-old.tape'], existsSync)      // '-old.tape'
 * dashPath(['serve', '--port', '-5'], existsSync)     // undefined
 * dashPath(['verify', '--', '-old.tape'], existsSync) // undefined: past --, it is an argument
 */
export function dashPath(args: readonly string[], exists: (path: string) => boolean): string | undefined {
  return splitAtDashes(args).before.find((w) => /^-[^-]/.test(w) && !/^-[\d.]+$/.test(w) && w !== '-h' && w !== '-v' && (/[./\\]/.test(w) || exists(w)));
}

/**
 * The first argument that holds U+FFFD and names nothing on disk, or undefined. Node.js decodes
 * the command line as UTF-8 and puts U+FFFD in place of bytes that are not (a Latin-1 `café` is
 * `caf\xe9`): such a path can no longer be spelt, so the file it named is "not found" and a file
 * to write would be made under another name than the one given. A word that names an existing
 * path (one whose name really holds U+FFFD) is kept; for `--flag=value` the value is looked at.
 *
 * @example
 * unspellableArgument(['verify', 'caf\uFFFD.tape'], existsSync) // 'caf\uFFFD.tape' (no such file)
 * unspellableArgument(['verify', 'cafe.tape'], existsSync)      // undefined
 */
export function unspellableArgument(args: readonly string[], exists: (path: string) => boolean): string | undefined {
  for (const word of args) {
    if (!word.includes('\uFFFD')) continue;
    const value = /^--[^=]+=/.test(word) ? word.slice(word.indexOf('=') + 1) : word;
    if (value.includes('\uFFFD') && !exists(value)) return value;
  }
  return undefined;
}
