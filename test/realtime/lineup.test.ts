// Which recorded session of a connect key goes to which connect (src/realtime/lineup.ts), and
// when two sessions opened the same way (src/realtime/opening.ts), on sessions made in memory:
// the connect orders and first-frame races the end-to-end tests cannot time.
import { describe, expect, it } from 'vitest';
import { openaiRealtime } from '../../src/providers/openai-realtime.ts';
import { Lineup, type Slot } from '../../src/realtime/lineup.ts';
import { openingIds, sameOpening } from '../../src/realtime/opening.ts';
import type { LoadedSession } from '../../src/realtime/tape.ts';

const openai = openaiRealtime.find((p) => p.provider === 'openai')!;

/** A session named `name` whose first client frame keys as `first`, opened by `session.created` with `sess`'s id. */
function session(name: string, first: string, sess = `sess_${name}`, extra: Record<string, unknown> = {}): LoadedSession {
  const created = { type: 'session.created', event_id: `event_${name}`, session: { id: sess, object: 'realtime.session', model: 'gpt-realtime', expires_at: name.length * 1000, ...extra } };
  return {
    head: { v: 1, kind: 'realtime', key: 'k', keyVersion: 1, recordedAt: '', role: 'session', sid: name, provider: 'openai', url: '/v1/realtime?model=gpt-realtime', protocols: [] },
    frames: [
      { ms: 0, text: JSON.stringify(created) },
      { ms: 1, c: 1, key: first, msg: {} },
    ],
  };
}

/** A lineup over the sessions given, read one at a time as the tape would be. */
function lineupOf(...sessions: (LoadedSession | Error)[]): Lineup {
  const rest = [...sessions];
  return new Lineup(async () => {
    const s = rest.shift();
    return s === undefined ? undefined : ((s instanceof Error ? { damaged: s } : { session: s }) as Slot);
  });
}

const all = () => true;

describe('Lineup', () => {
  it('gives sessions in recorded order, then nothing', async () => {
    const [a, b] = [session('a', 'f'), session('b', 'g')];
    const l = lineupOf(a, b);
    expect(await l.next()).toBe(a);
    expect(await l.next()).toBe(b);
    expect(await l.next()).toBeUndefined();
  });

  it('a first frame chooses the session that starts with it, whichever connect came first', async () => {
    const [a, b] = [session('a', 'brief'), session('b', 'funny')];
    const l = lineupOf(a, b);
    const tb = (await l.reserve())!; // B connects first: sent A's opening
    const ta = (await l.reserve())!;
    expect(tb.session).toBe(a);
    expect((await l.choose('funny', all, tb))?.session).toBe(b);
    expect((await l.choose('brief', all, ta))?.session).toBe(a);
  });

  it('sessions that start alike go in connect order, however the first frames race', async () => {
    const [one, two] = [session('one', 'f'), session('two', 'f')];
    const l = lineupOf(one, two);
    const t1 = (await l.reserve())!;
    const t2 = (await l.reserve())!;
    expect((await l.choose('f', all, t2))?.session).toBe(two);
    expect((await l.choose('f', all, t1))?.session).toBe(one);
  });

  it('shuffled connects: the k-th connect that starts alike gets the k-th such session', async () => {
    // Recorded X (f), Y (f), Z (g); replayed G, F1, F2 (each holds the session of its place).
    const [x, y, z] = [session('x', 'f'), session('y', 'f'), session('z', 'g')];
    const l = lineupOf(x, y, z);
    const g = (await l.reserve())!;
    const f1 = (await l.reserve())!;
    const f2 = (await l.reserve())!;
    expect((await l.choose('g', all, g))?.session).toBe(z);
    expect((await l.choose('f', all, f1))?.session).toBe(x);
    expect((await l.choose('f', all, f2))?.session).toBe(y);
  });

  it('a frame no session starts with uses up nothing; a released hold goes to the next connect', async () => {
    const [a, b] = [session('a', 'brief'), session('b', 'funny')];
    const l = lineupOf(a, b);
    const t = (await l.reserve())!;
    expect(await l.choose('verbose', all, t)).toBeUndefined();
    l.release(t);
    expect((await l.reserve())?.session).toBe(a);
  });

  it('a damaged session is an error for the connect whose turn it is, never another session', async () => {
    const a = session('a', 'f');
    const l = lineupOf(new Error('E_TAPE_DAMAGED'), a);
    await expect(l.reserve()).rejects.toThrow('E_TAPE_DAMAGED');
    expect((await l.reserve())?.session).toBe(a);
  });

  it('chooses only among the sessions `fits` accepts', async () => {
    const [a, b] = [session('a', 'f'), session('b', 'g')];
    const l = lineupOf(a, b);
    const t = (await l.reserve())!;
    expect(await l.choose('g', (s) => s === a, t)).toBeUndefined();
    expect(l.startingWith('g')).toEqual([{ session: b, index: 1, served: false }]);
  });
});

describe('Lineup places of replays (src/realtime/switch.ts)', () => {
  const replay = () => ({ movable: () => undefined });

  it('a replay that misses puts its session back: the next connect gets it, the next after that the one after', async () => {
    const [a, b] = [session('a', 'f'), session('b', 'f')];
    const l = lineupOf(a, b);
    const got = (await l.choose('f', all))!;
    const r = replay();
    l.occupy(got.index, r);
    l.putBack(got.index, r);
    expect((await l.choose('f', all))?.session).toBe(a);
    expect((await l.choose('f', all))?.session).toBe(b);
  });

  it('a replay that ends keeps its place served; one that moves gives its own back', async () => {
    const [a, b, c] = [session('a', 'f'), session('b', 'f'), session('c', 'f')];
    const l = lineupOf(a, b, c);
    const first = (await l.choose('f', all))!;
    const r = replay();
    l.occupy(first.index, r);
    await l.readAll();
    l.move(r, first.index, 2);
    expect(l.places().map((p) => [p.index, p.served, p.occupant === r])).toEqual([
      [0, false, false],
      [1, false, false],
      [2, true, true],
    ]);
    l.leave(2, r);
    expect(l.places()[2]).toMatchObject({ served: true, occupant: undefined });
    // Put back by someone not on the place: nothing changes.
    l.putBack(2, r);
    expect(l.places()[2]).toMatchObject({ served: true });
  });

  it('two replays trade places', async () => {
    const [a, b] = [session('a', 'f'), session('b', 'f')];
    const l = lineupOf(a, b);
    const [x, y] = [replay(), replay()];
    l.occupy((await l.choose('f', all))!.index, x);
    l.occupy((await l.choose('f', all))!.index, y);
    l.trade(0, 1);
    expect(l.places().map((p) => p.occupant)).toEqual([y, x]);
  });
});

describe('sameOpening', () => {
  it('is the same opening up to the server ids, event ids and times', () => {
    const [a, b] = [session('a', 'f'), session('bb', 'g')];
    expect(sameOpening(openai, a, b)).toBe(true);
    expect(openingIds(openai, a, b)).toEqual(new Map([['sess_bb', 'sess_a']]));
  });

  it('is another opening when the server said something else', () => {
    expect(sameOpening(openai, session('a', 'f'), session('b', 'f', 'sess_b', { voice: 'ash' }))).toBe(false);
  });
});
