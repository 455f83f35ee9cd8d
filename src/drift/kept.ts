// Which recordings of a new tape are an earlier run's, kept by a later record run that did not
// make their requests again. Record mode replaces only the requests a run makes again and keeps
// the rest (docs/modes.md), so after an agent is re-recorded in its own tape the steps whose
// request changed are there twice: the earlier run's recording, carried over unchanged (it pairs
// with itself in the old tape), and the new run's under a new key. The carried-over copy is what
// the new step stands for, so pairing must see past it (pair.ts). A copy counts as kept from an
// earlier run only where a newer run, of the same test, re-recorded the start of its
// conversation: on a tape tests share, one test re-recorded leaves the others' recordings alone,
// and an `update` run (which records only what is missing, never a request already there) marks
// nothing.

import type { RequestKeys } from '../match/matcher.ts';

/** A record on one side, of any kind the report pairs (an HTTP recording, an MCP exchange). */
interface Side {
  record: unknown;
}

type Obj = Record<string, unknown>;
const field = (r: Side, name: string): string | undefined => {
  const v = (r.record as Obj)[name];
  return typeof v === 'string' ? v : undefined;
};

/** The test a recording names (on a tape tests share), '' for none. */
const testOf = (r: Side): string => field(r, 'test') ?? '';

/** The same recording on both sides: made by one run at one time, carried over. */
const sameRecording = (o: Side, n: Side): boolean => field(n, 'run') !== undefined && field(n, 'run') === field(o, 'run') && field(n, 'recordedAt') === field(o, 'recordedAt');

/**
 * What a conversation is, for one kind of record: `mark` names what a re-recording starts (undefined:
 * nothing), `continues` whether a kept copy belongs to one of the marked conversations.
 */
export interface Conversation<T> {
  mark(r: T): string | undefined;
  continues(r: T, marks: ReadonlySet<string>): boolean;
}

/**
 * LLM requests: a conversation is the chain of its messages; a re-recording marks its whole
 * conversation (its last path hash), and a copy continues it when its messages begin with it
 * (its own whole conversation re-recorded would have replaced it: only a longer one is kept).
 */
export function llmConversation<T>(keysOf: (r: T) => RequestKeys | undefined): Conversation<T> {
  return {
    mark: (r) => keysOf(r)?.pathHashes.at(-1),
    continues: (r, marks) => keysOf(r)?.pathHashes.slice(0, -1).some((p) => marks.has(p)) === true,
  };
}

/** MCP exchanges: a conversation is a session (its `session` number, 1 when it names none). */
export const mcpConversation: Conversation<Side> = {
  mark: (r) => String((r.record as Obj).session ?? 1),
  continues: (r, marks) => marks.has(String((r.record as Obj).session ?? 1)),
};

/** The runs that made the old recordings. */
export const runsOf = (olds: readonly Side[]): Set<string> => new Set(olds.map((o) => field(o, 'run')).filter((r): r is string => r !== undefined));

/**
 * The new recordings (of `byNew`, new -> the old one of the same key) kept from an earlier run:
 * carried over unchanged, in a conversation a run the old tapes do not have re-recorded (a
 * request of it the old tapes have, recorded again), by the same test.
 *
 * @example
 * keptCopies(olds, news, byNew, llmConversation(keysOf)) // Set { the carried-over copy of step 2 }
 */
export function keptCopies<T extends Side>(olds: readonly T[], news: readonly T[], byNew: ReadonlyMap<T, T>, conversation: Conversation<T>): Set<T> {
  const out = new Set<T>();
  // Carried-over copies first: most diffs have none (two tapes recorded apart), and then no
  // request is keyed here.
  const carried = news.filter((n) => byNew.has(n) && sameRecording(byNew.get(n)!, n));
  if (carried.length === 0) return out;
  const tests = new Set(carried.map(testOf));
  const oldRuns = runsOf(olds);
  // Per test: the conversations a newer run re-recorded.
  const restarted = new Map<string, Set<string>>();
  for (const n of news) {
    const run = field(n, 'run');
    const o = byNew.get(n);
    if (run === undefined || oldRuns.has(run) || !o || !tests.has(testOf(n))) continue;
    const mark = conversation.mark(n);
    if (mark === undefined) continue;
    let s = restarted.get(testOf(n));
    if (!s) restarted.set(testOf(n), (s = new Set()));
    s.add(mark);
  }
  if (restarted.size === 0) return out;
  for (const n of carried) {
    const s = restarted.get(testOf(n));
    if (s && conversation.continues(n, s)) out.add(n);
  }
  return out;
}

/**
 * Whether a new recording may stand for an old one whose copy was kept (`keptOld`'s test):
 * only one of the same test, by a run the old tapes do not have.
 *
 * @example
 * mayReplaceKept(step2Now, step2Before, runsOf(olds)) // true: the latest run, the same test
 */
export function mayReplaceKept(n: Side, keptOld: Side, oldRuns: ReadonlySet<string>): boolean {
  const run = field(n, 'run');
  return run !== undefined && !oldRuns.has(run) && testOf(n) === testOf(keptOld);
}
