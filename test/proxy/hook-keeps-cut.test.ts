// A beforeReplay hook that edits an event of a cut stream: the stream is still cut (the client
// gets the edited events, then the error a dropped connection gives), through createFetch and
// the proxy, with the real OpenAI SDK.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { startProxy } from '../../src/proxy/server.ts';
import type { RecordingHook } from '../../src/store/hooks.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-hook-cut-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const URL_ = 'https://api.openai.com/v1/chat/completions';
const body = { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user' as const, content: 'cut me' }] };
const chunk = (delta: object) => ({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: null }] });

// The docs' kind of beforeReplay: rewrites text inside the stream's deltas.
const upper: RecordingHook = (rec) => {
  for (const e of rec.response.events ?? []) {
    const d = e.data as { choices?: { delta?: { content?: string } }[] };
    const c = d?.choices?.[0]?.delta;
    if (c && typeof c.content === 'string') c.content = c.content.toUpperCase();
  }
  return rec;
};

async function readAll(client: OpenAI): Promise<{ text: string; err: unknown }> {
  const s = await client.chat.completions.create(body);
  let text = '';
  const err = await (async () => {
    for await (const ch of s) text += ch.choices[0]?.delta.content ?? '';
  })().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { text, err };
}

describe('beforeReplay on a cut stream', () => {
  it('keeps the cut: the edited events arrive, then the dropped connection (createFetch and the proxy)', async () => {
    const tape = join(dir, 'cut.tape');
    await addRecordings({ tape }, [{ request: { url: URL_, body }, response: { cut: true, events: [{ data: chunk({ role: 'assistant', content: '' }) }, { data: chunk({ content: 'Half an answ' }) }] } }]);
    const f = createFetch({ tape, mode: 'replay', beforeReplay: upper });
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, beforeReplay: upper });
    try {
      for (const client of [new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 }), new OpenAI({ apiKey: 'replay', baseURL: `${proxy.url}/v1`, maxRetries: 0 })]) {
        const { text, err } = await readAll(client);
        expect(text).toBe('HALF AN ANSW');
        expect(err).toBeInstanceOf(Error);
      }
    } finally {
      await f.close();
      await proxy.close();
    }
  });
});
