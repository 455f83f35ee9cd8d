// `tapedeck export`: a tape as JSON (its review form with --review, HAR with --har) on stdout.
//
// A damaged tape is exported as far as it reads, and the damage is said on stderr with exit 1.
// The output's "warnings" member alone is read by no one: tapedeck import ignores it, so
// export -> import turned a damaged tape into a clean-looking one, and CI saw exit 0.
//
// As git's textconv (`--textconv`, in the command tapedeck init configures) nothing is fatal:
// git dies on a textconv's nonzero exit ("fatal: unable to read files to diff") and `git log -p`
// stops there, hiding all older history. There a problem is written as the file's text (what is
// wrong, where, how to fix it) and the exit code is 0; damage is in the JSON's "warnings".
import { EXIT, formatCliError, usageError, warn } from '../cli-errors.ts';
import type { OutputSink } from '../store/chunked-write.ts';
import { writeTapeJSON } from '../store/export.ts';
import { UPGRADE_COMMAND } from '../store/record-version.ts';
import { warningText, type TapeWarning } from '../store/tape-codec.ts';
import { writeOut } from './stdout.ts';
import { tapeArg } from './tape-arg.ts';

/** What the export command takes from the command line. */
export interface ExportOptions {
  har: boolean;
  review: boolean;
  origin?: string;
  textconv: boolean;
}

/** The damaged regions listed one a line on stderr; the rest are counted (verify lists all). */
const LISTED = 10;

/**
 * Runs `tapedeck export` and returns its exit code: 0, or 1 when the tape is damaged (what it
 * could read is written all the same); 0 whatever happens with `textconv`.
 *
 * @example
 * process.exitCode = await exportCommand('recordings/app.tape', { har: false, review: true, textconv: false })
 */
export async function exportCommand(file: string | undefined, o: ExportOptions): Promise<number> {
  if (o.textconv) return asTextconv(file, o);
  const tape = tapeArg('export', file, 'tapedeck export recordings/app.tape > app.tape.json');
  const { skipped, newer, warnings } = await writeExport(tape, o, { utf8: writeOut });
  if (skipped) warn(`${skipped} record${skipped === 1 ? ' is not an HTTP exchange' : 's are not HTTP exchanges'} (ReplayCache values, MCP sessions) and ${skipped === 1 ? 'has' : 'have'} no HAR form; left out.`);
  // A newer tapedeck's HTTP exchanges, left out: a recording lost on the way through HAR unless
  // said, so said as verify says it (the upgrade) and failed, as damage is.
  if (newer.length > 0) process.stderr.write(newerText(tape, newer));
  if (warnings.length === 0) return newer.length > 0 ? EXIT.failed : EXIT.ok;
  process.stderr.write(damageText(tape, warnings, o.har ? "the HAR's log._warnings" : 'the "warnings" member'));
  // Damage is a problem found, as for verify, inspect and tree: scripts and CI see it.
  return EXIT.failed;
}

/** E_TAPE_VERSION for the newer tapedeck's HTTP exchanges a HAR export left out, for stderr. */
function newerText(tape: string, newer: readonly { record: number; offset: number; version: number }[]): string {
  const first = newer[0]!;
  const more = newer.length > 1 ? ` (and ${newer.length - 1} more after it)` : '';
  return `tapedeck: E_TAPE_VERSION ${tape}: record ${first.record} (the record at byte ${first.offset})${more} is an HTTP exchange of record version ${first.version}, written by a newer tapedeck; this tapedeck cannot read it, so the HAR leaves it out.\nhint: upgrade tapedeck to read it (${UPGRADE_COMMAND}), then export again.\n`;
}

/** The export written to `sink`: HAR or tapedeck's JSON; what it left out. */
async function writeExport(tape: string, o: ExportOptions, sink: OutputSink): Promise<{ skipped: number; newer: { record: number; offset: number; version: number }[]; warnings: TapeWarning[] }> {
  if (o.har) {
    const { writeTapeHar } = await import('../store/export-har.ts');
    // Written as it is made, like the JSON below; damage listed in the HAR's log._warnings.
    const { skipped, newer, warnings } = await writeTapeHar(tape, sink, o.origin === undefined ? {} : { origin: o.origin });
    return { skipped, newer: newer ?? [], warnings };
  }
  if (o.origin !== undefined) throw usageError('--origin goes with --har.', 'tapedeck export app.tape --har --origin https://api.openai.com');
  // Written as it is made (a large tape's JSON is never held whole), at the pace stdout takes
  // it; a write that fails (a full disk) stops it with E_OUTPUT.
  const { warnings } = await writeTapeJSON(tape, sink, { review: o.review });
  return { skipped: 0, newer: [], warnings };
}

/**
 * What a damaged tape's export left out, for stderr: the regions with their byte offsets, where
 * the output lists them, and the fix.
 *
 * @example
 * damageText('app.tape', [{ code: 'E_TAPE_CORRUPT', offset: 1398, message: '…' }], 'the "warnings" member')
 * // 'tapedeck: warning: app.tape is damaged: the export leaves out 1 damaged region (…):\n  E_TAPE_CORRUPT at byte 1398: …\nhint: tapedeck verify app.tape …\n'
 */
export function damageText(tape: string, warnings: readonly TapeWarning[], listedIn: string): string {
  const n = warnings.length;
  let out = `tapedeck: warning: ${tape} is damaged: the export leaves out what ${n === 1 ? 'its damaged region' : `its ${n} damaged regions`} held (listed in ${listedIn}, which tapedeck import does not bring back):\n`;
  for (const w of warnings.slice(0, LISTED)) out += `  ${w.code} at byte ${w.offset}: ${oneLine(warningText(w, tape))}\n`;
  if (n > LISTED) out += `  … and ${n - LISTED} more (tapedeck verify ${tape} lists them all)\n`;
  out += `hint: tapedeck verify ${tape} shows the damage; tapedeck prune ${tape} drops it and keeps every intact record, or restore the tape from version control.\n`;
  return out;
}

/** export as git's textconv: the export, or the problem as text; exit 0 either way. */
async function asTextconv(file: string | undefined, o: ExportOptions): Promise<number> {
  let wrote = false;
  const sink: OutputSink = {
    utf8: (bytes) => {
      wrote ||= bytes.length > 0;
      return writeOut(bytes);
    },
  };
  try {
    await writeExport(tapeArg('export', file, 'tapedeck export --review --textconv recordings/app.tape'), o, sink);
  } catch (e) {
    // git shows what the command prints as the file's content: the problem is said there. Its
    // E_CODE line names the file (git's temporary copy of the blob, under the file's own name).
    const text = `tapedeck export could not read this tape; git shows this text in its place.\n${formatCliError(e)}`;
    // A failed write of stdout (E_OUTPUT) has been reported and decides the exit code already.
    await writeOut(wrote ? `\n${text}` : text).catch(() => {});
  }
  return EXIT.ok;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
