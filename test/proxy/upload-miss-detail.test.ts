// An upload's miss said only "part "file" has other part headers" for a renamed file, and for a
// changed text file (a batch JSONL) only that it was another file, with both sizes. It now names
// the filename's two values, or the header that differs, and for a text file the line where the
// two part and what each holds there.
import { describe, expect, it } from 'vitest';
import { normalizeBody } from '../../src/store/http-body.ts';
import { redactor } from '../../src/store/redact.ts';
import { uploadDifference } from '../../src/proxy/upload-difference.ts';

const r = redactor({ salt: new Uint8Array(16).fill(5) });

async function keyed(file: Blob, name: string, fields: Record<string, string> = { model: 'whisper-1' }): Promise<Uint8Array> {
  const form = new FormData();
  form.append('file', file, name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const req = new Request('http://x/', { method: 'POST', body: form });
  return normalizeBody({ 'content-type': req.headers.get('content-type')! }, new Uint8Array(await req.arrayBuffer()), r).bytes;
}

describe('upload misses', () => {
  it('name the filename that changed, with both values', async () => {
    const wav = new Blob([new Uint8Array([0x52, 0x49, 0x46, 0x46, 0, 1, 2, 255])], { type: 'audio/wav' });
    expect(uploadDifference(await keyed(wav, 'd2.wav'), [await keyed(wav, 'd.wav')])).toBe('part "file" has other part headers than the closest recording\'s: filename "d2.wav" here, "d.wav" there');
  });

  it('name another part header that changed', async () => {
    const a = await keyed(new Blob(['RIFF'], { type: 'audio/x-wav' }), 'd.wav');
    const b = await keyed(new Blob(['RIFF'], { type: 'audio/wav' }), 'd.wav');
    expect(uploadDifference(a, [b])).toBe('part "file" has other part headers than the closest recording\'s: "Content-Type: audio/x-wav" here, "Content-Type: audio/wav" there');
  });

  it('say where two text files part', async () => {
    const line = (country: string) => JSON.stringify({ custom_id: 'b', method: 'POST', url: '/v1/chat/completions', body: { messages: [{ role: 'user', content: `Capital of ${country}?` }] } });
    const first = JSON.stringify({ custom_id: 'a', body: { input: 'x' } });
    const mine = await keyed(new Blob([`${first}\n${line('Spain')}\n`], { type: 'application/jsonl' }), 'batch.jsonl', { purpose: 'batch' });
    const theirs = await keyed(new Blob([`${first}\n${line('France')}\n`], { type: 'application/jsonl' }), 'batch.jsonl', { purpose: 'batch' });
    const d = uploadDifference(mine, [theirs])!;
    expect(d).toMatch(/^part "file" \("batch\.jsonl", [\d,]+ bytes\) is another file than the closest recording's \("batch\.jsonl", [\d,]+ bytes\): line 2 differs at character \d+: ".*Spain.*" here, ".*France.*" there$/);
    expect(d).not.toContain('\n');
  });
});
