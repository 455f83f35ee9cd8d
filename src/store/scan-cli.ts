/**
 * `tapedeck scan <tapes...> [--staged]`: secret-scan.ts over tapes on disk, or over the tapes
 * staged for commit (the pre-commit hook `tapedeck init` writes runs `tapedeck scan --staged`).
 * Damage does not hide a key: a damaged region's raw bytes are searched too, the damage is
 * listed with its byte offsets, and a tape with damage is never reported clean.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { EXIT, reportCliError } from '../cli-errors.ts';
import { TapedeckError } from '../errors.ts';
import { argsError } from '../cli-args.ts';
import { damageInOrder } from './damage-order.ts';
import { catFileBatch } from './git-blobs.ts';
import { parseTape, warningText, type TapeWarning } from './tape-codec.ts';
import { secretsInBytes, secretsInValue, type SecretFinding } from './secret-scan.ts';
import { decodedRecords, withTapeStream } from './tape-stream.ts';
import { tapesUnder } from './tape-files.ts';
import { byProcess, interruptedRecordRuns, interruptedRunMessage } from './tape-writers.ts';

function git(args: string[]): Buffer {
  const r = spawnSync('git', args, { maxBuffer: 1 << 30 });
  if (r.error || r.status !== 0) {
    throw new TapedeckError('E_GIT', `git ${args.join(' ')} failed: ${r.error?.message ?? String(r.stderr).trim()}`, { hint: 'Run tapedeck scan --staged inside a git repository, or name the tapes: tapedeck scan tapes/' });
  }
  return r.stdout;
}

/** The staged tapes: their paths and their staged bytes (what the commit would hold). */
function stagedTapes(): { file: string; bytes: Buffer }[] {
  // Outside a repository git's own answer is its whole usage text: said in one line instead.
  const inside = spawnSync('git', ['rev-parse', '--is-inside-work-tree']);
  if (inside.error || inside.status !== 0) {
    throw new TapedeckError('E_GIT', `${process.cwd()} is not in a git repository, so there is nothing staged to scan${inside.error ? ` (git: ${inside.error.message})` : ''}.`, { hint: 'Run tapedeck scan --staged inside your repository, or name the tapes: tapedeck scan tapes/' });
  }
  const names = git(['diff', '--cached', '--name-only', '-z', '--diff-filter=ACMR', '--', '*.tape']).toString('utf8').split('\0').filter(Boolean);
  // One git process for all of them: one per tape made a commit of a thousand tapes take half a minute.
  const bytes = catFileBatch(process.cwd(), names.map((file) => `:${file}`));
  return names.map((file, i) => ({ file, bytes: bytes[i]! }));
}

function line(file: string, f: SecretFinding): string {
  return `${file}: record ${f.record} (byte ${f.offset}) ${f.path}: ${f.kind} ${f.excerpt}${f.kept ? ' (a NAME=value or name: value line: kept by the recorder)' : ''}\n`;
}

/**
 * A tape as scan reads it: its decoded records in file order, the damage reading found (added to
 * as the records are read, each warning before the records after it), and its bytes as read.
 */
interface ScanSource {
  records: AsyncIterable<{ offset: number; value: unknown }> | Iterable<{ offset: number; value: unknown }>;
  warnings: readonly TapeWarning[];
  size(): number;
  bytes(start: number, end: number): Promise<Uint8Array>;
}

/** What scanning one tape found. */
interface TapeScanResult {
  findings: number;
  /** Of the findings, those today's recorder would store again as they are (SecretFinding.kept). */
  kept: number;
  /** Records read and walked (damaged ones are not among them). */
  records: number;
  /** Damaged regions: their bytes were searched for key formats only. */
  damage: number;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * Scans one tape: every record as it comes (secretsInValue), and every damaged region's raw bytes
 * (secretsInBytes) where it lies between them, each reported as found. Records are numbered by
 * their place among all frames, the ones damage took included, so a record after damage keeps
 * the number it had (and that verify and prune speak of).
 */
async function scanOne(file: string, src: ScanSource): Promise<TapeScanResult> {
  const result: TapeScanResult = { findings: 0, kept: 0, records: 0, damage: 0 };
  /** The number the next record gets. */
  let n = 0;
  const regionsBefore = damageInOrder(src.warnings, (s, e) => src.bytes(s, e));
  const damageBefore = async (limit: number): Promise<void> => {
    for (const { warning: w, header, start, end, bytes, frames: starts } of await regionsBefore(limit)) {
      const first = n;
      n += starts.length;
      const records = starts.length === 0 ? '' : starts.length === 1 ? `record ${first}` : `records ${first}-${first + starts.length - 1}`;
      const what = header ? (records ? `the header and ${records}` : 'the header') : records || 'no record';
      const region = `damaged bytes ${start}..${end - 1}`;
      process.stdout.write(`${file}: ${region} (${what}), searched for key formats only: ${w.code} ${warningText(w, file)}\n`);
      result.damage++;
      for (const f of secretsInBytes(bytes)) {
        // The record whose frame the match lies in: the last start at or before it.
        let i = starts.length - 1;
        while (i >= 0 && starts[i]! > f.offset) i--;
        result.findings++;
        process.stdout.write(`${file}: ${i < 0 ? 'the header' : `record ${first + i}`} (byte ${start + f.offset}) ${region}: ${f.kind} ${f.excerpt}\n`);
      }
    }
  };
  for await (const r of src.records) {
    await damageBefore(r.offset);
    for (const f of secretsInValue(r.value)) {
      result.findings++;
      if (f.kept) result.kept++;
      process.stdout.write(line(file, { record: n, offset: r.offset, ...f }));
    }
    n++;
    result.records++;
  }
  await damageBefore(src.size());
  return result;
}

const SCAN_OPTIONS = { staged: { type: 'boolean' } } as const;

/**
 * Runs `tapedeck scan`; returns the exit code (0 clean, 1 findings, damage scan could not fully
 * check, or an unreadable tape).
 *
 * @example
 * process.exitCode = await scanCommand(['tapes/'])
 */
export async function scanCommand(args: string[]): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args, options: SCAN_OPTIONS, strict: true, allowPositionals: true });
    } catch (e) {
      const { message, didYouMean } = argsError(e, SCAN_OPTIONS);
      throw new TapedeckError('E_USAGE', message, { hint: `${didYouMean}tapedeck scan --help lists the options.` });
    }
    const staged = parsed.values.staged === true;
    if (!staged && parsed.positionals.length === 0) throw new TapedeckError('E_USAGE', 'scan needs tapes or folders to look through (or --staged).', { hint: 'tapedeck scan tapes/' });
    let findings = 0;
    let kept = 0;
    let records = 0;
    let tapes = 0;
    const files = new Set<string>();
    const damaged: string[] = [];
    // Files not readable as tapes at all (line endings converted, no tape, a newer format): prune
    // refuses them, so their hint is another one.
    const unreadable: string[] = [];
    // Record runs that did not close on a tape: its re-recordings sit after the recordings they
    // were to replace, which replay serves first. The note lives beside the tape (<tape>.writers/,
    // not committed), so a clone never sees it: the commit is where it can still be said.
    const interrupted: string[] = [];
    const checkRuns = async (file: string, path: string) => {
      for (const ws of byProcess(await interruptedRecordRuns(path))) interrupted.push(interruptedRunMessage(file, ws));
    };
    const scan = async (file: string, src: ScanSource) => {
      tapes++;
      const r = await scanOne(file, src);
      findings += r.findings;
      kept += r.kept;
      records += r.records;
      if (r.findings > 0) files.add(file);
      if (r.damage > 0) damaged.push(file);
    };
    if (staged) {
      // Outside a repository stagedTapes() says so, in one line, before git is asked anything else.
      const tapes = stagedTapes();
      // git names staged files from the top of the work tree, wherever scan runs.
      const top = git(['rev-parse', '--show-toplevel']).toString('utf8').trim();
      for (const t of tapes) {
        const p = parseTape(t.bytes, t.file);
        await scan(t.file, { records: p.records, warnings: p.warnings, size: () => t.bytes.length, bytes: async (s, e) => t.bytes.subarray(s, e) });
        await checkRuns(t.file, join(top, t.file));
      }
    }
    // Tapes on disk are read a window at a time. One that cannot be read as a tape at all (its
    // header unreadable) does not end the scan of the others: its bytes are searched for key
    // formats, and it counts as damage scan could not fully check.
    for (const p of parsed.positionals) {
      for (const file of tapesUnder(p)) {
        try {
          await withTapeStream(file, (t) => scan(file, { records: decodedRecords(t, file), warnings: t.warnings, size: () => t.size, bytes: (s, e) => t.bytes(s, e) }));
          await checkRuns(file, file);
        } catch (e) {
          if (!(e instanceof TapedeckError) || e.code === 'E_OUTPUT') throw e;
          tapes++;
          unreadable.push(file);
          process.stdout.write(`${file}: unreadable as a tape, searched for key formats only: ${e.code} ${e.message.split('\n')[0]}\n`);
          let bytes: Uint8Array = new Uint8Array(0);
          try {
            bytes = readFileSync(file);
          } catch {
            // Not even readable as bytes (permissions, a folder): said above, nothing to search.
          }
          for (const f of secretsInBytes(bytes)) {
            findings++;
            files.add(file);
            process.stdout.write(`${file}: (byte ${f.offset}) unreadable tape: ${f.kind} ${f.excerpt}\n`);
          }
        }
      }
    }
    if (interrupted.length > 0) {
      for (const m of interrupted) process.stderr.write(`tapedeck scan: ${m}\n`);
      process.stderr.write(`hint: record again and let the run close before committing${staged ? ', then git add the tape again' : ''}; until then the tape replays the old answers of the requests that run re-recorded.\n`);
    }
    if (findings === 0 && damaged.length === 0 && unreadable.length === 0 && interrupted.length === 0) {
      process.stdout.write(`No credentials found in ${plural(tapes, 'tape')} (${plural(records, 'record')}).\n`);
      return EXIT.ok;
    }
    if (findings > 0) {
      process.stderr.write(
        `tapedeck scan: ${findings === 1 ? '1 possible credential' : `${findings} possible credentials`} in ${plural(files.size, 'tape')}.\n` +
          (kept === findings
            ? // Re-recording would store these again: only an edit of the record (or not sending the value) removes them.
              'hint: revoke any real key, then fix the record (today\'s recorder keeps a NAME=value or YAML name: value line of a text body or prompt as it is; it masks them only in uploaded files): tapedeck export <tape> > t.json, edit, tapedeck import t.json <tape> --force.\n'
            : `hint: revoke any real key, then re-record the tape (today's recorder redacts these${kept > 0 ? ', except the lines marked "kept by the recorder": fix those records' : ''}), or fix the record: tapedeck export <tape> > t.json, edit, tapedeck import t.json <tape> --force.\n`),
      );
    }
    if (damaged.length > 0) {
      // A tape scan could not read whole is not called clean: what the damage held is unknown.
      const tape = damaged.length === 1 ? damaged[0]! : '<tape>';
      process.stderr.write(
        `tapedeck scan: ${plural(damaged.length, 'tape has', 'tapes have')} damage scan could not fully check (listed above): the damaged bytes were searched for key formats only, not read as records.\n` +
          `hint: check what the damage held (tapedeck verify ${tape}), then drop it with tapedeck prune ${tape}${staged ? ` and git add ${tape} again` : ''}, or restore the tape from version control.\n`,
      );
    }
    if (unreadable.length > 0) {
      // Not a tape's damage: prune refuses such a file (it leaves it unchanged), so it is not offered.
      process.stderr.write(
        `tapedeck scan: ${plural(unreadable.length, 'file', 'files')} could not be read as ${unreadable.length === 1 ? 'a tape' : 'tapes'} (listed above, with why): ${unreadable.length === 1 ? 'its' : 'their'} bytes were searched for key formats only.\n` +
          `hint: do what the error above says; for a tape whose line endings were converted, tapedeck verify ${unreadable.length === 1 ? unreadable[0]! : '<tape>'} says how to undo it (the committed copy may be converted too); for one that was overwritten, restore it from version control (git checkout -- ${unreadable.length === 1 ? unreadable[0]! : '<tape>'}); a file that is no tape does not belong among the tapes scanned.\n`,
      );
    }
    return EXIT.failed;
  } catch (e) {
    return reportCliError(e);
  }
}
