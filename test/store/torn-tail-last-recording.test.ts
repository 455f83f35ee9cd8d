// The last recording of a repeated request lost as a torn tail (a tape cut short: a partial copy,
// a crash mid-append) is E_TAPE_DAMAGED for the call it belonged to, as a flipped byte in the same
// record is: never the previous recording served again in its place.
import OpenAI from 'openai';
import { mkdtempSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-torn-last-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Pick a number' }] };
let n = 0;
/** The provider: a new completion id per call. */
const provider = (async () => {
  n++;
  const body = { id: `chatcmpl-${n}`, object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}`, refusal: null }, finish_reason: 'stop', logprobs: null }] };
  return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
}) as typeof fetch;

describe('a torn tail that held the last recording of a repeated request', () => {
  it('the call it belonged to gets E_TAPE_DAMAGED, the earlier calls their own answers', async () => {
    const tape = join(dir, 'rept.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: provider, summary: false });
    const client = new OpenAI({ apiKey: 'sk-test', fetch: rec, maxRetries: 0 });
    const recorded: string[] = [];
    for (let i = 0; i < 3; i++) recorded.push((await client.chat.completions.create(ask)).id);
    await rec.close();
    // Cut short inside the last record's frame.
    truncateSync(tape, statSync(tape).size - 40);
    const warnings: string[] = [];
    const f = createFetch({ tape, mode: 'replay', summary: false, onWarning: (m) => warnings.push(m) });
    const replay = new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 });
    expect((await replay.chat.completions.create(ask)).id).toBe(recorded[0]);
    expect((await replay.chat.completions.create(ask)).id).toBe(recorded[1]);
    const third = await replay.chat.completions.create(ask).then(
      (r) => r.id,
      (e: unknown) => e,
    );
    expect(third).toBeInstanceOf(OpenAI.APIError);
    expect((third as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect((third as InstanceType<typeof OpenAI.APIError>).message).toMatch(/E_TAPE_DAMAGED|is damaged/);
    await f.close();
  });

  it("another request's calls past its recordings are not blamed on the torn record", async () => {
    const tape = join(dir, 'two.tape');
    const other = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Say hello' }] };
    const rec = createFetch({ tape, mode: 'record', fetch: provider, summary: false });
    const client = new OpenAI({ apiKey: 'sk-test', fetch: rec, maxRetries: 0 });
    const hello = (await client.chat.completions.create(other)).id;
    await client.chat.completions.create(ask);
    await rec.close();
    // The tail holds the "Pick a number" recording, cut short past its leading fields.
    truncateSync(tape, statSync(tape).size - 40);
    const f = createFetch({ tape, mode: 'replay', summary: false, onWarning: () => {} });
    const replay = new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 });
    // "Say hello" asked twice: the second call gets its last recording again (past the last, the last again), as
    // it would on an intact tape; only the torn request's call is damaged.
    expect((await replay.chat.completions.create(other)).id).toBe(hello);
    expect((await replay.chat.completions.create(other)).id).toBe(hello);
    const torn = await replay.chat.completions.create(ask).then(
      (r) => r.id,
      (e: unknown) => e,
    );
    expect((torn as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    await f.close();
  });
});
