// The drift report: every pair classified, in the documented JSON form (docs/drift.md, "JSON
// output"). Renderers (terminal, markdown, HTML) read only this object, so what a page shows and
// what a script reads are the same facts.

import { answerOf, type Answer } from './answer.ts';
import { sameBytes } from '../bytes.ts';
import { isHttpRecord } from '../store/records.ts';
import { originKey } from '../store/origins.ts';
import { classifyPair, DRIFT_CLASSES, type Classification, type ClassifyOptions, type DriftClass, type DriftDetails, type ToolCallChange } from './classify.ts';
import { pairRecordings, type Pairing, type Recorded, type TapeSide } from './pair.ts';
import { pairSessions, type RealtimePairing } from './realtime-diff.ts';
import { pairExchanges, type McpPairing, type McpRecorded } from './mcp-diff.ts';
import { newerByKey, uncomparedRecords, type Uncompared } from './uncompared.ts';
import { toleranceText, usageCounts } from './usage.ts';
import { unifyMaskBytes, withMaskedNote } from './masks.ts';

/** Version of the JSON report's layout; raised only when a field changes meaning or goes away. */
export const REPORT_VERSION = 1;

/** What `--fail-on` may name: a class, or recordings `added` / `removed`. */
export type FailOn = DriftClass | 'added' | 'removed';

/** Everything `--fail-on` accepts. */
export const FAIL_ON_NAMES: readonly FailOn[] = Object.freeze([...DRIFT_CLASSES, 'added', 'removed'] as FailOn[]);

/**
 * The classes that fail `tapedeck diff` unless `--fail-on` says otherwise: every change of an
 * answer; recordings added or removed (a new or deleted test) do not fail by default.
 */
export const DEFAULT_FAIL_ON: readonly FailOn[] = Object.freeze(DRIFT_CLASSES.filter((c) => c !== 'identical' && c !== 'benign'));

/** One side of an entry. */
export interface EntrySide {
  /** Position of the record in its tape. */
  index: number;
  /** The request key (64 hex) the recording is found under. */
  key: string;
  status: number;
  streamed: boolean;
  /** The model the request asked for, when it names one. */
  model?: string;
  /** The host the recording was made for (`scheme://host[:port]`), when it names one. */
  origin?: string;
}

/** One recording compared: a pair, or an added or removed recording. */
export interface DriftEntry {
  tape: string;
  route: string;
  /** `paired`: both sides (identical ones included); `added` / `removed`: one side only. */
  status: 'paired' | 'added' | 'removed';
  old?: EntrySide;
  new?: EntrySide;
  /** A pair whose request changed: what changed (empty when the request key is the same). */
  requestChange: string[];
  /** `added` / `removed` of a request both sides have recordings of: how many each has. */
  repeats?: { old: number; new: number };
  /**
   * The new recording was kept from an earlier run by a later record run that did not make its
   * request again (it answers no request that run made): `added` when a changed request of that
   * run took its old recording, else paired with it.
   */
  kept?: true;
  /** The answer's shape (of the new side when both exist). */
  shape: string;
  /** Pairs only: every class that applies, most severe first. */
  classes: DriftClass[];
  /** Pairs only: the most severe class; '' for added and removed. */
  primary: DriftClass | '';
  /** A short line: what changed. */
  summary: string;
  details: DriftDetails;
}

export interface DriftReport {
  version: typeof REPORT_VERSION;
  old: string;
  new: string;
  summary: {
    pairs: number;
    added: number;
    removed: number;
    /** Pairs having each class (a pair with several classes counts in each). */
    classes: Record<DriftClass, number>;
    /** Pairs by their most severe class (these add up to `pairs`). */
    primary: Record<DriftClass, number>;
    failOn: FailOn[];
    /** Entries that fail: pairs with a class in failOn, and added / removed ones when named. */
    failing: number;
    /**
     * Records of kinds no entry compares (another tool's records, the durable replay store's),
     * by kind, with how many each side holds: the report says nothing about them. Empty when
     * every record was compared.
     */
    notCompared: Uncompared[];
  };
  entries: DriftEntry[];
}

export interface ReportOptions extends ClassifyOptions {
  failOn?: readonly FailOn[];
}

function modelOf(body: unknown): string | undefined {
  const m = body !== null && typeof body === 'object' ? (body as { model?: unknown }).model : undefined;
  return typeof m === 'string' ? m : undefined;
}

function side(r: Recorded, a: Answer): EntrySide {
  const model = modelOf(r.asked.body);
  return { index: r.index, key: r.asked.key, status: a.status, streamed: a.streamed, ...(model ? { model } : {}), ...(r.asked.origin !== undefined ? { origin: r.asked.origin } : {}) };
}

/**
 * The host an entry's recording was made for (the new side's when both name one).
 *
 * @example
 * entryHost(report.entries[0]) // 'https://api.openai.com', or undefined for a recording that names none
 */
export function entryHost(e: DriftEntry): string | undefined {
  return e.new?.origin ?? e.old?.origin;
}

/**
 * Whether a report's recordings were made for more than one host: the renderers then name each
 * entry's host, since one request made to two hosts is otherwise two rows alike. A report of one
 * host (most) reads as before.
 *
 * @example
 * const hosts = manyHosts(report) // true for a tape of OpenAI and Groq calls
 */
export function manyHosts(r: DriftReport): boolean {
  let first: string | undefined;
  for (const e of r.entries) {
    const o = entryHost(e);
    if (o === undefined) continue;
    const k = originKey(o);
    if (first === undefined) first = k;
    else if (k !== first) return true;
  }
  return false;
}

/** Whether two records' answers are the same bytes with the same status (most pairs of a re-record). */
function sameAnswer(a: unknown, b: unknown): boolean {
  if (!isHttpRecord(a) || !isHttpRecord(b) || a.response.status !== b.response.status) return false;
  return sameBytes(a.response.body, b.response.body);
}

// A recording a record run left in place because it did not make the request again: stale.
const KEPT = 'kept from an earlier run; the latest record run did not make this request again';

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** One line for an entry: the first thing a reader needs to know. */
function summaryOf(e: Omit<DriftEntry, 'summary'>): string {
  // One more or fewer of a request both sides have: the answer it adds is not compared (it
  // answers another call of the request), so the summary says where it stands.
  const r = e.repeats;
  if (e.status === 'added' && r) return `another recording of a request recorded before (${r.new} now, ${r.old} before; replay serves them in turn, and a record run killed before it closed leaves its re-recordings after the old ones)`;
  if (e.status === 'removed' && r) return `one recording fewer of this request (${r.new} now, ${r.old} before)`;
  if (e.status === 'added' && e.kept) return KEPT;
  if (e.status === 'added') return 'new recording (no old one for this request)';
  // The new tape has no recording of it: not made again, or made and failed (rerecord lists why).
  if (e.status === 'removed') return 'recording gone (no new recording of this request)';
  const d = e.details;
  const parts: string[] = [];
  for (const c of e.classes) {
    if (c === 'status' && d.status) parts.push(`status ${d.status.old} -> ${d.status.new}`);
    if (c === 'status' && d.error) parts.push(errorPhrase(d.error));
    if (c === 'structure' && d.structure) parts.push(clip(d.structure[0]!, 80) + (d.structure.length > 1 ? ` (+${d.structure.length - 1})` : ''));
    if (c === 'tool-calls' && d.toolCalls) {
      // Which argument changed, and how, is the first thing a reader asks: the first change said.
      const first = (t: ToolCallChange) => {
        const c = t.changes?.[0];
        if (!c) return '';
        const more = t.changes!.length > 1 ? `, +${t.changes!.length - 1} more` : '';
        return ` (${clip(`${c.path || 'arguments'}: ${JSON.stringify(c.old) ?? '-'} -> ${JSON.stringify(c.new) ?? '-'}`, 60)}${more})`;
      };
      const renamed = (t: ToolCallChange) => `${t.oldName} renamed ${t.name}${t.changes?.length ? `, arguments changed${first(t)}` : ''}`;
      parts.push(d.toolCalls.map((t) => (t.change === 'renamed' ? renamed(t) : t.change === 'arguments' ? `${t.name} arguments changed${first(t)}` : `${t.name} ${t.change}`)).join(', '));
    }
    if (c === 'finish' && d.finish) {
      const f = `finish ${d.finish.old.join(',') || '-'} -> ${d.finish.new.join(',') || '-'}`;
      parts.push(d.finish.oldRefusal !== d.finish.newRefusal ? `${f}, refusal ${d.finish.newRefusal ? 'now' : 'no longer'}` : f);
    }
    if (c === 'text' && d.text) parts.push(`text ${Math.round(d.text.similarity * 100)}% similar`);
    // Classed text for its usage alone: the numbers, not a similarity that reads as no change.
    if (c === 'text' && !d.text && d.usage) parts.push(`same text; usage: ${usageCounts(d.usage)}, beyond ${toleranceText(d.usage)}`);
    if (c === 'stream' && d.stream) parts.push(`stream events ${d.stream.oldEvents} -> ${d.stream.newEvents}`);
    if (c === 'benign' && d.benign) parts.push(clip(d.benign.join('; '), 80));
  }
  if (e.requestChange.length) parts.unshift(`request: ${clip(e.requestChange[0]!, 80)}`);
  if (e.kept) parts.push(KEPT);
  return parts.join('; ') || (e.primary === 'identical' ? 'same answer' : '');
}

function entryOf(p: Pairing, opts: ReportOptions): DriftEntry {
  const route = (p.new ?? p.old)!.asked.route;
  if (!p.old || !p.new) {
    const only = (p.new ?? p.old)!;
    const a = answerOf(only.record)!;
    const e = { tape: p.tape, route, status: p.new ? 'added' : 'removed', ...(p.old ? { old: side(p.old, a) } : {}), ...(p.new ? { new: side(p.new, a) } : {}), requestChange: [], shape: a.shape, classes: [], primary: '', details: {}, ...(p.repeats ? { repeats: p.repeats } : {}), ...(p.kept ? { kept: true } : {}) } as Omit<DriftEntry, 'summary'>;
    return { ...e, summary: summaryOf(e) };
  }
  const after = answerOf(p.new.record)!;
  // Secrets masked under two salts (tapes recorded separately) mask alike only by chance: the
  // old answer's masks are read as the new one's where they correspond, and said (masks.ts).
  let old = p.old.record;
  let masked = 0;
  if (!sameAnswer(old, p.new.record) && isHttpRecord(old) && isHttpRecord(p.new.record)) {
    const u = unifyMaskBytes(old.response.body, p.new.record.response.body);
    if (u) {
      old = { ...old, response: { ...old.response, body: u.bytes } };
      masked = u.masked;
    }
  }
  // The same bytes: identical without reading the old answer (the new one is read for its shape).
  const same = sameAnswer(old, p.new.record);
  const before = same ? after : answerOf(old)!;
  const c: Classification = withMaskedNote(same ? { classes: ['identical'], primary: 'identical', details: {} } : classifyPair(before, after, p.new.asked.body, opts), masked);
  const e: Omit<DriftEntry, 'summary'> = { tape: p.tape, route, status: 'paired', old: side(p.old, before), new: side(p.new, after), requestChange: p.requestChange, shape: after.shape, classes: c.classes, primary: c.primary, details: c.details, ...(p.kept ? { kept: true as const } : {}) };
  return { ...e, summary: summaryOf(e) };
}

/** An MCP exchange's change of error answer, in one phrase. */
function errorPhrase(e: { old?: string; new?: string }): string {
  if (e.old === undefined) return `an error now: ${clip(e.new ?? '', 80)}`;
  if (e.new === undefined) return `no error now (was ${clip(e.old, 70)})`;
  return `${clip(e.old, 50)} -> ${clip(e.new, 50)}`;
}

/**
 * An entry of a pairing that is not an HTTP recording's (an MCP exchange, a realtime session):
 * its sides as `sideOf` gives them, its shape, and the summary of a side alone (`added`, `removed`).
 */
function pairedEntry<T>(
  p: { tape: string; route: string; old?: T; new?: T; classification?: Classification },
  sideOf: (x: T) => EntrySide,
  shape: string,
  requestChange: string[],
  alone: { added: string; removed: string },
): Omit<DriftEntry, 'summary'> & { summary?: string } {
  const c = p.classification;
  const e: Omit<DriftEntry, 'summary'> = {
    tape: p.tape,
    route: p.route,
    status: p.old && p.new ? 'paired' : p.new ? 'added' : 'removed',
    ...(p.old ? { old: sideOf(p.old) } : {}),
    ...(p.new ? { new: sideOf(p.new) } : {}),
    requestChange,
    shape,
    classes: c?.classes ?? [],
    primary: c?.primary ?? '',
    details: c?.details ?? {},
  };
  return e.status === 'paired' ? e : { ...e, summary: alone[e.status as 'added' | 'removed'] };
}

/** An MCP exchange compared, as an entry: `status` is 200, or the JSON-RPC error code it answered with. */
function mcpEntryOf(p: McpPairing): DriftEntry {
  const e = pairedEntry(
    p,
    (x: McpRecorded) => {
      const code = x.answer.error?.code;
      return { index: x.index, key: x.record.key, status: typeof code === 'number' ? code : 200, streamed: false };
    },
    'mcp',
    p.requestChange,
    { added: p.kept ? KEPT : 'new exchange (no old one for this call)', removed: 'exchange gone (the call was not made again)' },
  );
  const k = p.kept ? { ...e, kept: true as const } : e;
  return { ...k, summary: k.summary ?? summaryOf(k) };
}

/** A realtime session compared, as an entry: sides by the session's place on its tape. */
function sessionEntryOf(p: RealtimePairing): DriftEntry {
  const e = pairedEntry(p, (x: { index: number; session: { sid: string } }) => ({ index: x.index, key: x.session.sid, status: 101, streamed: true }), 'realtime', [], {
    added: 'new session (no old one for this connect)',
    removed: 'session gone (the connect was not made again)',
  });
  return { ...e, summary: e.summary ?? summaryOf(e).replace(/^same answer$/, 'same session') };
}

const zero = () => Object.fromEntries(DRIFT_CLASSES.map((c) => [c, 0])) as Record<DriftClass, number>;

/**
 * Compares two sets of tapes (tapes paired by name) and classifies every recording.
 *
 * @example
 * const report = driftReport([{ name: 'chat.tape', records: before }], [{ name: 'chat.tape', records: after }], { old: 'HEAD', new: 'working tree' })
 * report.summary.classes.text // pairs whose text changed
 */
export function driftReport(oldTapes: readonly TapeSide[], newTapes: readonly TapeSide[], labels: { old: string; new: string }, opts: ReportOptions = {}): DriftReport {
  const failOn = [...(opts.failOn ?? DEFAULT_FAIL_ON)];
  const entries = [...pairRecordings(oldTapes, newTapes).map((p) => entryOf(p, opts)), ...pairSessions(oldTapes, newTapes).map(sessionEntryOf), ...pairExchanges(oldTapes, newTapes).map(mcpEntryOf)];
  // A recording whose request the other side holds in a newer tapedeck's record version is not
  // gone (or new): it was not compared, and the upgrade compares it.
  const newer = { old: newerByKey(oldTapes), new: newerByKey(newTapes) };
  for (const e of entries) {
    const other = e.status === 'removed' ? 'new' : e.status === 'added' ? 'old' : undefined;
    const version = other && newer[other].get(`${e.tape}\u0000${(e.old ?? e.new)!.key}`);
    if (version) e.summary = `not compared: the ${other} recording is of record version ${version} (upgrade tapedeck to compare)`;
  }
  const classes = zero();
  const primary = zero();
  let failing = 0;
  for (const e of entries) {
    if (e.primary === '') {
      if (failOn.includes(e.status as FailOn)) failing++;
      continue;
    }
    primary[e.primary]++;
    for (const c of e.classes) classes[c]++;
    if (e.classes.some((c) => failOn.includes(c))) failing++;
  }
  const pairs = entries.filter((e) => e.status === 'paired').length;
  return {
    version: REPORT_VERSION,
    old: labels.old,
    new: labels.new,
    summary: { pairs, added: entries.filter((e) => e.status === 'added').length, removed: entries.filter((e) => e.status === 'removed').length, classes, primary, failOn, failing, notCompared: uncomparedRecords(oldTapes, newTapes) },
    entries,
  };
}

/**
 * The `--fail-on` classes as a report says them; `none` for an empty list (`--fail-on none`).
 *
 * @example
 * failOnText([]) // 'none'
 */
export function failOnText(failOn: readonly string[], sep = ', '): string {
  return failOn.length === 0 ? 'none' : failOn.join(sep);
}
