// The closest recording a miss names, on every client and method: each client records a plain
// "Hi", a plain "Tell me a story" and (for streaming methods) the same story streamed, in that
// order, then asks for a changed story with the method under test. The closest recording must be
// the story sent the same way (same stream flag), so the miss says only that the text differs,
// with the two stories as excerpts: not "Hi" because it was recorded first, not the plain story
// for a streamed call. Each client is the real SDK from npm (openai-python's requests are sent
// byte for byte as that SDK sends them), through createFetch and through the proxy.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream } from './fake-upstream.ts';
import { clients } from './sdk-clients.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ranking-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STORY = 'Tell me a story';
const CHANGED = 'Tell me a story about a dragon';

/** The miss body the client got (long or short, whatever the SDK made of it). */
interface MissBody {
  error: { message: string; tapedeck: { difference: string; kind: string } };
}

/** A fetch that keeps the body of each miss before the SDK reads it. */
function keepingMisses(f: typeof fetch, misses: MissBody[]): typeof fetch {
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await f(input, init);
    if (res.headers.get('x-tapedeck-match') === 'miss') misses.push((await res.clone().json()) as MissBody);
    return res;
  }) as typeof fetch;
}

describe.each(clients)('$name', (client) => {
  const tape = join(dir, `${client.name.replace(/\W+/g, '-')}.tape`);
  const sent = client.streams ? [false, true] : [false];

  beforeAll(async () => {
    const upstream = await startUpstream({ gapMs: 0 });
    const rec = createFetch({ tape, mode: 'record' });
    try {
      await client.call(rec, upstream.url, 'Hi', false);
      await client.call(rec, upstream.url, STORY, false);
      if (client.streams) await client.call(rec, upstream.url, STORY, true);
    } finally {
      await rec.close();
      await upstream.close();
    }
  });

  it.each(['createFetch', 'proxy'] as const)('through %s: the closest recording is the story sent the same way', async (via) => {
    const proxy = via === 'proxy' ? await startProxy({ tape, mode: 'replay', port: 0 }) : undefined;
    const play = via === 'createFetch' ? createFetch({ tape, mode: 'replay' }) : undefined;
    try {
      for (const streamed of sent) {
        const how = streamed ? 'streamed' : 'plain';
        const misses: MissBody[] = [];
        const f = keepingMisses(play ?? fetch, misses);
        // createFetch on the host the tape was recorded for (a loopback host's port is not compared).
        const err = await client.call(f, proxy?.url ?? 'http://127.0.0.1:9', CHANGED, streamed).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, `${how} call did not fail`).toBeInstanceOf(Error);
        expect(misses, how).toHaveLength(1);
        const { message, tapedeck } = misses[0]!.error;
        // Only the text differs from the closest recording: not "(and 1 more difference)", which
        // a recording sent the other way (stream or not) adds.
        expect(tapedeck.difference, how).toMatch(/^message \d \(user\) text differs from the closest recording$/);
        expect(message, how).toMatch(/request: +"Tell me a story about a dragon"/);
        expect(message, how).toMatch(/recording: +"Tell me a story"/);
      }
    } finally {
      await proxy?.close();
      await play?.close();
    }
  });
});

