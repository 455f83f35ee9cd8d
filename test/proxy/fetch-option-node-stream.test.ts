// createFetch given node-fetch 2 as its `fetch` option (the fetch to record with, as the docs
// say to pass one): node-fetch 2 gives an answer's body as a Node stream, not a web one, and
// recording failed with "tapedeck proxy failed: up.body.getReader is not a function. This is a
// bug in tapedeck". Its answers are now read as the streams they are, a streamed one too.
// The real node-fetch, against the fake provider.
import { join } from 'node:path';
import nodeFetch from 'node-fetch';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('fetch-option-node-stream');

describe('createFetch({ fetch: node-fetch 2 })', () => {
  it('records a whole answer and a streamed one, then replays both', async () => {
    const tape = join(suite.dir, 'nf.tape');
    const call = (f: typeof fetch, text: string, stream: boolean) =>
      f(`${suite.upstream.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: text }] }),
      });
    const rec = createFetch({ tape, mode: 'record', fetch: nodeFetch as unknown as typeof fetch });
    const whole = await call(rec, 'whole answer', false);
    const wholeText = await whole.text();
    expect(whole.status, wholeText).toBe(200);
    expect(wholeText).toContain('whole answer');
    const streamed = await call(rec, 'streamed answer', true);
    const streamedText = await streamed.text();
    expect(streamed.status, streamedText).toBe(200);
    expect(streamedText).toContain('data: ');
    await rec.close();
    const calls = suite.upstream.calls.length;
    const replay = createFetch({ tape, mode: 'replay' });
    expect(await (await call(replay, 'whole answer', false)).text()).toBe(wholeText);
    expect(await (await call(replay, 'streamed answer', true)).text()).toBe(streamedText);
    await replay.close();
    expect(suite.upstream.calls.length).toBe(calls);
  });
});
