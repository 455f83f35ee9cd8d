// The close fault on a session recorded live must cut it exactly where a replay of that very
// session cuts it (src/realtime/session.ts, middleOfFirstResponse), though live the length of a
// response is known only at its end: over many random sessions (client frames, server frames,
// frames that complete a response, in any order), the server frames the client gets before the
// cut are, in order, the ones a faulted replay of the recorded session sends; and a session
// with no response to cut is never cut live.
import { describe, expect, it } from 'vitest';
import type { RealtimeProtocol } from '../../src/providers/realtime.ts';
import { LiveCut } from '../../src/realtime/live-cut.ts';
import { middleOfFirstResponse, type Played, type Step } from '../../src/realtime/session.ts';

/** A protocol reduced to what the rule reads: whether a frame completes a response. */
const protocol = { completes: (m: unknown) => (m as { done?: boolean }).done === true } as RealtimeProtocol;

type Event = 'c' | 's' | 'S';

/** A deterministic pseudo-random session: `n` events, `c` a client frame, `s` a server frame, `S` one that completes a response. */
function session(seed: number, n: number): Event[] {
  let x = seed * 2654435761 + 1;
  const out: Event[] = [];
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x ^ (x >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
    const r = x % 10;
    out.push(r < 2 ? 'c' : r < 4 ? 'S' : 's');
  }
  return out;
}

const frame = (i: number, done: boolean) => Buffer.from(JSON.stringify({ i, ...(done ? { done } : {}) }));

/** What a live session's client gets before the cut (frame numbers, in order), and whether it was cut. */
function live(events: Event[]): { sent: number[]; cut: boolean } {
  const cutter = new LiveCut();
  const sent: number[] = [];
  let i = 0;
  for (const e of events) {
    if (e === 'c') {
      for (const [d] of cutter.step()) sent.push((JSON.parse(d.toString()) as { i: number }).i);
      continue;
    }
    const n = i++;
    const v = cutter.server(frame(n, e === 'S'), false, e === 'S');
    if ('pass' in v) sent.push(n);
    else if ('release' in v) for (const [d] of v.release) sent.push((JSON.parse(d.toString()) as { i: number }).i);
    else {
      for (const [d] of v.cut) sent.push((JSON.parse(d.toString()) as { i: number }).i);
      return { sent, cut: true };
    }
  }
  return { sent, cut: false };
}

/** The recorded session as a replay reads it, and the server frames a faulted replay sends before its close. */
function replay(events: Event[]): { sent: number[]; response: boolean } {
  const prelude: Played[] = [];
  const steps: Step[] = [];
  let i = 0;
  for (const e of events) {
    if (e === 'c') steps.push({ client: { ms: 0, c: 1, key: '', msg: {} }, server: [] });
    else {
      const n = i++;
      const f: Played = { ms: 0, data: frame(n, e === 'S'), binary: false, json: true };
      (steps.length > 0 ? steps[steps.length - 1]!.server : prelude).push(f);
    }
  }
  const cut = middleOfFirstResponse(prelude, steps, protocol);
  const numbers = (fs: Played[]) => fs.map((f) => (JSON.parse(f.data.toString()) as { i: number }).i);
  const sent = cut.step === -1 ? numbers(prelude.slice(0, cut.frames)) : [...numbers(prelude), ...steps.slice(0, cut.step).flatMap((s) => numbers(s.server)), ...numbers(steps[cut.step]!.server.slice(0, cut.frames))];
  // Whether the session has a response to cut: a completing frame with frames of its own before it in its step.
  const response = steps.some((s) => {
    let start = 0;
    return s.server.some((f, k) => {
      if (!(JSON.parse(f.data.toString()) as { done?: boolean }).done) return false;
      if (k > start) return true;
      start = k + 1;
      return false;
    });
  });
  return { sent, response };
}

describe('LiveCut: a live session is cut where its replay is', () => {
  it('the frames before the cut, over 5,000 random sessions', () => {
    let cuts = 0;
    for (let seed = 1; seed <= 5000; seed++) {
      const events = session(seed, 5 + (seed % 40));
      const l = live(events);
      const r = replay(events);
      if (!r.response) {
        // Nothing to cut: the session runs to its end live (the fault is taken back).
        expect(l.cut, events.join('')).toBe(false);
        continue;
      }
      cuts++;
      expect(l.cut, events.join('')).toBe(true);
      expect(l.sent, events.join('')).toEqual(r.sent);
    }
    expect(cuts).toBeGreaterThan(3000);
  });

  it('the sessions of the fakes: a Gemini turn and an OpenAI response after session.updated', () => {
    // setup -> setupComplete; clientContent -> 6 frames, turnComplete: the client gets 3.
    const gemini: Event[] = ['c', 'S', 'c', 's', 's', 's', 's', 's', 's', 'S'];
    expect(live(gemini)).toEqual({ sent: [0, 1, 2, 3], cut: true });
    expect(replay(gemini).sent).toEqual([0, 1, 2, 3]);
    // session.created; then the client's three frames at once, every answer after the last.
    const openai: Event[] = ['S', 'c', 'c', 'c', 'S', 's', 's', 's', 's', 's', 'S'];
    expect(live(openai)).toEqual({ sent: [0, 1, 2, 3], cut: true });
    expect(replay(openai).sent).toEqual([0, 1, 2, 3]);
  });

  it('frames held for the cut go out once the upstream is quiet; a response that goes on after all is cut at its completing frame', () => {
    const cutter = new LiveCut();
    cutter.step();
    const f = (i: number) => Buffer.from(JSON.stringify({ i }));
    expect(cutter.server(f(0), false, false)).toEqual({ release: [[f(0), false]] });
    expect(cutter.server(f(1), false, false)).toEqual({ release: [] });
    expect(cutter.holding).toBe(true);
    expect(cutter.quiet()).toEqual([[f(1), false]]);
    expect(cutter.holding).toBe(false);
    // The response goes on: the frames after the quiet are held by the same rule, counted from its start.
    expect(cutter.server(f(2), false, false)).toEqual({ release: [] });
    expect(cutter.server(f(3), false, false)).toEqual({ release: [] });
    expect(cutter.server(f(4), false, false)).toEqual({ release: [] });
    expect(cutter.server(f(5), false, false)).toEqual({ release: [[f(2), false]] });
    expect(cutter.server(f(6), false, true)).toEqual({ cut: [] });
  });

  it('frames held for the cut go out when the client starts a step: no response completed after them', () => {
    expect(live(['c', 's', 's', 's', 'c', 's', 'S'])).toEqual({ sent: [0, 1, 2, 3], cut: true });
  });
});
