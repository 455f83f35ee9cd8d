// The caller's abort through createFetch ends an answer's body as it ends fetch's own: the next
// read rejects with the abort's reason, in replay (every timing) and in record mode, where the
// answer is still read to the end and recorded. An SDK's "stop generating" must stop a replayed
// stream, not run it to the end.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-abort-'));
const tape = join(dir, 'abort.tape');
let up: Upstream;

const body = (text: string) => JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: text }] });
const post = (text: string, signal?: AbortSignal): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: body(text), ...(signal ? { signal } : {}) });
const decoder = new TextDecoder();

/** Reads a body to its end; the chunks' text. */
async function readAll(res: Response): Promise<string> {
  return decoder.decode(new Uint8Array(await res.arrayBuffer()));
}

beforeAll(async () => {
  up = await startUpstream({ gapMs: 5 });
  // Recorded whole first, for the replays below (on the same host: a replay sends nothing there).
  const f = createFetch({ tape, mode: 'record', summary: false });
  try {
    for (const text of ['a slow story', 'another slow story']) expect(await readAll(await f(`${up.url}/v1/chat/completions`, post(text)))).toContain('data: [DONE]');
  } finally {
    await f.close();
  }
});

afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('createFetch: the caller aborts a replayed stream', () => {
  for (const timing of ['none', 'recorded', 1] as const) {
    it(`rejects the next read with the abort's reason (timing ${timing})`, async () => {
      const f = createFetch({ tape, mode: 'replay', timing, summary: false });
      try {
        const ac = new AbortController();
        const res = await f(`${up.url}/v1/chat/completions`, post('a slow story', ac.signal));
        expect(res.headers.get('x-tapedeck-match')).toBe('exact');
        const reader = res.body!.getReader();
        const first = await reader.read();
        expect(first.done).toBe(false);
        // One event, not the whole answer at once: the stream comes a chunk at a time.
        expect(decoder.decode(first.value)).not.toContain('[DONE]');
        ac.abort();
        await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
      } finally {
        await f.close();
      }
    });
  }

  it('stops the OpenAI SDK at the abort: no chunk after it', async () => {
    const f = createFetch({ tape, mode: 'replay', timing: 'recorded', summary: false });
    try {
      const client = new OpenAI({ apiKey: 'sk-unused', baseURL: `${up.url}/v1`, fetch: f, maxRetries: 0 });
      const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'a slow story' }] });
      let after = 0;
      let aborted = false;
      // The SDK ends the loop quietly when its own controller aborted (an abort error it did
      // not cause would be raised).
      for await (const _ of stream) {
        if (aborted) after++;
        else {
          aborted = true;
          stream.controller.abort();
        }
      }
      expect(aborted).toBe(true);
      expect(after).toBe(0);
    } finally {
      await f.close();
    }
  });

  it('rejects a call whose signal is aborted already, as fetch does', async () => {
    const f = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const ac = new AbortController();
      ac.abort();
      await expect(f(`${up.url}/v1/chat/completions`, post('a slow story', ac.signal))).rejects.toMatchObject({ name: 'AbortError' });
      // The recording was not used up: a call without the abort gets it.
      expect(await readAll(await f(`${up.url}/v1/chat/completions`, post('a slow story')))).toContain('[DONE]');
    } finally {
      await f.close();
    }
  });

  it('leaves no abort listener on a signal shared by many calls', async () => {
    const f = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const ac = new AbortController();
      let added = 0;
      let removed = 0;
      const add = ac.signal.addEventListener.bind(ac.signal);
      const remove = ac.signal.removeEventListener.bind(ac.signal);
      ac.signal.addEventListener = ((...a: Parameters<typeof add>) => (added++, add(...a))) as typeof add;
      ac.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (removed++, remove(...a))) as typeof remove;
      // What a Request made with the signal leaves on it by itself (undici's own listener,
      // dropped when the Request is collected), for 3 calls.
      for (let i = 0; i < 3; i++) new Request('http://api.test/', { signal: ac.signal });
      const requests = added - removed;
      for (let i = 0; i < 3; i++) expect(await readAll(await f(`${up.url}/v1/chat/completions`, post('another slow story', ac.signal)))).toContain('[DONE]');
      // Each call's body listened (a listener of its own beyond its Request's) and let go.
      expect(added).toBeGreaterThanOrEqual(2 * requests + 3);
      expect(added - removed).toBe(2 * requests);
    } finally {
      await f.close();
    }
  });
});

describe('createFetch: the caller aborts a stream being recorded', () => {
  it('rejects its next read, and the whole answer is still recorded', async () => {
    const t = join(dir, 'record-abort.tape');
    const f = createFetch({ tape: t, mode: 'record', summary: false });
    const ac = new AbortController();
    try {
      const res = await f(`${up.url}/v1/chat/completions`, post('a slow story to stop', ac.signal));
      expect(res.headers.get('x-tapedeck-match')).toBe('recording');
      const reader = res.body!.getReader();
      expect((await reader.read()).done).toBe(false);
      ac.abort();
      await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      await f.close();
    }
    const r = createFetch({ tape: t, mode: 'replay', summary: false });
    try {
      const res = await r(`${up.url}/v1/chat/completions`, post('a slow story to stop'));
      expect(res.headers.get('x-tapedeck-match')).toBe('exact');
      const text = await readAll(res);
      expect(text).toContain('stop ');
      expect(text).toContain('data: [DONE]');
    } finally {
      await r.close();
    }
  });
});
