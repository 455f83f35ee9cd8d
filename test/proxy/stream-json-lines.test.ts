// Cohere's v1 chat stream is NDJSON labelled application/stream+json: it is redacted as a
// stream (a key cut across its lines masked), and not taken for a JSON document that fails to
// parse.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { answerFraming, checkedAnswer } from '../../src/store/records.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-stream-json-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const K = 'sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefghijkl';
const pieces = K.match(/.{1,5}/g)!;
const lines = [
  JSON.stringify({ is_finished: false, event_type: 'stream-start', generation_id: 'g1' }),
  ...pieces.map((p) => JSON.stringify({ is_finished: false, event_type: 'text-generation', text: p })),
  JSON.stringify({ is_finished: true, event_type: 'stream-end', finish_reason: 'COMPLETE', response: { text: 'done' } }),
].map((l) => `${l}\n`);

/** An upstream that streams the lines one chunk each, labelled as Cohere labels them. */
const upstream = (async () => {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const l of lines) c.enqueue(enc.encode(l));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'application/stream+json' } });
}) as typeof fetch;

describe('application/stream+json', () => {
  it('is a stream of lines, not a broken JSON document', () => {
    const response = { status: 200, headers: { 'content-type': 'application/stream+json' }, body: new TextEncoder().encode(lines.join('')) };
    expect(checkedAnswer(response).problem).toBeUndefined();
    expect(answerFraming(response)).toBe('ndjson');
  });

  it('has a key cut across its lines masked on the tape (createFetch)', async () => {
    const tape = join(dir, 'cohere-v1.tape');
    const f = createFetch({ tape, mode: 'record', summary: false, fetch: upstream });
    const r = await f('https://api.cohere.ai/v1/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'repeat it', stream: true }) });
    await r.text();
    await f.close();
    const raw = readFileSync(tape, 'latin1');
    const stored = pieces.filter((p) => raw.includes(`"text":"${p}"`));
    // The first piece holds the mask; none of the key's characters after it is left.
    expect(stored).toEqual([]);
    expect(raw.includes('"text":"sk-pr"')).toBe(false);
  });
});
