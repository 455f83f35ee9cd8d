// Which records go when the run summary prunes a realtime session (src/realtime/usage-mark.ts):
// its head (by its mark, as any recording), its parts, and the audio only its parts refer to;
// audio a kept session refers to too stays, as do other sessions' parts.
import { describe, expect, it } from 'vitest';
import { realtimeUsageMark, sessionRemains } from '../../src/realtime/usage-mark.ts';
import type { RealtimeFrame, RealtimeRecord } from '../../src/store/records.ts';

const base = (key: string) => ({ v: 1 as const, kind: 'realtime' as const, key, keyVersion: 1, recordedAt: '' });
const head = (sid: string): RealtimeRecord => ({ ...base('k'), role: 'session', sid, provider: 'gemini', url: '/ws/x', protocols: [] });
const part = (sid: string, n: number, frames: RealtimeFrame[]): RealtimeRecord => ({ ...base(`${sid}/${n}`), role: 'part', sid, n, frames });
const blob = (d: string): RealtimeRecord => ({ ...base(`blob:${d}`), role: 'blob', data: new Uint8Array([1]) });
const said = (...blobs: string[]): RealtimeFrame => ({ ms: 0, text: '{}', blobs });
const heard = (d: string): RealtimeFrame => ({ ms: 0, c: 1, key: 'a', audio: { stream: 's', blob: d, bytes: 1, chunks: 1 } });

describe('sessionRemains', () => {
  it("gives a stale session's parts and the audio only they refer to, never a kept session's", () => {
    const values = [blob('shared'), blob('mine'), blob('heard'), head('a'), part('a', 0, [heard('heard'), said('shared', 'mine')]), head('b'), part('b', 0, [said('shared')]), part('a', 1, [said('mine')]), { kind: 'http' }, undefined];
    expect(sessionRemains(values, new Set([realtimeUsageMark({ sid: 'a' })]))).toEqual([1, 2, 4, 7]);
    expect(sessionRemains(values, new Set([realtimeUsageMark({ sid: 'b' })]))).toEqual([6]);
    expect(sessionRemains(values, new Set())).toEqual([]);
  });
});
