// createFetch over a tape read from its file (src/store/tape-lazy.ts; large tapes take that path,
// here every tape does): the recorded answers come back exactly, a miss is diagnosed from the
// recorded requests read from the file, and the file is closed with the fetch.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { expectOpen } from '../open-files.ts';
import { lazyTape } from '../../src/store/backends/tape.ts';

const root = mkdtempSync(join(tmpdir(), 'tapedeck-lazy-fetch-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const defaultMin = lazyTape.min;
afterEach(() => {
  lazyTape.min = defaultMin;
});

const URL_ = 'https://api.openai.com/v1/chat/completions';
const body = (i: number) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${i}` }] });
const answer = (i: number) => ({ id: `chatcmpl-${i}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `answer ${i} ${'z'.repeat(i * 997)}` }, finish_reason: 'stop' }] });

describe('createFetch replaying a tape read from its file', () => {
  it('answers exactly as recorded, diagnoses a miss from the recorded requests, and closes the file', async () => {
    const tape = join(root, 'chat.tape');
    const upstream = async (input: unknown, init?: RequestInit) => {
      const sent = init?.body !== undefined ? Buffer.from(init.body as Uint8Array | string).toString() : await (input as Request).text();
      const i = Number(/question (\d+)/.exec(sent)![1]);
      return new Response(JSON.stringify(answer(i)), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const warnings: string[] = [];
    const rec = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: (w) => warnings.push(String(w)), summary: false });
    for (let i = 0; i < 40; i++) await (await rec(URL_, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: body(i) })).arrayBuffer();
    await rec.close();
    expect(warnings).toEqual([]);

    lazyTape.min = 0;
    const f = createFetch({ tape, mode: 'replay', onWarning: () => {}, summary: false });
    for (const i of [39, 0, 17, 3, 38]) {
      const r = await f(URL_, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(i) });
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual(answer(i));
    }
    expectOpen(tape, 1);
    const miss = await f(URL_, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(999) });
    expect(miss.status).not.toBe(200);
    const text = await miss.text();
    expect(text).toContain('E_MISS');
    expect(text).toContain('question 999');
    await f.close();
    expectOpen(tape, 0);
  });
});
