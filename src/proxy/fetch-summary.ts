/**
 * createFetch's own summary at close (`summary: true`), for code that uses createFetch without
 * a test runner plugin: the same counts the runner summaries give, for this one tape.
 */

import { redactor, type Redactor } from '../store/redact.ts';

/** What one createFetch saw, for its summary. */
export interface FetchRun {
  tape: string | undefined;
  mode: string;
  replayed: number;
  /** Recordings made for requests the tape had none of (or more of than before). */
  added: number;
  /** Record mode: recordings made that replaced an older recording of their request (the tape did not grow). */
  rerecorded?: number;
  /** Misses: route and the short diagnosis. */
  misses: { route: string; message: string }[];
  /** Recordings nothing in this run asked for. */
  unused: number;
  /**
   * Why unused recordings were not judged (injected faults stood in for some, whose recordings
   * wait for retries that may never come): said in place of the unused count.
   */
  unusedNotChecked?: string;
  /** Live answers left off the tape: cut or ended early upstream, or cut by close. */
  notRecorded?: number;
  /** Calls answered with an error because the recording they matched is damaged. */
  damaged?: number;
  /** Other calls answered with an error in a mode that records nothing (the store unreachable). */
  failed?: number;
  /** A run that recorded left recordings nothing asked for: the line that says how to drop them (./stale-recordings.ts). */
  stale?: string | undefined;
}

let masks: Redactor | undefined;

/**
 * A miss's route (`POST /path`, the path as sent) as the summary shows it: a secret in the path
 * (a Telegram bot's token, `/bot<id>:<token>/sendMessage`) masked, as the miss itself masks it;
 * the summary goes to the same log.
 */
function shownRoute(route: string): string {
  const at = route.indexOf(' ');
  return at < 0 ? route : route.slice(0, at + 1) + (masks ??= redactor()).url(route.slice(at + 1));
}

/**
 * The summary text: one line of counts, then each miss (at most 20).
 *
 * @example
 * formatFetchSummary({ tape: 'chat.tape', mode: 'replay', replayed: 3, added: 0, misses: [], unused: 1 })
 * // 'tapedeck: chat.tape (replay): 3 replayed, 0 recordings added, 0 misses, 1 unused recording'
 * formatFetchSummary({ tape: 'chat.tape', mode: 'record', replayed: 0, added: 1, rerecorded: 2, misses: [], unused: 0 })
 * // 'tapedeck: chat.tape (record): 0 replayed, 1 recording added, 2 re-recorded (replaced), 0 misses, 0 unused recordings'
 * formatFetchSummary({ tape: 'chat.tape', mode: 'replay', replayed: 1, added: 0, misses: [], unused: 3, unusedNotChecked: '1 call was answered by injected faults (429 1)' })
 * // 'tapedeck: chat.tape (replay): 1 replayed, 0 recordings added, 0 misses, unused recordings not checked: 1 call was answered by injected faults (429 1)'
 */
export function formatFetchSummary(r: FetchRun): string {
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  const lost = r.notRecorded ? ` (${plural(r.notRecorded, 'answer')} not recorded)` : '';
  // Said apart from "added", as the test runners' summaries do: the tape did not grow for them.
  const again = r.rerecorded ? `, ${r.rerecorded} re-recorded (replaced)` : '';
  // Replay records nothing: its failed calls are not "answers not recorded".
  const bad = `${r.damaged ? `, ${plural(r.damaged, 'call')} answered with an error (damaged recording)` : ''}${r.failed ? `, ${plural(r.failed, 'call')} failed` : ''}`;
  const lines = [`tapedeck: ${r.tape ?? 'no tape'} (${r.mode}): ${r.replayed} replayed, ${plural(r.added, 'recording')} added${lost}${again}${bad}, ${r.misses.length === 1 ? '1 miss' : `${r.misses.length} misses`}, ${r.unusedNotChecked ? `unused recordings not checked: ${r.unusedNotChecked}` : plural(r.unused, 'unused recording')}`];
  if (r.stale) lines.push(r.stale);
  if (r.misses.length > 0) {
    lines.push('Misses:');
    for (const m of r.misses.slice(0, 20)) lines.push(`  ${shownRoute(m.route)}: ${m.message.split('\n')[0]}`);
    if (r.misses.length > 20) lines.push(`  ... and ${r.misses.length - 20} more`);
  }
  return lines.join('\n');
}
