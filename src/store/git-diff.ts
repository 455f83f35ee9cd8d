/**
 * `tapedeck init`: readable tape diffs in review, and a pre-commit check for credentials. Tapes
 * are binary (msgpack frames); git shows them as their stable JSON export in review form
 * (`tapedeck export --review`: sorted keys, one field per line, streams as their answer and one
 * event per line) once a diff driver says so. Settings, all written here, idempotently:
 *
 *   .gitattributes:  *.tape diff=tapedeck
 *                    *.tape merge=tapedeck
 *   git config:      diff.tapedeck.textconv: llm-tapedeck export --review --textconv (node_modules/.bin
 *                    from the top of the work tree, else npx --no-install)
 *                    diff.tapedeck.binary false
 *                    merge.tapedeck.name, merge.tapedeck.driver "npx --no-install llm-tapedeck merge %O %A %B %P"
 *   .git/hooks/pre-commit (only when there is none): tapedeck scan --staged
 *
 * The first is committed (everyone's diffs use the driver); the rest are per clone (git does
 * not let a repository run commands on its own), so each developer runs `npx llm-tapedeck init`.
 * `binary false` is what makes `git diff --stat` count a tape's changed lines instead of
 * saying `Bin`: git decides "binary" from the driver's setting or the raw bytes, not from the
 * textconv output (git 2.39; test/cli/init.test.ts checks it with the git at hand). Patches (`git format-patch`, `git am`) of tapes still apply byte for byte.
 * `--textconv` makes the export never fatal: a textconv that exits nonzero makes git die
 * ("unable to read files to diff") and hides all older history from `git log -p`, so a tape it
 * cannot read (a truncated file committed long ago) is shown as the error's text instead, exit 0.
 * Running init again replaces the command of an older init (without --textconv), and adds the
 * merge driver to a clone set up before it. The merge attribute is a line of its own, not added
 * to the diff line: attributes of lines that match accumulate, and a user's edited diff line is
 * left as it is. `%P` (the tape's path) lets the merge's messages name the tape rather than
 * git's temporary file.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { parseArgs } from 'node:util';
import { TapedeckError } from '../errors.ts';
import { reportCliError } from '../cli-errors.ts';
import { argsError } from '../cli-args.ts';

/** The attribute line and the default textconv command. */
export const GIT_ATTRIBUTE = '*.tape diff=tapedeck';
/** The attribute line that makes git merge tapes with `tapedeck merge`, and its default command. */
export const GIT_MERGE_ATTRIBUTE = '*.tape merge=tapedeck';
/** The attribute line that keeps git from converting a tape's line endings (core.autocrlf), which changes every record holding such a byte. */
export const GIT_TEXT_ATTRIBUTE = '*.tape -text';
// The commands name the package, llm-tapedeck (its bin of that name is this CLI): `npx tapedeck`
// in a clone where it is not installed yet resolves `tapedeck` on the registry, an unrelated
// package, and invites installing it (then git would run its code on every diff and commit).
export const DEFAULT_MERGE_DRIVER = 'npx --no-install llm-tapedeck merge %O %A %B %P';
/** The driver's name, which git prints in some messages. */
const MERGE_DRIVER_NAME = 'tapedeck: merge the recordings of both branches';
/**
 * The installed command in the project's node_modules when there is one, else npx: git runs the
 * textconv twice per changed tape, always from the top of the work tree, and npx spends most of
 * a second finding the package each time (a diff of a thousand re-recorded tapes took half an
 * hour). node_modules/.bin/llm-tapedeck is the command npx --no-install runs from there; a clone
 * without it (not installed yet, Yarn Plug'n'Play) goes through npx as before. git appends the
 * tape's path, as "$@" of the shell line.
 */
const TAPEDECK_COMMAND = 'tapedeck() { if [ -x node_modules/.bin/llm-tapedeck ]; then node_modules/.bin/llm-tapedeck "$@"; else npx --no-install llm-tapedeck "$@"; fi; }; tapedeck';
export const DEFAULT_TEXTCONV = `${TAPEDECK_COMMAND} export --review --textconv`;
/** The command the pre-commit hook runs. */
export const HOOK_COMMAND = 'npx --no-install llm-tapedeck scan --staged';
/** What an older init wrote in its place (npx resolved `tapedeck` to another package when ours was not installed). */
const OLD_HOOK_COMMAND = 'npx --no-install tapedeck scan --staged';
/** The hook's first line: a commit that stages no tape runs nothing (npx needs the package installed). */
const HOOK_NO_TAPE = "git diff --cached --name-only --diff-filter=ACMR -- '*.tape' | grep -q . || exit 0";
/** The comment line init's hook starts with, by which init knows a hook as its own. */
const HOOK_MARK = '# Written by tapedeck init:';

export const INIT_HELP = `Usage: tapedeck init [--textconv CMD] [--merge-driver CMD] [--no-hook]

Make git diff, git log -p and code review tools show tapes as their stable JSON export
(streams as their answer and one event per line): adds "${GIT_ATTRIBUTE}" to
.gitattributes (commit it) and sets diff.tapedeck.textconv and diff.tapedeck.binary=false
(so git diff --stat counts lines) in this clone's git config. Makes git merge tapes with
tapedeck merge: adds "${GIT_MERGE_ATTRIBUTE}" (and "${GIT_TEXT_ATTRIBUTE}", so core.autocrlf never
converts a tape's bytes) to .gitattributes and sets
merge.tapedeck.driver and merge.tapedeck.name (two branches that recorded into one tape keep
both their recordings; tapedeck merge --help). Also writes a pre-commit hook
that runs "${HOOK_COMMAND}" (refuses a commit whose tapes hold anything that
looks like a credential) when the clone has no pre-commit hook; when it has one, prints the
line to add to it. Adds to .gitignore what tapedeck keeps beside a tape while it works on it
(writer registrations, the lock, files not yet renamed into place), which a killed run leaves
behind. Each clone runs tapedeck init once; run it again at any time: nothing is added twice.

Options:
  --textconv CMD        The command git runs with a tape's path (default
                        "llm-tapedeck export --review --textconv", from
                        node_modules/.bin when installed there, else through
                        "npx --no-install"; export's --textconv shows a tape it cannot read as the
                        error's text, exit 0, so git diff and git log -p go on)
  --merge-driver CMD    The merge driver git runs (default
                        "${DEFAULT_MERGE_DRIVER}")
  --no-hook             Leave the pre-commit hook alone
  -h, --help            Show this help
`;

function git(args: string[], cwd: string): { ok: boolean; out: string; err: string } {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.error) {
    throw new TapedeckError('E_GIT', `Could not run git: ${r.error.message}.`, { hint: 'Install git, or add the two settings by hand (docs/tape-format.md, "Readable diffs").' });
  }
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

/**
 * Sets up readable tape diffs in the git repository around `cwd`. Returns what changed.
 *
 * @example
 * setupTapeDiffs(process.cwd()) // { attributes: 'added', textconv: 'set', merge: 'set', root: '/repo', ... }
 */
export function setupTapeDiffs(
  cwd: string,
  textconv = DEFAULT_TEXTCONV,
  mergeDriver = DEFAULT_MERGE_DRIVER,
): { root: string; attributes: 'added' | 'present'; attributeLines: string[]; textconv: 'set' | 'present'; merge: 'set' | 'present'; ignored: 'added' | 'present' } {
  const top = git(['rev-parse', '--show-toplevel'], cwd);
  if (!top.ok) throw new TapedeckError('E_GIT', `${cwd} is not inside a git repository.`, { hint: 'Run tapedeck init in your project (git init first).' });
  const root = top.out;
  const attributeLines = appendMissingLines(join(root, '.gitattributes'), [GIT_ATTRIBUTE, GIT_MERGE_ATTRIBUTE, GIT_TEXT_ATTRIBUTE], 'Tapes diff as their JSON export and merge both branches\' recordings (npx llm-tapedeck init sets the drivers up); their line endings are never converted');
  const ignored = appendMissingLines(join(root, '.gitignore'), WORKING_FILES, "tapedeck's working files beside a tape (left behind only when it is killed)").length ? 'added' : 'present';
  const set = setConfig(root, [
    ['diff.tapedeck.textconv', textconv],
    ['diff.tapedeck.binary', 'false'],
  ]);
  const merge = setConfig(root, [
    ['merge.tapedeck.name', MERGE_DRIVER_NAME],
    ['merge.tapedeck.driver', mergeDriver],
  ]);
  return { root, attributes: attributeLines.length ? 'added' : 'present', attributeLines, textconv: set, merge, ignored };
}

/** Sets these git config values in the clone, leaving the ones already set alone: whether any changed. */
function setConfig(root: string, values: readonly (readonly [string, string])[]): 'set' | 'present' {
  let set: 'set' | 'present' = 'present';
  for (const [name, value] of values) {
    const current = git(['config', '--local', '--get', name], root);
    if (current.ok && current.out === value) continue;
    const w = git(['config', '--local', name, value], root);
    if (!w.ok) throw new TapedeckError('E_GIT', `git config failed: ${w.err}`, { hint: `Run it yourself: git config ${name} "${value}"` });
    set = 'set';
  }
  return set;
}

/**
 * What tapedeck keeps beside a tape while it works on it, and leaves behind when it is killed:
 * writer registrations (`<tape>.writers/`), the tape's lock (`<tape>.lock`), and a rewrite's or
 * import's or pull's file before it is renamed into place (`.<tape>.<pid>.<hex>[.<what>].tmp`;
 * older versions' pulls `.<tape>.<pid>.<hex>.pull`), and rerecord's draft while it is written
 * (`<out>.partial`, with its writers). None is a recording: `git add -A` must not commit them.
 */
const WORKING_FILES = ['*.tape.writers/', '*.tape.lock', '.*.tape.*.tmp', '.*.tape.*.pull', '*.tape.partial', '*.tape.partial.writers/'];

/**
 * Appends to a git file (.gitattributes, .gitignore) the `lines` it does not hold yet, under a
 * `comment`, so running init again adds nothing twice and leaves the user's lines as they are.
 * Returns the lines added.
 */
function appendMissingLines(file: string, lines: readonly string[], comment: string): string[] {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const have = new Set(text.split(/\r?\n/).map((l) => l.trim().replace(/\s+/g, ' ')));
  const missing = lines.filter((l) => !have.has(l));
  if (missing.length === 0) return [];
  appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}# ${comment}\n${missing.join('\n')}\n`);
  return missing;
}

/**
 * Writes a pre-commit hook running `tapedeck scan --staged` when the clone has none; never
 * touches another hook. Returns what it did: `written` (with the hook's path), `updated` (the
 * hook an older init wrote, whose npx command could run another package, brought up to date),
 * `present` (an existing hook already runs tapedeck scan), or `exists` (another hook: add the line).
 *
 * @example
 * setupScanHook(process.cwd()) // { state: 'written', path: '/repo/.git/hooks/pre-commit' }
 */
export function setupScanHook(root: string, command = HOOK_COMMAND): { state: 'written' | 'updated' | 'present' | 'exists'; path: string } {
  // --git-path follows core.hooksPath and linked worktrees.
  const rel = git(['rev-parse', '--git-path', 'hooks/pre-commit'], root);
  if (!rel.ok) throw new TapedeckError('E_GIT', `git rev-parse failed: ${rel.err}`, { hint: `Add "${command}" to your pre-commit hook yourself.` });
  const path = isAbsolute(rel.out) ? rel.out : join(root, rel.out);
  const text = `#!/bin/sh\n${HOOK_MARK} refuse a commit whose staged tapes hold anything that looks like a\n# credential (tapedeck scan --help). Skip once with git commit --no-verify.\n${HOOK_NO_TAPE}\nexec ${command}\n`;
  if (existsSync(path)) {
    const hook = readFileSync(path, 'utf8');
    // Init's own hook from an older version, with the command npx could resolve elsewhere: replaced.
    if (hook.includes(HOOK_MARK) && hook.includes(`exec ${OLD_HOOK_COMMAND}\n`)) {
      writeFileSync(path, text);
      return { state: 'updated', path };
    }
    return { state: hook.includes('tapedeck scan') ? 'present' : 'exists', path };
  }
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text, { flag: 'wx' });
  chmodSync(path, 0o755);
  return { state: 'written', path };
}

const INIT_OPTIONS = { textconv: { type: 'string' }, 'merge-driver': { type: 'string' }, 'no-hook': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

/**
 * Runs `tapedeck init`; returns the exit code.
 *
 * @example
 * process.exitCode = await initCommand([])
 */
export async function initCommand(args: string[]): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args, options: INIT_OPTIONS, strict: true, allowPositionals: false });
    } catch (e) {
      const { message, didYouMean } = argsError(e, INIT_OPTIONS);
      throw new TapedeckError('E_USAGE', message, { hint: `${didYouMean}tapedeck init --help lists the options.` });
    }
    if (parsed.values.help) {
      process.stdout.write(INIT_HELP);
      return 0;
    }
    const r = setupTapeDiffs(process.cwd(), parsed.values.textconv ?? DEFAULT_TEXTCONV, parsed.values['merge-driver'] ?? DEFAULT_MERGE_DRIVER);
    process.stdout.write(
      `${r.attributes === 'added' ? `added ${r.attributeLines.map((l) => `"${l}"`).join(' and ')} to` : 'already in'} ${join(r.root, '.gitattributes')}${r.attributes === 'added' ? ' (commit it)' : ''}\n` +
        `${r.textconv === 'set' ? 'set' : 'already set:'} diff.tapedeck.textconv and diff.tapedeck.binary in this clone's git config\n` +
        `${r.merge === 'set' ? 'set' : 'already set:'} merge.tapedeck.driver and merge.tapedeck.name in this clone's git config\n` +
        (r.ignored === 'added' ? `added tapedeck's working files (${WORKING_FILES.join(', ')}) to ${join(r.root, '.gitignore')} (commit it)\n` : `tapedeck's working files already in ${join(r.root, '.gitignore')}\n`) +
        'git diff now shows tapes as JSON, and git merge keeps both branches\' recordings of a tape.\n',
    );
    if (!parsed.values['no-hook']) {
      const h = setupScanHook(r.root);
      if (h.state === 'written') process.stdout.write(`wrote ${h.path}: commits run "${HOOK_COMMAND}"\n`);
      else if (h.state === 'updated') process.stdout.write(`updated ${h.path}: commits run "${HOOK_COMMAND}" (the package's name, which npx cannot take for another package)\n`);
      else if (h.state === 'present') process.stdout.write(`${h.path} already runs tapedeck scan\n`);
      else process.stdout.write(`${h.path} exists and was left as it is; to check tapes for credentials before each commit, add this line to it:\n  ${HOOK_COMMAND}\n`);
    }
    return 0;
  } catch (e) {
    return reportCliError(e);
  }
}
