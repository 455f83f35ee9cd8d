/**
 * `tapedeck scan <tapes...> [--staged]`: secret-scan.ts over tapes on disk, or over the tapes
 * staged for commit (the pre-commit hook `tapedeck init` writes runs `tapedeck scan --staged`).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { EXIT, reportCliError } from '../cli-errors.ts';
import { TapedeckError } from '../errors.ts';
import { parseTape } from './tape-codec.ts';
import { secretsInValue, type SecretFinding } from './secret-scan.ts';
import { decodedRecords, withTapeStream } from './tape-stream.ts';

/** The tapes a path names: the file itself, or every `*.tape` below a folder, sorted. */
function tapesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  const out: string[] = [];
  for (const e of readdirSync(path, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const p = join(path, e.name);
    if (e.isDirectory()) out.push(...tapesUnder(p));
    else if (e.name.endsWith('.tape')) out.push(p);
  }
  return out;
}

function git(args: string[]): Buffer {
  const r = spawnSync('git', args, { maxBuffer: 1 << 30 });
  if (r.error || r.status !== 0) {
    throw new TapedeckError('E_ARG', `git ${args.join(' ')} failed: ${r.error?.message ?? String(r.stderr).trim()}`, { hint: 'Run tapedeck scan --staged inside a git repository, or name the tapes: tapedeck scan tapes/' });
  }
  return r.stdout;
}

/** The staged tapes: their paths and their staged bytes (what the commit would hold). */
function stagedTapes(): { file: string; bytes: Buffer }[] {
  const names = git(['diff', '--cached', '--name-only', '-z', '--diff-filter=ACMR', '--', '*.tape']).toString('utf8').split('\0').filter(Boolean);
  return names.map((file) => ({ file, bytes: git(['cat-file', 'blob', `:${file}`]) }));
}

function line(file: string, f: SecretFinding): string {
  return `${file}: record ${f.record} (byte ${f.offset}) ${f.path}: ${f.kind} ${f.excerpt}\n`;
}

/**
 * Runs `tapedeck scan`; returns the exit code (0 clean, 1 findings or an unreadable tape).
 *
 * @example
 * process.exitCode = await scanCommand(['tapes/'])
 */
export async function scanCommand(args: string[]): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args, options: { staged: { type: 'boolean' } }, strict: true, allowPositionals: true });
    } catch (e) {
      throw new TapedeckError('E_USAGE', (e as Error).message, { hint: 'tapedeck scan --help lists the options.' });
    }
    const staged = parsed.values.staged === true;
    if (!staged && parsed.positionals.length === 0) throw new TapedeckError('E_USAGE', 'scan needs tapes or folders to look through (or --staged).', { hint: 'tapedeck scan tapes/' });
    let findings = 0;
    let records = 0;
    let tapes = 0;
    const files = new Set<string>();
    // One tape's records, in file order, each scanned as it comes (secretsInValue) and let go.
    const scan = async (file: string, recs: AsyncIterable<{ offset: number; value: unknown }> | Iterable<{ offset: number; value: unknown }>) => {
      tapes++;
      let i = 0;
      for await (const r of recs) {
        for (const f of secretsInValue(r.value)) {
          findings++;
          files.add(file);
          process.stdout.write(line(file, { record: i, offset: r.offset, ...f }));
        }
        i++;
      }
      records += i;
    };
    if (staged) for (const t of stagedTapes()) await scan(t.file, parseTape(t.bytes, t.file).records);
    // Tapes on disk are read a window at a time.
    for (const p of parsed.positionals) for (const file of tapesUnder(p)) await withTapeStream(file, (t) => scan(file, decodedRecords(t, file)));
    if (findings === 0) {
      process.stdout.write(`No credentials found in ${tapes} tape${tapes === 1 ? '' : 's'} (${records} record${records === 1 ? '' : 's'}).\n`);
      return EXIT.ok;
    }
    process.stderr.write(
      `tapedeck scan: ${findings} possible credential${findings === 1 ? '' : 's'} in ${files.size} tape${files.size === 1 ? '' : 's'}.\n` +
        'hint: revoke any real key, then re-record the tape (today\'s recorder redacts these), or fix the record: tapedeck export <tape> > t.json, edit, tapedeck import t.json <tape> --force.\n',
    );
    return EXIT.failed;
  } catch (e) {
    return reportCliError(e);
  }
}
