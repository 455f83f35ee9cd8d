// A hook's view gives "text as text" (docs/hooks.md): a user trial found Ollama's NDJSON stream
// (application/x-ndjson) handed to beforeReplay as a Uint8Array, so a hook that edits text left
// it alone. Textual answers are text in the view, and a hook's changed text is what is served.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { httpView, responseFromView } from '../../src/store/hooks.ts';
import type { HttpRecord } from '../../src/store/records.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-hook-text-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const lines = ['{"message":{"role":"assistant","content":"Hel"},"done":false}\n', '{"message":{"role":"assistant","content":"lo"},"done":true}\n'];

/** A recorded answer of `type` with `text` as its body, in the chunks `parts` arrived in, 10 ms apart. */
function record(type: string, parts: string[]): Pick<HttpRecord, 'request' | 'response'> {
  const body = encoder.encode(parts.join(''));
  let end = 0;
  const chunks = parts.map((p, i): [number, number] => [i * 10, (end += encoder.encode(p).length)]);
  return {
    request: { method: 'POST', url: '/api/chat', headers: {}, body: { model: 'llama3.2' } },
    response: { status: 200, headers: { 'content-type': type }, body, ...(chunks.length > 1 ? { chunks } : {}) },
  };
}

describe('a hook sees a textual answer as text', () => {
  it.each([
    'application/x-ndjson',
    'application/ndjson',
    'application/jsonl',
    'application/x-jsonlines',
    'application/atom+xml',
    'application/xml',
    'application/javascript',
    'application/yaml',
    'text/plain; charset=utf-8',
  ])('%s is text in the view', (type) => {
    const view = httpView(record(type, ['line one\n', 'line two\n']));
    expect(view.response.body).toBe('line one\nline two\n');
  });

  it('bytes of another type stay bytes', () => {
    expect(httpView(record('application/octet-stream', ['\x00\x01'])).response.body).toBeInstanceOf(Uint8Array);
  });

  it("an NDJSON text a hook changed is served as that text, one line per chunk at the original chunks' times", () => {
    const rec = record('application/x-ndjson', lines);
    const before = httpView(rec);
    const after = httpView(rec);
    after.response.body = (after.response.body as string).replaceAll('Hel', 'HEL');
    const out = responseFromView(rec.response, before.response, after.response);
    expect(decoder.decode(out.body)).toBe(lines.join('').replaceAll('Hel', 'HEL'));
    expect(out.chunks).toEqual([
      [0, encoder.encode(lines[0]!.replace('Hel', 'HEL')).length],
      [10, out.body.length],
    ]);
    // Left alone, the bytes and chunk times are the recording's.
    expect(responseFromView(rec.response, before.response, httpView(rec).response)).toBe(rec.response);
  });

  it("beforeReplay edits an Ollama stream's text and the ollama SDK reads the edit", async () => {
    const tape = join(dir, 'ollama.tape');
    const body = { model: 'llama3.2', messages: [{ role: 'user' as const, content: 'Hi' }] };
    await addRecordings({ tape }, [{ request: { url: 'http://127.0.0.1:11434/api/chat', body }, response: { headers: { 'content-type': 'application/x-ndjson' }, body: lines.join('') } }]);
    const seen: unknown[] = [];
    const f = createFetch({
      tape,
      mode: 'replay',
      summary: false,
      beforeReplay: (r) => {
        seen.push(r.response.body);
        if (typeof r.response.body === 'string') r.response.body = r.response.body.replaceAll('Hel', 'HOOKED-');
      },
    });
    const ollama = new Ollama({ host: 'http://127.0.0.1:11434', fetch: f });
    let text = '';
    for await (const part of await ollama.chat({ ...body, stream: true })) text += part.message.content;
    await f.close();
    expect(seen).toEqual([lines.join('')]);
    expect(text).toBe('HOOKED-lo');
  });
});
