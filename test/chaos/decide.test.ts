// The decider's rules for what a call is (a new call or a retry) and when a fault counts: a
// stall answers its call; a request that comes before a faulted answer is out is a call of its
// own; a retry its client numbers past `attempts` is never faulted; a damaging fault is counted
// and announced only once injected. The SDK side of each is in the other files here.
import { describe, expect, it } from 'vitest';
import { Chaos } from '../../src/chaos/decide.ts';
import { clientRetries } from '../../src/chaos/retry-count.ts';

const quiet = () => {};

describe('what a call is', () => {
  it('a stall answers its call: the next request of the key is the next call', () => {
    const c = new Chaos({ faults: { stall: 1 }, seed: 1 }, 'http', quiet);
    expect([0, 1, 2].map(() => c.decide('k')).map((v) => [v?.fault, v?.ordinal, v?.attempt])).toEqual([
      ['stall', 0, 0],
      ['stall', 1, 0],
      ['stall', 2, 0],
    ]);
  });

  it('a cut is an attempt: its retry is the same call, and gets the recording held for it', () => {
    const c = new Chaos<string>({ faults: { cut: 1 }, attempts: 1, seed: 1 }, 'http', quiet);
    const v = c.decide('k')!;
    c.hold(v.call, 'recording 0');
    expect([v.fault, v.ordinal]).toEqual(['cut', 0]);
    expect(c.decide('k')).toBeUndefined();
    expect(c.held('k', false)).toBe('recording 0');
    expect(c.decide('k')?.ordinal).toBe(1);
  });

  it('requests that come while the faulted answers of their key are not out are calls of their own', () => {
    const c = new Chaos({ faults: { 429: 1 }, attempts: 1, seed: 1 }, 'http', quiet);
    const first = [0, 1, 2].map(() => c.decide('k', undefined, undefined, { tellsSent: true })!);
    expect(first.map((v) => [v.fault, v.ordinal, v.attempt])).toEqual([
      ['429', 0, 0],
      ['429', 1, 0],
      ['429', 2, 0],
    ]);
    for (const v of first) c.sent(v.call);
    // Their retries: answered, each once.
    expect([0, 1, 2].map(() => c.decide('k', undefined, undefined, { tellsSent: true }))).toEqual([undefined, undefined, undefined]);
    expect(c.decide('k', undefined, undefined, { tellsSent: true })?.ordinal).toBe(3);
    expect(c.counts()).toEqual({ 429: 4 });
  });

  it('a retry its client numbers is one: of the open call with as many faulted answers; past `attempts`, never faulted', () => {
    const c = new Chaos({ faults: { 429: 1 }, attempts: 2, seed: 1 }, 'http', quiet);
    const a = c.decide('k', undefined, undefined, { retries: 0 })!;
    const b = c.decide('k', undefined, undefined, { retries: 0 })!;
    // Numbered 0 is no retry count: an app's own retry loop around an SDK that retries nothing
    // sends 0 too. With a's answer out, b is a's retry.
    expect([a.ordinal, b.ordinal, b.attempt]).toEqual([0, 0, 1]);
    const c2 = new Chaos({ faults: { 429: 1 }, attempts: 2, seed: 1 }, 'http', quiet);
    const x = c2.decide('k', undefined, undefined, { retries: 0, tellsSent: true })!;
    c2.sent(x.call);
    const y = c2.decide('k', undefined, undefined, { retries: 1, tellsSent: true })!;
    expect([y.fault, y.ordinal, y.attempt]).toEqual(['429', 0, 1]);
    // Its client says this is its third attempt: with attempts 2 it is answered, whatever the
    // decider counted (here the second fault is not out yet).
    expect(c2.decide('k', undefined, undefined, { retries: 2, tellsSent: true })).toBeUndefined();
  });
});

describe('when a fault counts', () => {
  it('a damaging fault is counted and announced when injected; taken back, never', () => {
    const said: string[] = [];
    const c = new Chaos({ faults: { cut: 1 }, seed: 5 }, 'http', (m) => said.push(m));
    const v = c.decide('k', undefined, 'POST /v1/chat/completions')!;
    expect(v.fault).toBe('cut');
    expect(c.counts()).toEqual({});
    c.undo(v.call, 'cut');
    expect(said).toEqual([]);
    const w = c.decide('k', undefined, 'POST /v1/chat/completions')!;
    c.injected(w.fault!, 'POST /v1/chat/completions');
    expect(c.counts()).toEqual({ cut: 1 });
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('first fault injected (cut on POST /v1/chat/completions) with seed 5');
  });

  it('a realtime close counts once injected into a recorded session; taken back (no session, a live one), never', () => {
    const c = new Chaos({ faults: { close: 1 }, seed: 1 }, 'realtime', quiet);
    c.decide('s');
    expect(c.counts()).toEqual({});
    c.undo('s', 'close');
    c.undo('s', 'close');
    expect(c.counts()).toEqual({});
    c.decide('s');
    c.injected('close');
    expect(c.counts()).toEqual({ close: 1 });
  });

  it('a status fault taken back is uncounted once', () => {
    const c = new Chaos({ faults: { 503: 1 }, seed: 1 }, 'http', quiet);
    c.decide('k');
    expect(c.counts()).toEqual({ 503: 1 });
    c.undo('k', '503');
    c.undo('k', '503');
    expect(c.counts()).toEqual({});
  });
});

describe('the retry counters SDKs send', () => {
  it('reads x-stainless-retry-count and amz-sdk-request; anything else is no count', () => {
    expect(clientRetries({ 'x-stainless-retry-count': '0' })).toBe(0);
    expect(clientRetries({ 'x-stainless-retry-count': '2' })).toBe(2);
    expect(clientRetries({ 'amz-sdk-request': 'attempt=1; max=3' })).toBe(0);
    expect(clientRetries({ 'amz-sdk-request': 'attempt=3; max=3' })).toBe(2);
    expect(clientRetries({ 'amz-sdk-request': ['attempt=2; max=4'] })).toBe(1);
    for (const headers of [{}, { 'x-stainless-retry-count': 'x' }, { 'x-stainless-retry-count': '-1' }, { 'amz-sdk-request': 'attempt=0; max=3' }, { 'amz-sdk-request': 'max=3' }]) expect(clientRetries(headers), JSON.stringify(headers)).toBeUndefined();
  });
});
