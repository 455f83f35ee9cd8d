// The drift lines of a test run's summary: how the recordings a run wrote differ from the tapes
// committed in git, one line per class, and the `tapedeck diff` command that shows the detail.

import { dirname, relative, sep } from 'node:path';
import { TapedeckError } from '../errors.ts';
import { DRIFT_CLASSES } from './classify.ts';
import { loadGitTapes } from './load.ts';
import type { TapeSide } from './pair.ts';
import { driftReport, type DriftReport } from './report.ts';
import { uncomparedPhrase } from './uncompared.ts';

/** What the written tapes changed against git, ready to print. */
export interface CommittedDrift {
  report: DriftReport;
  /** The tapes compared (paths relative to the root). */
  tapes: string[];
  /** Tapes outside a git work tree, left out. */
  untracked: string[];
  command: string;
  /**
   * Of the pairs, those whose committed recording is still on the tape, as committed (the run
   * recorded a changed request beside it, and left it): `tapedeck diff` of the whole tapes
   * pairs that old recording with itself and calls the new one added until a prune drops it.
   */
  besideOld: number;
  /** Committed recordings the run left on the tapes as they were (not compared: the run did not write them). */
  left: number;
}

/**
 * What tells a record on one side from the same record on the other: a record the run left as
 * it was is the same on both; a recording made again has its own time (and trace). Undefined
 * for a record without a recording time (not told apart: compared as written).
 */
function identity(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (typeof r.recordedAt !== 'string') return undefined;
  return JSON.stringify([r.kind, r.key, r.recordedAt, r.trace, r.repeat, r.test, r.run, r.session, r.seq]);
}

function commonDir(paths: readonly string[]): string {
  const parts = paths.map((p) => dirname(p).split(sep));
  const out: string[] = [];
  for (let i = 0; parts.every((p) => i < p.length && p[i] === parts[0]![i]); i++) out.push(parts[0]![i]!);
  return out.join(sep) || '.';
}

/**
 * Compares tapes (written by a test run) with their version committed at `rev` (default HEAD).
 * Undefined when none of them is in a git work tree.
 *
 * @example
 * const d = await driftAgainstCommitted(['test/__tapes__/chat.tape'], { root: process.cwd() })
 * if (d) console.log(formatCommittedDrift(d))
 */
export async function driftAgainstCommitted(tapes: readonly string[], opts: { root?: string; rev?: string } = {}): Promise<CommittedDrift | undefined> {
  const root = opts.root ?? process.cwd();
  const rev = opts.rev ?? 'HEAD';
  const before: TapeSide[] = [];
  const after: TapeSide[] = [];
  const compared: string[] = [];
  const untracked: string[] = [];
  /** Per tape, the identities of the records on it now (see identity). */
  const onTape = new Map<string, Set<string>>();
  let left = 0;
  const all = await loadGitTapes(tapes, rev);
  for (const tape of tapes) {
    const name = relative(root, tape) || tape;
    try {
      const loaded = all.get(tape)!;
      if (loaded instanceof TapedeckError) throw loaded;
      before.push(...loaded.before.tapes.map((t) => ({ ...t, name })));
      // The new side is what the run wrote: the committed records it left as they were are no
      // recordings of this run (counted as such, they read as "identical").
      const committed = new Set(loaded.before.tapes.flatMap((t) => t.records.map(identity).filter((id): id is string => id !== undefined)));
      const now = new Set<string>();
      for (const t of loaded.after.tapes) {
        const written = t.records.filter((v) => {
          const id = identity(v);
          if (id !== undefined) now.add(id);
          return id === undefined || !committed.has(id);
        });
        left += t.records.length - written.length;
        after.push({ ...t, records: written, name });
      }
      onTape.set(name, now);
      compared.push(name);
    } catch (e) {
      // Outside git, or a tape gone since the run: nothing committed to compare with.
      if (!(e instanceof TapedeckError)) throw e;
      untracked.push(name);
    }
  }
  if (compared.length === 0) return undefined;
  let report = driftReport(before, after, { old: rev, new: 'this run' });
  const target = compared.length === 1 ? compared[0]! : commonDir(compared);
  const command = `npx llm-tapedeck diff ${/\s/.test(target) ? JSON.stringify(target) : target}${rev === 'HEAD' ? '' : ` --git ${rev}`}`;
  /** Whether the committed recording of an entry is on its tape still, as committed. */
  const stays = (e: DriftReport['entries'][number]): boolean => {
    const old = e.old && before.find((t) => t.name === e.tape)?.records[e.old.index];
    const id = old === undefined ? undefined : identity(old);
    return id !== undefined && onTape.get(e.tape)?.has(id) === true;
  };
  // A committed recording the run left on the tape was not removed: not said so.
  const gone = report.entries.filter((e) => e.status !== 'removed' || !stays(e));
  if (gone.length !== report.entries.length) report = { ...report, entries: gone, summary: { ...report.summary, removed: gone.filter((e) => e.status === 'removed').length } };
  const besideOld = report.entries.filter((e) => e.status === 'paired' && stays(e)).length;
  return { report, tapes: compared, untracked, command, besideOld, left };
}

/**
 * The drift lines for a run summary: a heading, one line per class that occurred among the
 * recordings the run wrote, what to do first when it left the committed versions of changed
 * requests on the tapes (prune, with `pruneCommand`), and the command with the detail.
 *
 * @example
 * formatCommittedDrift(d)
 * // tapedeck: the recordings this run wrote, against git HEAD (2 tapes):
 * //   text        3  (the answers' text changed)
 * //   identical   4
 * //   detail: npx llm-tapedeck diff test/__tapes__
 */
export function formatCommittedDrift(d: CommittedDrift, opts: { pruneCommand?: string } = {}): string {
  const s = d.report.summary;
  const what: Record<string, string> = {
    status: 'an error now, or no longer',
    structure: 'members or types of the answer changed',
    'tool-calls': 'tool calls added, removed or with other arguments',
    finish: 'finish reason or refusal changed',
    text: "the answers' text changed",
    stream: 'streamed differently',
    benign: 'ids, timestamps, usage: noise only',
    identical: '',
  };
  // Pairs classed text for their token usage alone (the same words): said as such, not as text
  // that changed.
  const usageOnly = d.report.entries.filter((e) => e.primary === 'text' && !e.details.text && e.details.usage).length;
  if (usageOnly > 0) what.text = usageOnly === s.primary.text ? 'same text, token usage beyond the tolerance' : `${what.text} (${usageOnly}: same text, token usage beyond the tolerance)`;
  const lines = [`tapedeck: the recordings this run wrote, against git ${d.report.old} (${d.tapes.length} tape${d.tapes.length === 1 ? '' : 's'}):`];
  for (const c of DRIFT_CLASSES) if (s.primary[c] > 0) lines.push(`  ${c.padEnd(11)} ${String(s.primary[c]).padStart(4)}${what[c] ? `  ${what[c]}` : ''}`);
  if (s.added) lines.push(`  ${'added'.padEnd(11)} ${String(s.added).padStart(4)}  new requests, not in the committed tapes`);
  if (s.removed) lines.push(`  ${'removed'.padEnd(11)} ${String(s.removed).padStart(4)}  committed recordings this run did not make again`);
  const unseen = uncomparedPhrase(s.notCompared ?? []);
  if (unseen) lines.push(`  ${unseen}`);
  if (d.besideOld > 0) {
    // The whole tapes hold both versions until a prune: a diff of them pairs the old recording
    // with itself and calls the new one "added".
    lines.push(`  ${d.besideOld === 1 ? '1 of them is a changed version of a committed recording' : `${d.besideOld} of them are changed versions of committed recordings`} this run left on the tapes, unused: prune first${opts.pruneCommand ? ` (${opts.pruneCommand})` : ''}, then the command below compares them as here`);
  }
  if (d.untracked.length) lines.push(`  not in git: ${d.untracked.slice(0, 5).join(', ')}${d.untracked.length > 5 ? ', ...' : ''}`);
  lines.push(`  detail: ${d.command}`);
  return lines.join('\n');
}
