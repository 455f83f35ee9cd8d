/**
 * `tapedeck init`: readable tape diffs in review. Tapes are binary (msgpack frames); git shows
 * them as their stable JSON export (`tapedeck export`, sorted keys, one field per line) once a
 * diff driver says so. Two settings, both written here, idempotently:
 *
 *   .gitattributes:  *.tape diff=tapedeck
 *   git config:      diff.tapedeck.textconv "npx --no-install tapedeck export"
 *
 * The first is committed (everyone's diffs use the driver); the second is per clone (git does
 * not let a repository run commands on its own), so each developer runs `npx tapedeck init`.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TapedeckError } from '../errors.ts';
import { reportCliError } from '../cli-errors.ts';

/** The attribute line and the default textconv command. */
export const GIT_ATTRIBUTE = '*.tape diff=tapedeck';
export const DEFAULT_TEXTCONV = 'npx --no-install tapedeck export';

export const INIT_HELP = `Usage: tapedeck init [--textconv CMD]

Make git diff, git log -p and code review tools show tapes as their stable JSON export:
adds "${GIT_ATTRIBUTE}" to .gitattributes (commit it) and sets
diff.tapedeck.textconv in this clone's git config (each clone runs tapedeck init once).
Run it again at any time: nothing is added twice.

Options:
  --textconv CMD        The command git runs with a tape's path (default
                        "${DEFAULT_TEXTCONV}")
  -h, --help            Show this help
`;

function git(args: string[], cwd: string): { ok: boolean; out: string; err: string } {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.error) {
    throw new TapedeckError('E_ARG', `Could not run git: ${r.error.message}.`, { hint: 'Install git, or add the two settings by hand (docs/tape-format.md, "Readable diffs").' });
  }
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

/**
 * Sets up readable tape diffs in the git repository around `cwd`. Returns what changed.
 *
 * @example
 * setupTapeDiffs(process.cwd()) // { attributes: 'added', textconv: 'set', root: '/repo' }
 */
export function setupTapeDiffs(cwd: string, textconv = DEFAULT_TEXTCONV): { root: string; attributes: 'added' | 'present'; textconv: 'set' | 'present' } {
  const top = git(['rev-parse', '--show-toplevel'], cwd);
  if (!top.ok) throw new TapedeckError('E_ARG', `${cwd} is not inside a git repository.`, { hint: 'Run tapedeck init in your project (git init first).' });
  const root = top.out;
  const file = join(root, '.gitattributes');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  let attributes: 'added' | 'present' = 'present';
  if (!text.split(/\r?\n/).some((l) => l.trim().replace(/\s+/g, ' ') === GIT_ATTRIBUTE)) {
    appendFileSync(file, `${text === '' || text.endsWith('\n') ? '' : '\n'}# Tapes diff as their JSON export (npx tapedeck init sets the driver up)\n${GIT_ATTRIBUTE}\n`);
    attributes = 'added';
  }
  const current = git(['config', '--local', '--get', 'diff.tapedeck.textconv'], root);
  let set: 'set' | 'present' = 'present';
  if (!current.ok || current.out !== textconv) {
    const w = git(['config', '--local', 'diff.tapedeck.textconv', textconv], root);
    if (!w.ok) throw new TapedeckError('E_ARG', `git config failed: ${w.err}`, { hint: `Run it yourself: git config diff.tapedeck.textconv "${textconv}"` });
    set = 'set';
  }
  return { root, attributes, textconv: set };
}

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
      parsed = parseArgs({ args, options: { textconv: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false });
    } catch (e) {
      throw new TapedeckError('E_ARG', (e as Error).message, { hint: 'tapedeck init --help lists the options.' });
    }
    if (parsed.values.help) {
      process.stdout.write(INIT_HELP);
      return 0;
    }
    const r = setupTapeDiffs(process.cwd(), parsed.values.textconv ?? DEFAULT_TEXTCONV);
    process.stdout.write(
      `${r.attributes === 'added' ? `added "${GIT_ATTRIBUTE}" to` : 'already in'} ${join(r.root, '.gitattributes')}${r.attributes === 'added' ? ' (commit it)' : ''}\n` +
        `${r.textconv === 'set' ? 'set' : 'already set:'} diff.tapedeck.textconv in this clone's git config\n` +
        'git diff now shows tapes as JSON.\n',
    );
    return 0;
  } catch (e) {
    return reportCliError(e);
  }
}
