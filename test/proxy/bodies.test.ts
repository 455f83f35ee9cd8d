// Non-JSON and compressed request bodies: keyed by their (normalized) bytes, so an upload of
// another file is never answered with the transcript of the first; Content-Encoding undone
// before keying, the bytes forwarded as sent.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib';
import OpenAI, { toFile } from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { NORMALIZED_BOUNDARY, normalizeBody } from '../../src/store/http-body.ts';
import { redactor } from '../../src/store/redact.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bodies-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const tapePath = () => join(dir, `t${++seq}.tape`);

/** A multipart upload as an SDK sends it; fetch picks a new random boundary every time. */
function upload(file: string, extra: Record<string, string> = {}): FormData {
  const form = new FormData();
  form.append('model', 'whisper-1');
  for (const [k, v] of Object.entries(extra)) form.append(k, v);
  form.append('file', new Blob([file], { type: 'audio/wav' }), 'clip.wav');
  return form;
}

describe('multipart uploads', () => {
  it('replay of another file is a miss, never the first file\'s transcript; a new boundary still matches', async () => {
    const up = await startUpstream();
    const tape = tapePath();
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    const first = await fetch(`${rec.url}/v1/audio/transcriptions`, { method: 'POST', body: upload('RIFF first recording') });
    const recorded = await first.text();
    expect(first.status).toBe(200);
    await rec.close();
    // Matching by route alone only when asked for (when recording and replaying: it is part of the key).
    const routeTape = tapePath();
    const recRoute = await startProxy({ upstream: up.url, tape: routeTape, mode: 'record', port: 0, bodyMatch: 'route' });
    const routeAnswer = await (await fetch(`${recRoute.url}/v1/audio/transcriptions`, { method: 'POST', body: upload('RIFF first recording') })).text();
    await recRoute.close();
    await up.close();

    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const same = await fetch(`${play.url}/v1/audio/transcriptions`, { method: 'POST', body: upload('RIFF first recording') });
      expect(same.headers.get('x-tapedeck-match')).toBe('exact');
      expect(await same.text()).toBe(recorded);
      const other = await fetch(`${play.url}/v1/audio/transcriptions`, { method: 'POST', body: upload('RIFF another file entirely') });
      expect(other.status).toBe(400);
      expect(other.headers.get('x-tapedeck-match')).toBe('miss');
      expect(await other.text()).not.toContain('transcript 1');
    } finally {
      await play.close();
    }

    const loose = await startProxy({ tape: routeTape, mode: 'replay', port: 0, bodyMatch: 'route' });
    try {
      const other = await fetch(`${loose.url}/v1/audio/transcriptions`, { method: 'POST', body: upload('RIFF another file entirely') });
      expect(other.status).toBe(200);
      expect(await other.text()).toBe(routeAnswer);
    } finally {
      await loose.close();
    }
  });

  it('a miss on an upload names the part that differs from the closest recording (createFetch and the proxy)', async () => {
    const up = await startUpstream();
    const tape = tapePath();
    const wav = (n: number) => Buffer.from(`RIFF clip number ${n} `.repeat(50));
    const changed = Buffer.from(wav(2));
    changed[100] ^= 1;
    const rec = createFetch({ tape, mode: 'record' });
    try {
      const o = new OpenAI({ apiKey: 'sk-test', baseURL: `${up.url}/v1`, fetch: rec, maxRetries: 0 });
      await o.audio.transcriptions.create({ file: await toFile(wav(1), 'one.wav'), model: 'gpt-4o-transcribe' });
      await o.audio.transcriptions.create({ file: await toFile(wav(2), 'two.wav'), model: 'gpt-4o-transcribe' });
    } finally {
      await rec.close();
      await up.close();
    }
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const o = new OpenAI({ apiKey: 'sk-test', baseURL: `${up.url}/v1`, fetch: play, maxRetries: 0 });
      // two.wav edited: the file part, against two.wav's recording (same name and size), not one.wav's.
      await expect(o.audio.transcriptions.create({ file: await toFile(changed, 'two.wav'), model: 'gpt-4o-transcribe' })).rejects.toThrow(
        /^400 tapedeck miss: part "file" \("two\.wav", 950 bytes\) is another file than the closest recording's \("two\.wav", 950 bytes\)\nRe-record: createFetch\(\{ mode: 'record' \}\)/,
      );
      // The same file with another model: the field, with both values.
      await expect(o.audio.transcriptions.create({ file: await toFile(wav(1), 'one.wav'), model: 'whisper-1' })).rejects.toThrow(/tapedeck miss: part "model" is "whisper-1", the closest recording's "gpt-4o-transcribe"; re-record/);
    } finally {
      await play.close();
    }
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const o = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
      await expect(o.audio.transcriptions.create({ file: await toFile(wav(1), 'renamed.wav'), model: 'gpt-4o-transcribe' })).rejects.toThrow(/tapedeck miss: part "file" has other part headers than the closest recording's/);
    } finally {
      await proxy.close();
    }
  });

  it('normalization: boundary-independent, content-dependent, stored with the normalized boundary', async () => {
    const r = redactor();
    const enc = async (f: FormData) => {
      const req = new Request('http://x/', { method: 'POST', body: f });
      return { headers: { 'content-type': req.headers.get('content-type')! }, body: new Uint8Array(await req.arrayBuffer()) };
    };
    const a1 = await enc(upload('same bytes'));
    const a2 = await enc(upload('same bytes'));
    const b = await enc(upload('other bytes'));
    expect(a1.headers['content-type']).not.toBe(a2.headers['content-type']); // fetch chose two boundaries
    const na1 = normalizeBody(a1.headers, a1.body, r);
    const na2 = normalizeBody(a2.headers, a2.body, r);
    expect(Buffer.from(na1.bytes).equals(Buffer.from(na2.bytes))).toBe(true);
    expect(Buffer.from(na1.bytes).equals(Buffer.from(normalizeBody(b.headers, b.body, r).bytes))).toBe(false);
    expect(Buffer.from(na1.bytes).toString('latin1')).toContain(`--${NORMALIZED_BOUNDARY}--`);
    // A field order change is a different request.
    const swapped = new FormData();
    swapped.append('file', new Blob(['same bytes'], { type: 'audio/wav' }), 'clip.wav');
    swapped.append('model', 'whisper-1');
    const s = await enc(swapped);
    expect(Buffer.from(normalizeBody(s.headers, s.body, r).bytes).equals(Buffer.from(na1.bytes))).toBe(false);
  });

  it('plain text and binary bodies are keyed by their bytes too', async () => {
    const up = await startUpstream();
    const tape = tapePath();
    const f = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    const send = (ff: typeof fetch, body: Uint8Array | string, type: string) => ff(`${up.url}/v1/files`, { method: 'POST', headers: { 'content-type': type }, body });
    const a = await (await send(f, new Uint8Array([1, 2, 3, 4]), 'application/octet-stream')).text();
    const t = await (await send(f, 'hello text', 'text/plain')).text();
    await f.close();
    await up.close();
    const play = createFetch({ tape, mode: 'replay' });
    expect(await (await send(play, new Uint8Array([1, 2, 3, 4]), 'application/octet-stream')).text()).toBe(a);
    expect((await send(play, new Uint8Array([1, 2, 3, 5]), 'application/octet-stream')).status).toBe(400);
    expect(await (await send(play, 'hello text', 'text/plain')).text()).toBe(t);
    expect((await send(play, 'hello other', 'text/plain')).status).toBe(400);
    await play.close();
  });
});

describe('an upload through the OpenAI SDK on createFetch', () => {
  // Before an upload the SDK fetches 'data:,' through the fetch it was given (to find its
  // Response class): no API call, so neither a recording nor a miss.
  const transcribe = async (f: typeof fetch, url: string) => {
    const client = new OpenAI({ apiKey: 'sk-upload-test-0123456789abcdef', baseURL: `${url}/v1`, fetch: f, maxRetries: 0 });
    return (await client.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(Buffer.from('RIFF upload bytes'), 'clip.wav', { type: 'audio/wav' }) })).text;
  };

  it('records only the upload, and replays it with no miss; a data: URL is read as fetch reads it', async () => {
    const up = await startUpstream();
    const tape = tapePath();
    const rec = createFetch({ tape, mode: 'record' });
    let live: string;
    try {
      live = await transcribe(rec, up.url);
      expect(await (await rec('data:text/plain;base64,aGk=')).text()).toBe('hi');
    } finally {
      await rec.close();
      await up.close();
    }
    const records = (JSON.parse(await exportTapeJSON(tape)) as { records: { request: { method: string; url: string } }[] }).records;
    expect(records.map((r) => `${r.request.method} ${r.request.url}`)).toEqual(['POST /v1/audio/transcriptions']);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      // Nothing listens there now: the answer can only come from the tape.
      expect(await transcribe(play, up.url)).toBe(live);
      expect(await (await play('data:,plain')).text()).toBe('plain');
      expect((await play.stats()).misses).toBe(0);
    } finally {
      await play.close();
    }
  });
});

describe('Content-Encoding request bodies', () => {
  const body = JSON.stringify({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'compressed hello' }] });
  const codings: [string, (b: Buffer) => Buffer][] = [
    ['gzip', (b) => gzipSync(b)],
    ['br', (b) => brotliCompressSync(b)],
    ['deflate', (b) => deflateSync(b)],
  ];

  it('gzip, br and deflate JSON bodies are decoded before keying, forwarded as sent, and replay whatever the compression', async () => {
    for (const [coding, compress] of codings) {
      const up = await startUpstream();
      const tape = tapePath();
      const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
      const sent = compress(Buffer.from(body));
      const r = await fetch(`${rec.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': coding }, body: sent });
      expect(r.status, coding).toBe(200);
      const answer = await r.text();
      expect(answer).toContain('compressed hello');
      await rec.close();
      await up.close();
      // Forwarded as sent: the upstream got the compressed bytes and the header.
      expect(up.calls[0]!.headers['content-encoding']).toBe(coding);
      expect(up.calls[0]!.bytes.equals(sent)).toBe(true);
      // Stored decoded (so it is redacted and readable), with the header that says how it was sent.
      expect(readFileSync(tape).includes(Buffer.from('compressed hello'))).toBe(true);

      const play = await startProxy({ tape, mode: 'replay', port: 0 });
      try {
        const agains: [string, Buffer][] = [[coding, compress(Buffer.from(body))], ['gzip', gzipSync(Buffer.from(body), { level: 1 })]];
        for (const [enc, again] of agains) {
          const x = await fetch(`${play.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': enc }, body: again });
          expect(x.headers.get('x-tapedeck-match'), `${coding} -> ${enc}`).toBe('exact');
          expect(await x.text()).toBe(answer);
        }
        const plain = await fetch(`${play.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(plain.headers.get('x-tapedeck-match')).toBe('exact');
      } finally {
        await play.close();
      }
    }
  });

  it('a body that does not decode, or an unknown coding, is a 400 that says so', async () => {
    const tape = tapePath();
    const f = createFetch({ tape, mode: 'replay', onWarning: () => {} });
    const bad = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: 'not gzip at all' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-tapedeck-error')).toBe('E_REQUEST_ENCODING');
    const unknown = await f('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'zstd' }, body: 'xx' });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('zstd');
    // A small body that inflates past the body limit is refused, not decoded to the end.
    const bomb = gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x20));
    const tiny = createFetch({ tape, mode: 'replay', maxBodyBytes: 1024 * 1024, onWarning: () => {} });
    const big = await tiny('http://127.0.0.1:9/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: bomb });
    expect(big.status).toBe(413);
    expect(gunzipSync(bomb).length).toBe(4 * 1024 * 1024);
    await f.close();
    await tiny.close();
  });
});

describe('a form sent without its form content type', () => {
  // nock keeps no request headers, and fetch labels a string body text/plain: the text is still
  // a form that names its secret fields.
  const form = (password: string) => `user=ada&password=${password}&client_secret=CLIENTsecretXYZ123456789`;

  it('has its secret fields masked, keyed, whatever its content type says', () => {
    const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
    for (const headers of [{}, { 'content-type': 'text/plain;charset=UTF-8' }, { 'content-type': 'application/octet-stream' }]) {
      const a = normalizeBody(headers, Buffer.from(form('hunter2')), r);
      const stored = typeof a.stored === 'string' ? a.stored : Buffer.from(a.stored).toString('latin1');
      expect(stored).toMatch(/^user=ada&password=%5BREDACTED%3A[0-9a-f]+%5D&client_secret=%5BREDACTED%3A[0-9a-f]+%5D$/);
      expect(Buffer.from(a.bytes).toString('latin1')).not.toMatch(/hunter2|CLIENTsecret/);
      // Redaction never makes two requests one: another password keys differently, the same alike.
      expect(Buffer.from(normalizeBody(headers, Buffer.from(form('hunter3')), r).bytes).equals(Buffer.from(a.bytes))).toBe(false);
      expect(Buffer.from(normalizeBody(headers, Buffer.from(form('hunter2')), r).bytes).equals(Buffer.from(a.bytes))).toBe(true);
    }
    // Text that is no form keeps its bytes.
    const prose = 'The password is not here.';
    expect(Buffer.from(normalizeBody({ 'content-type': 'text/plain' }, Buffer.from(prose), r).bytes).toString()).toBe(prose);
  });

  it('recorded through createFetch as text/plain: the tape holds no secret, and the same form replays', async () => {
    const up = await startUpstream();
    const tape = tapePath();
    const rec = createFetch({ tape, mode: 'record' });
    let live: string;
    try {
      live = await (await rec(`${up.url}/v1/files`, { method: 'POST', body: form('hunter2') })).text();
    } finally {
      await rec.close();
      await up.close();
    }
    const bytes = readFileSync(tape).toString('latin1');
    expect(bytes).not.toContain('hunter2');
    expect(bytes).not.toContain('CLIENTsecret');
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await (await play(`${up.url}/v1/files`, { method: 'POST', body: form('hunter2') })).text()).toBe(live);
      const other = await play(`${up.url}/v1/files`, { method: 'POST', body: form('hunter3') });
      expect(other.headers.get('x-tapedeck-match')).toBe('miss');
      const why = await other.text();
      expect(why).toContain('tapedeck miss');
      expect(why).not.toContain('hunter');
    } finally {
      await play.close();
    }
  });
});
