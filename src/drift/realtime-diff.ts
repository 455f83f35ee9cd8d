/**
 * `tapedeck diff` for realtime sessions: the k-th session of a connect on the old side is paired
 * with the k-th on the new side (as replay pairs them), and classed by what a listener or an
 * agent would notice: the transcript (`text`), the tool calls (`tool-calls`), the order and kinds
 * of the server's events (`structure`), and, as noise, audio bytes and token usage (`benign`:
 * speech synthesis differs every run). A session on one side only is added or removed.
 */
import { summarizeRealtime, type RealtimeSessionSummary } from '../store/realtime-summary.ts';
import type { Classification, DriftClass, DriftDetails, ToolCallChange } from './classify.ts';
import type { TapeSide } from './pair.ts';
import { diffText } from './text-diff.ts';

/** A session compared, in the shape of a drift entry (report.ts wraps it). */
export interface RealtimePairing {
  tape: string;
  route: string;
  old?: { index: number; session: RealtimeSessionSummary };
  new?: { index: number; session: RealtimeSessionSummary };
  classification?: Classification;
}

const ORDER: DriftClass[] = ['structure', 'tool-calls', 'text', 'benign'];

/** The classes of two recordings of one session. */
export function classifySessions(a: RealtimeSessionSummary, b: RealtimeSessionSummary): Classification {
  const details: DriftDetails = {};
  const classes = new Set<DriftClass>();
  if (a.serverEvents.join('\n') !== b.serverEvents.join('\n')) {
    classes.add('structure');
    const i = a.serverEvents.findIndex((e, k) => e !== b.serverEvents[k]);
    const at = i < 0 ? Math.min(a.serverEvents.length, b.serverEvents.length) : i;
    details.structure = [`server event ${at + 1}: ${a.serverEvents[at] ?? '(none)'} -> ${b.serverEvents[at] ?? '(none)'} (${a.serverEvents.length} -> ${b.serverEvents.length} events)`];
  }
  const calls: ToolCallChange[] = [];
  for (let i = 0; i < Math.max(a.toolCalls.length, b.toolCalls.length); i++) {
    const x = a.toolCalls[i];
    const y = b.toolCalls[i];
    if (!x) calls.push({ change: 'added', index: i, name: y!.name, newArguments: y!.arguments });
    else if (!y) calls.push({ change: 'removed', index: i, name: x.name, oldArguments: x.arguments });
    else if (x.name !== y.name) calls.push({ change: 'renamed', index: i, name: y.name, oldName: x.name, oldArguments: x.arguments, newArguments: y.arguments });
    else if (x.arguments !== y.arguments) calls.push({ change: 'arguments', index: i, name: y.name, oldArguments: x.arguments, newArguments: y.arguments });
  }
  if (calls.length) {
    classes.add('tool-calls');
    details.toolCalls = calls;
  }
  if (a.transcript !== b.transcript) {
    classes.add('text');
    const d = diffText(a.transcript, b.transcript);
    details.text = { similarity: d.similarity, ops: d.ops };
  }
  const noise: string[] = [];
  const audioChanged = a.audioOutDigests.join() !== b.audioOutDigests.join();
  if (audioChanged) noise.push(`audio changed (${a.audioOut.seconds.toFixed(1)} s -> ${b.audioOut.seconds.toFixed(1)} s)`);
  const usageChanged = JSON.stringify(a.usage) !== JSON.stringify(b.usage);
  if (usageChanged) noise.push(`usage per response ${a.usage.map((u) => `${u.input}/${u.output}`).join(' ')} -> ${b.usage.map((u) => `${u.input}/${u.output}`).join(' ')}`);
  if (noise.length) {
    classes.add('benign');
    details.benign = noise;
  }
  const list = ORDER.filter((c) => classes.has(c));
  if (list.length === 0) return { classes: ['identical'], primary: 'identical', details };
  return { classes: list, primary: list[0]!, details };
}

/**
 * Pairs the sessions of two sets of tapes (tapes by name, sessions by connect and order).
 *
 * @example
 * pairSessions([{ name: 'voice.tape', records: before }], [{ name: 'voice.tape', records: after }])
 */
export function pairSessions(oldTapes: readonly TapeSide[], newTapes: readonly TapeSide[]): RealtimePairing[] {
  const out: RealtimePairing[] = [];
  const names = [...new Set([...oldTapes.map((t) => t.name), ...newTapes.map((t) => t.name)])].sort();
  const sessionsOf = (tapes: readonly TapeSide[], name: string) => {
    const by = new Map<string, { index: number; session: RealtimeSessionSummary }[]>();
    for (const t of tapes.filter((x) => x.name === name)) {
      summarizeRealtime(t.records).sessions.forEach((s, index) => {
        const k = `realtime ${s.provider} ${s.url}`;
        by.set(k, [...(by.get(k) ?? []), { index, session: s }]);
      });
    }
    return by;
  };
  for (const name of names) {
    const olds = sessionsOf(oldTapes, name);
    const news = sessionsOf(newTapes, name);
    for (const route of [...new Set([...olds.keys(), ...news.keys()])].sort()) {
      const a = olds.get(route) ?? [];
      const b = news.get(route) ?? [];
      for (let k = 0; k < Math.max(a.length, b.length); k++) {
        const o = a[k];
        const n = b[k];
        out.push({ tape: name, route, ...(o ? { old: o } : {}), ...(n ? { new: n } : {}), ...(o && n ? { classification: classifySessions(o.session, n.session) } : {}) });
      }
    }
  }
  return out;
}
