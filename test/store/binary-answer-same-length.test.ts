// Binary answers (audio, images, PDFs, octet-stream) holding credential-looking ASCII (a signed
// URL in an mp3's ID3 frame or a PNG's tEXt chunk, a key in a PDF) keep their length on the
// tape: each masked span is filled to its own length, so the file's internal lengths stay valid,
// and the secret never reaches the disk.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-binary-answer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const filler = Buffer.alloc(2048);
for (let i = 0; i < filler.length; i++) filler[i] = (i * 151 + 7) & 255;

const TOKEN = '9f8e7d6c5b4a39281706aa';
const SIG = 'Zm9vYmFyYmF6cXV4cXV1eA';
const KEY = 'sk-proj-abcdefghijklmnopqrstuvwxABCD1234';

// An mp3 whose ID3 WXXX frame holds a signed CDN URL (the frame size counts its bytes).
const url = `https://cdn.example.com/tts/clip.mp3?token=${TOKEN}&expires=1767225600`;
const wxxx = Buffer.concat([Buffer.from('WXXX'), Buffer.from([0, 0, 0, url.length + 1, 0, 0, 0]), Buffer.from(url)]);
const mp3 = Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, wxxx.length]), wxxx, Buffer.from([0xff, 0xfb, 0x90, 0x64]), filler]);
// A PNG whose tEXt chunk names its signed source URL.
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from(`\x00\x00\x00\x40tEXtSource\x00https://storage.example.com/img.png?X-Goog-Signature=abcdef0123456789abcdef&sig=${SIG}`, 'latin1'), filler]);
// A file with no content type at all (sniffed as binary) holding a key after a bearer scheme.
const raw = Buffer.concat([filler.subarray(0, 100), Buffer.from(`Authorization: Bearer ${KEY}\n`), filler]);

const answers: Record<string, [string | undefined, Buffer]> = {
  '/v1/audio/speech': ['audio/mpeg', mp3],
  '/v1/files/file-png/content': ['image/png', png],
  '/v1/files/file-raw/content': [undefined, raw],
};

function tapeBytes(path: string): Buffer {
  // The tape and anything written beside it (a writers directory): no secret anywhere.
  const out: Buffer[] = [readFileSync(path)];
  const walk = (p: string): void => {
    for (const n of readdirSync(p)) {
      const f = join(p, n);
      if (statSync(f).isDirectory()) walk(f);
      else out.push(readFileSync(f));
    }
  };
  for (const n of readdirSync(dir)) if (n.startsWith('bin.tape') && n !== 'bin.tape' && statSync(join(dir, n)).isDirectory()) walk(join(dir, n));
  return Buffer.concat(out);
}

describe('binary answers redacted', () => {
  it('replay serves a file of the recorded length, every byte outside the masked spans kept, the secrets masked', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const [ct, b] = answers[new URL(req.url!, 'http://x').pathname]!;
        res.writeHead(200, ct === undefined ? {} : { 'content-type': ct });
        res.end(b);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
    const tape = join(dir, 'bin.tape');
    const run = async (mode: 'record' | 'replay') => {
      const fetch = createFetch({ tape, mode });
      const c = new OpenAI({ apiKey: 'sk-x', baseURL: base, fetch, maxRetries: 0 });
      try {
        return {
          mp3: Buffer.from(await (await c.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' })).arrayBuffer()),
          png: Buffer.from(await (await c.files.content('file-png')).arrayBuffer()),
          raw: Buffer.from(await (await c.files.content('file-raw')).arrayBuffer()),
        };
      } finally {
        await fetch.close();
      }
    };
    const recorded = await run('record');
    server.close();
    server.closeAllConnections();
    const replayed = await run('replay');

    const originals = { mp3, png, raw };
    // A bearer token is masked with its scheme (`Bearer sk-…` is one credential to the redactor).
    const secrets = { mp3: [TOKEN], png: [SIG, 'abcdef0123456789abcdef'], raw: [`Bearer ${KEY}`] };
    for (const k of ['mp3', 'png', 'raw'] as const) {
      expect(recorded[k].equals(originals[k])).toBe(true);
      const got = replayed[k];
      expect(got.length, k).toBe(originals[k].length);
      for (const s of secrets[k]) expect(got.includes(s), `${k} still holds ${s}`).toBe(false);
      // Only the secrets' bytes changed: the rest of the file (headers, frames, filler) is as recorded.
      const spans = secrets[k].map((s) => [originals[k].indexOf(s), originals[k].indexOf(s) + s.length] as const);
      for (let i = 0; i < got.length; i++) if (!spans.some(([a, b]) => i >= a && i < b)) expect(got[i], `${k} byte ${i}`).toBe(originals[k][i]);
    }
    const disk = tapeBytes(tape);
    for (const s of [TOKEN, SIG, KEY]) expect(disk.includes(s), `${s} on disk`).toBe(false);
  });
});

describe('same-length masking falls back to the redactor', () => {
  it('keeps the redactor\'s output for a text answer, and when the filled file would still be changed', async () => {
    const { sameLengthRedaction } = await import('../../src/store/binary-answer.ts');
    const { redactor } = await import('../../src/store/redact.ts');
    const r = redactor({ salt: new Uint8Array(16).fill(7) });
    const text = Buffer.from(`see https://cdn.example.com/a.mp3?token=${TOKEN}&x=1 for the file`);
    const red = r.bytes(text, 'text/plain');
    expect(red.length).not.toBe(text.length);
    expect(sameLengthRedaction(text, red, 'text/plain', (b) => r.bytes(b, 'text/plain'))).toBe(red);
    const redMp3 = r.bytes(mp3, 'audio/mpeg');
    const same = sameLengthRedaction(mp3, redMp3, 'audio/mpeg', (b) => r.bytes(b, 'audio/mpeg'));
    expect(same.length).toBe(mp3.length);
    expect(Buffer.from(same).includes(TOKEN)).toBe(false);
    // A redactor that would change the filled file again: its own output is kept, the secret masked.
    const never = sameLengthRedaction(mp3, redMp3, 'audio/mpeg', (b) => new Uint8Array(b));
    expect(never).toBe(redMp3);
    expect(Buffer.from(never).includes(TOKEN)).toBe(false);
  });
});
