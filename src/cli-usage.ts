// What the commands parsed in src/cli.ts (canonical, hash, paths, key, verify, inspect, prune,
// export, import, help, version) take: their options and how many arguments. A word they do not
// take is a usage error naming it, never dropped: `tapedeck inspect a.tape extra` or
// `tapedeck verify --json` went on as if it had not been given, and `export --har --review`
// silently chose one of the two. A misspelt command or option gets a "did you mean".
// (The commands with their own parsers, serve, tree, diff and the rest, check their own.)
import { usageError } from './cli-errors.ts';
import { closestName } from './edit-distance.ts';

/** Every command of `tapedeck`, for a "did you mean" under a misspelt one. */
export const COMMANDS: readonly string[] = ['canonical', 'hash', 'paths', 'key', 'verify', 'inspect', 'tree', 'diff', 'stats', 'rerecord', 'prune', 'export', 'scan', 'import', 'mcp', 'serve', 'add', 'init', 'merge', 'push', 'pull', 'version', 'help'];

/**
 * Words users type for a command under another name, from the tools they come from (a proxy
 * command, `ls`, `dump`): an edit distance cannot find `serve` from `proxy`.
 */
const OTHER_NAMES: Readonly<Record<string, string>> = {
  proxy: 'serve',
  record: 'serve',
  replay: 'serve',
  start: 'serve',
  run: 'serve',
  show: 'inspect',
  list: 'inspect',
  ls: 'inspect',
  cat: 'export',
  dump: 'export',
  check: 'verify',
  validate: 'verify',
  lint: 'scan',
  secrets: 'scan',
  clean: 'prune',
  gc: 'prune',
  convert: 'import',
  load: 'import',
};

/** The options and the most arguments of each command parsed here, and a command line that works. */
const USAGE: Readonly<Record<string, { options: readonly string[]; most: number; what: string; example: string }>> = {
  canonical: { options: ['--ignore'], most: 1, what: 'one JSON file (or stdin)', example: 'tapedeck canonical request.json' },
  hash: { options: ['--ignore'], most: 1, what: 'one JSON file (or stdin)', example: 'tapedeck hash request.json' },
  paths: { options: ['--ignore'], most: 1, what: 'one JSON file (or stdin)', example: 'tapedeck paths request.json' },
  key: { options: ['--ignore', '--route'], most: 1, what: 'one JSON file (or stdin)', example: 'tapedeck key request.json' },
  verify: { options: [], most: Infinity, what: 'tapes or folders of tapes', example: 'tapedeck verify recordings/app.tape' },
  inspect: { options: [], most: 1, what: 'one tape', example: 'tapedeck inspect recordings/app.tape' },
  prune: { options: [], most: 1, what: 'one tape', example: 'tapedeck prune recordings/app.tape' },
  export: { options: ['--json', '--review', '--har', '--origin', '--textconv'], most: 1, what: 'one tape', example: 'tapedeck export recordings/app.tape > app.tape.json' },
  // import says itself which of its arguments is one too many (src/cli.ts).
  import: { options: ['--force', '--ignore', '--from', '--skip-bad', '--redact-header', '--redact-field', '--redact-query'], most: Infinity, what: 'the input and the tape', example: 'tapedeck import session.har app.tape' },
  help: { options: [], most: Infinity, what: 'a command', example: 'tapedeck help export' },
  version: { options: [], most: 0, what: 'no argument', example: 'tapedeck version' },
};

/** Options every command takes. */
const EVERYWHERE = ['--help', '-h', '--version', '-v', '--debug'];

/**
 * The working command line of `cmd` (one of those parsed in src/cli.ts) with `option` added, for
 * the hint under an option given without its value: the command typed, not another one's.
 * Undefined for a command not parsed there.
 *
 * @example
 * exampleWith('hash', '--ignore id,created') // 'tapedeck hash request.json --ignore id,created'
 */
export function exampleWith(cmd: string | undefined, option: string): string | undefined {
  const usage = cmd !== undefined && Object.hasOwn(USAGE, cmd) ? USAGE[cmd] : undefined;
  return usage && `${usage.example} ${option}`;
}

/**
 * Throws E_USAGE (exit 2) for a command line the command does not take: an unknown command, an
 * unknown option or one of another command, two options that contradict each other, or an
 * argument too many. `given` holds the options as written (`--ignore` for `--ignore=a,b`);
 * `helpOrVersion`: -h or -v was given, which answer whatever else is on the line.
 *
 * @example
 * checkUsage('inspect', ['inspect', 'a.tape', 'extra'], [], false, { har: false, review: false })
 * // throws E_USAGE: inspect takes one tape; "extra" is one argument too many.
 */
export function checkUsage(cmd: string, args: readonly string[], given: readonly string[], helpOrVersion: boolean, o: { har: boolean; review: boolean }): void {
  const usage = USAGE[cmd];
  if (usage === undefined) {
    const near = Object.hasOwn(OTHER_NAMES, cmd.toLowerCase()) ? OTHER_NAMES[cmd.toLowerCase()] : closestName(cmd, COMMANDS);
    throw usageError(`Unknown command ${JSON.stringify(cmd)}.`, `${near ? `Did you mean tapedeck ${near}? ` : ''}tapedeck --help lists the commands.`);
  }
  const own = [...usage.options, ...EVERYWHERE];
  for (const flag of given) {
    if (own.includes(flag)) continue;
    const others = Object.keys(USAGE).filter((c) => USAGE[c]!.options.includes(flag));
    if (others.length > 0 && cmd !== 'help') {
      throw usageError(`${cmd} does not take ${flag} (an option of ${others.join(' and ')}).`, `${usage.options.length ? `${cmd} takes ${usage.options.join(', ')}; ` : ''}tapedeck ${cmd} --help shows its usage.`);
    }
    if (others.length > 0) continue; // `tapedeck --help --force`: help answers
    // Only the command's own options are suggested: another command's would be refused next.
    const near = closestName(flag, own.filter((f) => f.startsWith('--')));
    throw usageError(`Unknown option ${flag}.`, `${near ? `Did you mean ${near}? ` : ''}${cmd === 'help' ? 'tapedeck --help lists the options.' : `tapedeck ${cmd} --help lists its options.`}`);
  }
  if (helpOrVersion) return;
  if (cmd === 'export' && o.har && (o.review || given.includes('--json'))) {
    throw usageError(`export prints one form: --har (HAR 1.2) or ${o.review ? '--review (the review JSON)' : "--json (tapedeck's JSON)"}, not both.`, 'tapedeck export app.tape --review, or tapedeck export app.tape --har');
  }
  const extra = args.slice(1 + usage.most);
  if (extra.length > 0) {
    throw usageError(`${cmd} takes ${usage.what}; ${extra.map((a) => JSON.stringify(a)).join(', ')} ${extra.length === 1 ? 'is one argument' : 'are arguments'} too many.`, `${usage.example} (quote a path that has spaces)`);
  }
}
