// `tapedeck scan` says re-recording a tape masks what it found. That must hold for the findings
// the users' trials made on tapes of the last release: a JSON body labelled as a form, a key as a
// JSON member's name, a key cut across an application/stream+json stream, a DurableReplayStore
// put. Each is recorded again with today's writers, and the scan of the new tape finds nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { DurableReplayStore } from '../../src/replay/durable.ts';
import { secretsInRecords } from '../../src/store/secret-scan.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-scan-hint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const X = 'xai-QWERTYUIOPASDFGHJKLZXCVBNM0123456789qwertyuiopasdfghjklzxcvbnm0123';
const G = 'gsk_ZXCVBNMASDFGHJKLQWERTYUIOP0123456789zxcvbnmasdfg';
const K = 'sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijkl';

/** An upstream answering JSON, or Cohere's v1 stream (the key 5 characters a line) for /v1/chat. */
const upstream = (async (input: string | URL | Request) => {
  const url = String(input instanceof Request ? input.url : input);
  if (!url.endsWith('/v1/chat')) return new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } });
  const lines = K.match(/.{1,5}/g)!.map((p) => `${JSON.stringify({ is_finished: false, event_type: 'text-generation', text: p })}\n`);
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const l of lines) c.enqueue(enc.encode(l));
      c.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'application/stream+json' } });
}) as typeof fetch;

const findings = async (tape: string) => secretsInRecords((await readTape(tape)).records);

describe('what scan found on the last release\'s tapes, recorded again', () => {
  it('through createFetch: nothing is found', async () => {
    const tape = join(dir, 'again.tape');
    const f = createFetch({ tape, mode: 'record', summary: false, fetch: upstream });
    const post = async (path: string, body: string, type: string) => (await f(`https://api.example.com${path}`, { method: 'POST', headers: { 'content-type': type }, body })).text();
    await post('/v1/chat/completions', JSON.stringify({ model: 'm', api_key: 'CURLBODYSECRET_1234567890abcdef', messages: [{ role: 'user', content: `key ${G}` }] }), 'application/x-www-form-urlencoded');
    await post('/v1/chat/completions', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }], metadata: { [X]: 1 } }), 'application/json');
    await post('/v1/chat', JSON.stringify({ message: 'repeat it', stream: true }), 'application/json');
    await f.close();
    expect(await findings(tape)).toEqual([]);
  });

  it('through DurableReplayStore: nothing is found', async () => {
    const tape = join(dir, 'replays.tape');
    const s = await DurableReplayStore.open(tape, { env: {} });
    await s.put({ documentId: 'doc', query: `my key is ${K}`, documentVersion: '1', model: 'm', systemPromptVersion: 'v', selectedIds: [], body: `{"answer":"${K}","api_key":"plainsecretvalue123XYZ"}` });
    await s.close();
    expect(await findings(tape)).toEqual([]);
  });
});
