// When a replay whose client frame differs from its session may go on with another session
// (src/realtime/switch.ts), on sessions made in memory: the server frames sent so far must be
// the same up to the server's ids and times, and the ids the client knows must map one to one
// onto the other session's; otherwise it is a miss, never a session that names ids the client
// never saw. Two replays whose frames differ at the same time, each holding the other's session,
// trade them even while both are looking (were each to wait for the other, both would miss).
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { hashValue } from '../../src/core/index.ts';
import { openaiRealtime } from '../../src/providers/openai-realtime.ts';
import { Ids } from '../../src/realtime/ids.ts';
import { Lineup } from '../../src/realtime/lineup.ts';
import { ReplaySession } from '../../src/realtime/session.ts';
import { fit, type Progress } from '../../src/realtime/switch.ts';
import type { LoadedSession, RealtimeTape } from '../../src/realtime/tape.ts';
import type { RealtimeFrame } from '../../src/store/records.ts';

const openai = openaiRealtime.find((p) => p.provider === 'openai')!;

/** A client frame as a recording holds it: its key (ids renumbered in the session's order) and the message. */
const client = (msg: Record<string, unknown>, ids: Ids): RealtimeFrame => ({ ms: 0, c: 1, key: hashValue(openai.frameKey(msg, ids.id)), msg });
const server = (msg: Record<string, unknown>): RealtimeFrame => ({ ms: 0, text: JSON.stringify(msg) });

/**
 * A session: `session.created` (id `sess`), a `conversation.item.create` answered by
 * `conversation.item.added` with the server's item id `item`, then a `response.create` echoing
 * `echo` as its item and a last item saying `text`.
 */
function session(name: string, o: { sess: string; item: string; echo: string; text: string; voice?: string }): LoadedSession {
  const ids = new Ids();
  return {
    head: { v: 1, kind: 'realtime', key: 'k', keyVersion: 1, recordedAt: '', role: 'session', sid: name, provider: 'openai', url: '/v1/realtime?model=gpt-realtime', protocols: [] },
    frames: [
      server({ type: 'session.created', event_id: `event_${name}_1`, session: { id: o.sess, expires_at: name.length, voice: o.voice ?? 'alloy' } }),
      client({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] } }, ids),
      server({ type: 'conversation.item.added', event_id: `event_${name}_2`, item: { id: o.item, type: 'message' } }),
      client({ type: 'conversation.item.truncate', item_id: o.echo, content_index: 0 }, ids),
      server({ type: 'conversation.item.truncated', event_id: `event_${name}_3`, content_index: 0 }),
      client({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: o.text }] } }, ids),
      server({ type: 'conversation.item.added', event_id: `event_${name}_4`, item: { id: `${o.item}_2`, type: 'message' }, previous_item_id: o.item }),
    ],
  };
}

/** The next client frame's key, as the replay keys it (ids numbered after the two frames before it). */
const third = (text: string) => hashValue(openai.frameKey({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }, new Ids().id));

/** A replay of `from` that matched two client frames, sent `sess_A`'s ids, and echoed `item_A`. */
const progress = (mine: string[]): Progress => ({ step: 2, offset: 0, sent: 0, swap: undefined, mine: (n) => mine[Number(n.slice(1)) - 1] });
const noBlobs = (): Uint8Array => {
  throw new Error('no audio here');
};

describe('fit', () => {
  const alpha = session('alpha', { sess: 'sess_A', item: 'item_A', echo: 'item_A', text: 'Alpha' });

  it('takes over where the frames so far are the same up to ids: its ids go to the ones the client knows', () => {
    const beta = session('beta', { sess: 'sess_B', item: 'item_B', echo: 'item_B', text: 'Beta' });
    const t = fit(openai, noBlobs, alpha, beta, progress(['item_A']), { key: third('Beta') });
    expect(typeof t).toBe('object');
    expect(t).toMatchObject({ swap: new Map([['sess_B', 'sess_A'], ['item_B', 'item_A']]) });
  });

  it("is no takeover where the next frame is not the other session's", () => {
    const beta = session('beta', { sess: 'sess_B', item: 'item_B', echo: 'item_B', text: 'Beta' });
    expect(fit(openai, noBlobs, alpha, beta, progress(['item_A']), { key: third('Gamma') })).toBe('client');
  });

  it('is no takeover where the server said something else before (more than ids and times)', () => {
    const beta = session('beta', { sess: 'sess_B', item: 'item_B', echo: 'item_B', text: 'Beta', voice: 'ash' });
    expect(fit(openai, noBlobs, alpha, beta, progress(['item_A']), { key: third('Beta') })).toBe('server');
  });

  it('is no takeover where an id the client echoed is held otherwise in the other session (a miss, not a wrong answer)', () => {
    // Its recorded client truncated an item its server never sent: that id cannot be the one
    // this client echoed (item_A, which stands for the other session's item_B).
    const odd = session('odd', { sess: 'sess_B', item: 'item_B', echo: 'item_Z', text: 'Beta' });
    expect(fit(openai, noBlobs, alpha, odd, progress(['item_A']), { key: third('Beta') })).toBe('ids');
  });
});

describe('two replays that differ at the same time', () => {
  /** A stand-in for an accepted ws client: what the replay sends it. */
  class Client extends EventEmitter {
    readonly OPEN = 1;
    readyState = 1;
    readonly sent: Record<string, any>[] = [];
    send(d: Buffer | string): void {
      this.sent.push(JSON.parse(String(d)) as Record<string, any>);
    }
    close(): void {
      this.readyState = 3;
    }
    terminate(): void {
      this.readyState = 3;
    }
  }

  const recorded = (name: string, text: string): LoadedSession => {
    const ids = new Ids();
    return {
      head: { v: 1, kind: 'realtime', key: 'k', keyVersion: 1, recordedAt: '', role: 'session', sid: name, provider: 'openai', url: '/v1/realtime?model=gpt-realtime', protocols: [] },
      frames: [
        server({ type: 'session.created', session: { id: `sess_${name}` } }),
        client({ type: 'session.update', session: { instructions: 'Be brief.' } }, ids),
        server({ type: 'session.updated', session: { id: `sess_${name}`, instructions: 'Be brief.' } }),
        client({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } }, ids),
        server({ type: 'conversation.item.added', item: { id: `item_${name}`, content: [{ type: 'input_text', text }] } }),
      ],
    };
  };

  it('trade their sessions even while both look for another (a store that reads slowly)', async () => {
    const [alpha, beta] = [recorded('alpha', 'Alpha'), recorded('beta', 'Beta')];
    const rest: LoadedSession[] = [alpha, beta];
    // Reading past the last session takes a while, as a shared store's refresh does.
    const lineup = new Lineup(async () => {
      const s = rest.shift();
      if (s) return { session: s };
      await new Promise((r) => setTimeout(r, 20));
      return undefined;
    });
    const tape = { strictOrder: true, recordCommand: 're-record', location: 'x.tape', framesReplayed: 0, sessionsReplayed: 2, blob: noBlobs, miss: () => ({}), warn: () => {}, redactor: { value: (v: unknown) => v } } as unknown as RealtimeTape;
    const first = (await lineup.choose(hashValue(openai.frameKey({ type: 'session.update', session: { instructions: 'Be brief.' } }, new Ids().id)), () => true))!;
    const second = (await lineup.choose(hashValue(openai.frameKey({ type: 'session.update', session: { instructions: 'Be brief.' } }, new Ids().id)), () => true))!;
    // Beta's connect came first: it got Alpha's session, and Alpha's connect Beta's.
    const [b, a] = [new Client(), new Client()];
    new ReplaySession({ tape, protocol: openai, client: b as never, label: 'GET /v1/realtime', seat: { lineup, index: first.index } }, first.session);
    new ReplaySession({ tape, protocol: openai, client: a as never, label: 'GET /v1/realtime', seat: { lineup, index: second.index } }, second.session);
    const say = (c: Client, m: Record<string, unknown>) => c.emit('message', Buffer.from(JSON.stringify(m)), false);
    for (const c of [b, a]) say(c, { type: 'session.update', session: { instructions: 'Be brief.' } });
    say(b, { type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Beta' }] } });
    say(a, { type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Alpha' }] } });
    await new Promise((r) => setTimeout(r, 100));
    expect(b.sent.map((e) => e.type)).toEqual(['session.created', 'session.updated', 'conversation.item.added']);
    expect(a.sent.map((e) => e.type)).toEqual(['session.created', 'session.updated', 'conversation.item.added']);
    expect(b.sent[2]!.item.content[0].text).toBe('Beta');
    expect(a.sent[2]!.item.content[0].text).toBe('Alpha');
    // Each client's session id is the one it was sent at connect.
    expect(new Set(b.sent.map((e) => e.session?.id ?? 'sess_alpha'))).toEqual(new Set(['sess_alpha']));
    expect(new Set(a.sent.map((e) => e.session?.id ?? 'sess_beta'))).toEqual(new Set(['sess_beta']));
  });
});
