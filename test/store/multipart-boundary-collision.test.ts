// Multipart bodies are keyed rebuilt with one fixed boundary. A field holding that boundary's
// delimiter (`\r\n--tapedeck-normalized-boundary\r\n…`) read back as extra parts, so two different
// uploads could share one key and replay answered one with the other's recording. The boundary
// is now one that no part holds (the fixed one whenever it can be, so existing keys stay).
import { describe, expect, it } from 'vitest';
import { NORMALIZED_BOUNDARY, normalizeBody } from '../../src/store/http-body.ts';
import { redactor } from '../../src/store/redact.ts';
import { uploadDifference } from '../../src/proxy/upload-difference.ts';

const r = redactor({ salt: new Uint8Array(16).fill(3) });

async function multipart(fields: [string, string | Blob, string?][]): Promise<{ headers: Record<string, string>; body: Uint8Array }> {
  const form = new FormData();
  for (const [k, v, name] of fields) if (typeof v === 'string') form.append(k, v);
  else form.append(k, v, name);
  const req = new Request('http://x/', { method: 'POST', body: form });
  return { headers: { 'content-type': req.headers.get('content-type')! }, body: new Uint8Array(await req.arrayBuffer()) };
}

const text = (b: Uint8Array) => Buffer.from(b).toString('latin1');

describe('multipart normalization', () => {
  const wav = new Blob(['RIFF....WAVEfmt audio bytes'], { type: 'audio/wav' });
  it('keys apart a field that holds the normalized boundary and the parts it imitates', async () => {
    const r1 = await multipart([['file', wav, 'a.wav'], ['model', 'whisper-1'], ['prompt', 'P'], ['language', 'en']]);
    const r2 = await multipart([['file', wav, 'a.wav'], ['model', 'whisper-1'], ['prompt', `P\r\n--${NORMALIZED_BOUNDARY}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen`]]);
    const n1 = normalizeBody(r1.headers, r1.body, r);
    const n2 = normalizeBody(r2.headers, r2.body, r);
    expect(Buffer.from(n1.bytes).equals(Buffer.from(n2.bytes))).toBe(false);
    // An ordinary upload keeps the fixed boundary: tapes recorded before key as they did.
    expect(text(n1.bytes).startsWith(`--${NORMALIZED_BOUNDARY}\r\n`)).toBe(true);
    // The same colliding upload sent again (another client boundary) keys alike.
    const again = await multipart([['file', wav, 'a.wav'], ['model', 'whisper-1'], ['prompt', `P\r\n--${NORMALIZED_BOUNDARY}\r\nContent-Disposition: form-data; name="language"\r\n\r\nen`]]);
    expect(Buffer.from(normalizeBody(again.headers, again.body, r).bytes).equals(Buffer.from(n2.bytes))).toBe(true);
    // A miss reads the parts with the boundary the text names: three parts, the prompt the one that differs.
    expect(uploadDifference(n2.bytes, [n1.bytes])).toMatch(/^part "prompt" is "P\\r\\n--tapedeck-normalized-boundary/);
    expect(uploadDifference(n1.bytes, [n2.bytes])).toMatch(/part "language" is not in the closest recording|part "prompt"/);
  });
});
