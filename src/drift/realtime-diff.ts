/**
 * `tapedeck diff` for realtime sessions: the k-th session of a connect on the old side is paired
 * with the k-th on the new side (as replay pairs them), and classed by what a listener or an
 * agent would notice: the transcript (`text`), the tool calls (`tool-calls`), the order and kinds
 * of the server's events (`structure`), and, as noise, audio bytes and token usage (`benign`:
 * speech synthesis differs every run). A session on one side only is added or removed.
 * Deltas are compared joined, stream by stream (realtime-streams.ts): a server splits them
 * differently on every run, so another split is the same session.
 */
import { summarizeRealtime, type RealtimeSessionSummary } from '../store/realtime-summary.ts';
import { toolCallChanges, type Classification, type DriftClass, type DriftDetails, type ToolCall } from './classify.ts';
import type { TapeSide } from './pair.ts';
import { sessionStreams, type SessionStreams } from './realtime-streams.ts';
import { diffText } from './text-diff.ts';

/** A session compared, in the shape of a drift entry (report.ts wraps it). */
export interface RealtimePairing {
  tape: string;
  route: string;
  old?: { index: number; session: RealtimeSessionSummary };
  new?: { index: number; session: RealtimeSessionSummary };
  classification?: Classification;
}

/** One side of a pair: the session's summary and its server frames with each stream joined. */
export interface ComparedSession {
  session: RealtimeSessionSummary;
  streams: SessionStreams;
}

const ORDER: DriftClass[] = ['structure', 'tool-calls', 'text', 'benign'];

/** A tool call's arguments as JSON when they parse (so their member order is no change), else as sent. */
function callOf(c: { name: string; arguments: string }): ToolCall {
  try {
    return { name: c.name, args: JSON.parse(c.arguments) as unknown };
  } catch {
    return { name: c.name, args: c.arguments };
  }
}

/**
 * The classes of two recordings of one session.
 *
 * @example
 * // The same answer split into other deltas: identical.
 * classifySessions(before, after) // { classes: ['identical'], primary: 'identical', details: {} }
 */
export function classifySessions(a: ComparedSession, b: ComparedSession): Classification {
  const details: DriftDetails = {};
  const classes = new Set<DriftClass>();
  const ea = a.streams.events;
  const eb = b.streams.events;
  if (ea.join('\n') !== eb.join('\n')) {
    classes.add('structure');
    const i = ea.findIndex((e, k) => e !== eb[k]);
    const at = i < 0 ? Math.min(ea.length, eb.length) : i;
    details.structure = [`server event ${at + 1}: ${ea[at] ?? '(none)'} -> ${eb[at] ?? '(none)'} (${ea.length} -> ${eb.length} events)`];
  }
  const calls = toolCallChanges(a.session.toolCalls.map(callOf), b.session.toolCalls.map(callOf));
  if (calls.length) {
    classes.add('tool-calls');
    details.toolCalls = calls;
  }
  const noise: string[] = [];
  if (a.streams.transcript !== b.streams.transcript) {
    const d = diffText(a.streams.transcript, b.streams.transcript);
    // As for an HTTP answer's text: other whitespace is noise.
    if (d.whitespaceOnly) noise.push('whitespace in the transcript');
    else {
      classes.add('text');
      details.text = { similarity: d.similarity, ops: d.ops };
    }
  }
  const audioChanged = a.streams.audio.join() !== b.streams.audio.join();
  if (audioChanged) noise.push(`audio changed (${a.session.audioOut.seconds.toFixed(1)} s -> ${b.session.audioOut.seconds.toFixed(1)} s)`);
  const usageChanged = JSON.stringify(a.session.usage) !== JSON.stringify(b.session.usage);
  if (usageChanged) noise.push(`usage per response ${a.session.usage.map((u) => `${u.input}/${u.output}`).join(' ')} -> ${b.session.usage.map((u) => `${u.input}/${u.output}`).join(' ')}`);
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
    const by = new Map<string, ({ index: number } & ComparedSession)[]>();
    for (const t of tapes.filter((x) => x.name === name)) {
      const streams = sessionStreams(t.records);
      summarizeRealtime(t.records).sessions.forEach((s, index) => {
        const k = `realtime ${s.provider} ${s.url}`;
        by.set(k, [...(by.get(k) ?? []), { index, session: s, streams: streams.get(s.sid) ?? { events: [], transcript: '', audio: [] } }]);
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
        const side = (x: { index: number; session: RealtimeSessionSummary }) => ({ index: x.index, session: x.session });
        out.push({ tape: name, route, ...(o ? { old: side(o) } : {}), ...(n ? { new: side(n) } : {}), ...(o && n ? { classification: classifySessions(o, n) } : {}) });
      }
    }
  }
  return out;
}
