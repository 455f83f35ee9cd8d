// `tapedeck merge <base> <ours> <theirs> [<path>]`: git's merge driver for tapes (tapedeck init
// registers it). Exit 0 tells git the merge is clean; 1 leaves the conflict, with ours as the
// driver left it: untouched when the tapes cannot be merged, the merge of the intact records
// when an input is damaged (the user checks it before git add).
import { splitAtDashes } from '../cli-args.ts';
import { EXIT, reportCliError, usageError } from '../cli-errors.ts';
import { TapedeckError } from '../errors.ts';
import { mergeTapeFiles, type MergeSummary } from '../store/tape-merge.ts';
import { writeOut } from './stdout.ts';

const EXAMPLE = 'tapedeck merge base.tape ours.tape theirs.tape (git runs it: tapedeck init registers the driver)';

/**
 * Runs `tapedeck merge` with its arguments (after the command word); returns the exit code.
 *
 * @example
 * process.exitCode = await mergeCommand(['.merge_file_O', 'chat.tape', '.merge_file_B', 'chat.tape'])
 */
export async function mergeCommand(args: string[]): Promise<number> {
  try {
    // Past `--` every word is a path, one that starts with a dash too.
    const { before, after } = splitAtDashes(args);
    const options = before.filter((a) => a.startsWith('-') && a !== '-');
    if (options.length > 0) throw usageError(`merge takes no option; ${JSON.stringify(options[0])} is not one.`, EXAMPLE);
    args = [...before, ...after];
    if (args.length < 3 || args.length > 4) {
      throw usageError(`merge takes the base, ours and theirs tapes (git's %O %A %B) and optionally the tape's name (%P); got ${args.length} argument${args.length === 1 ? '' : 's'}.`, EXAMPLE);
    }
    const [base, ours, theirs, name = ours] = args as [string, string, string, string?];
    const s = await mergeTapeFiles(base, ours, theirs).catch((e: unknown) => {
      throw named(e, name!, ours);
    });
    await writeOut(`${mergeLine(name!, s)}\n`);
    // Git hands the driver temporary copies (.merge_file_…, gone when it ends): an input is
    // named by its side and the tape's name (%P), its copy's name left out of the message too.
    const gitCopies = name !== ours;
    for (const d of s.damage) {
      const which = gitCopies ? `${d.label} (${name} as ${d.label === 'base' ? 'the common ancestor' : d.label === 'ours' ? 'this branch' : 'the merged branch'} has it)` : `${d.label} (${d.file})`;
      const message = gitCopies ? d.warning.message.split(`${d.file}: `).join('') : d.warning.message;
      await writeOut(`${which}: ${d.warning.code} at byte ${d.warning.offset}: ${message}\n`);
    }
    if (s.damage.length === 0) return EXIT.ok;
    await writeOut(
      `${s.damage.length} problem(s) in the inputs: the intact records were merged into ${name}, the damaged bytes left out; git keeps the conflict: check the tape (tapedeck verify ${name}), then git add it.\n`,
    );
    return EXIT.failed;
  } catch (e) {
    return reportCliError(e);
  }
}

/** The one line a merge prints: what came from where. */
function mergeLine(name: string, s: MergeSummary): string {
  const n = (k: number, what: string) => `${k} ${what}`;
  return `tapedeck merge ${name}: ${n(s.base, 'from base')}, ${n(s.ours, 'added by ours')}, ${n(s.theirs, 'added by theirs')}, ${n(s.duplicates, `duplicate${s.duplicates === 1 ? '' : 's'} (added by both, kept once)`)}, ${n(s.removed, 'removed by one side')}${s.recovered > 0 ? ` (${n(s.recovered, `base record${s.recovered === 1 ? '' : 's'}`)} damaged on one side kept from base)` : ''}`;
}

/**
 * A refusal named after the tape (git's %P) when git gave temporary files: the message otherwise
 * names only `.merge_file_…` paths, and a merge of many tapes would not say which one is left.
 */
function named(e: unknown, name: string, ours: string): unknown {
  if (!(e instanceof TapedeckError) || e.code !== 'E_TAPE_MERGE' || name === ours) return e;
  const hint = e.hint;
  const message = hint && e.message.endsWith(hint) ? e.message.slice(0, -hint.length).trim() : e.message;
  return new TapedeckError(e.code, `${name}: ${message}`, e.details);
}
