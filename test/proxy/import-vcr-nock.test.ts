// VCR.py cassettes and nock recordings: a cassette written here in the exact layout VCR.py's
// YAML serializer writes (sorted keys, header lists, `body: { string }`, a gzip body as
// `!!binary`, `version: 1` last) from live calls to the loopback fake OpenAI API, and a
// recording made by nock's own recorder around the OpenAI SDK, import and replay through the
// SDK with the live answers. A cassette that still holds an API key comes out clean.
import OpenAI from 'openai';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';
import { answersOf, ENCODED, encodedAsk, expectStoredAsNative, httpPost, nativeAnswers, PLAIN, replayAnswers, startEncodingUpstream, STREAMED } from './import-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-vcr-'));
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

// ---- A VCR.py cassette, byte for byte as PyYAML's dump of VCR.py's cassette dict lays it out ----

/** PyYAML's single-quoted scalar: `'` doubled, folded at spaces past 80 columns (a fold reads back as one space). */
function singleQuoted(s: string, indent: number): string {
  const words = s.replace(/'/g, "''").split(' ');
  const lines: string[] = [];
  let line = '';
  for (const w of words) {
    if (line !== '' && indent + line.length + 1 + w.length > 80) {
      lines.push(line);
      line = w;
    } else line = line === '' ? w : `${line} ${w}`;
  }
  lines.push(line);
  return `'${lines.join(`\n${' '.repeat(indent)}`)}'`;
}

/** `!!binary |` with base64 in lines of 76, as Python's base64.encodebytes writes it. */
function binary(bytes: Uint8Array, indent: number): string {
  const b64 = Buffer.from(bytes).toString('base64');
  const lines = b64.match(/.{1,76}/g) ?? [''];
  return `!!binary |\n${lines.map((l) => `${' '.repeat(indent)}${l}`).join('\n')}`;
}

interface Interaction {
  method: string;
  uri: string;
  requestHeaders: Record<string, string>;
  requestBody: string | null;
  status: number;
  message: string;
  responseHeaders: Record<string, string>;
  /** Text, or bytes that are not UTF-8 (written as !!binary). */
  responseBody: string | Uint8Array;
}

const sorted = (h: Record<string, string>) => Object.entries(h).sort(([a], [b]) => (a < b ? -1 : 1));

/** The cassette text VCR.py writes for these interactions (keys sorted, `version: 1` last). */
function cassette(interactions: Interaction[]): string {
  const out = ['interactions:'];
  for (const x of interactions) {
    out.push('- request:');
    out.push(`    body: ${x.requestBody === null ? 'null' : singleQuoted(x.requestBody, 6)}`);
    out.push('    headers:');
    for (const [k, v] of sorted(x.requestHeaders)) out.push(`      ${k}:`, `      - ${singleQuoted(v, 8)}`);
    out.push(`    method: ${x.method}`, `    uri: ${x.uri}`);
    out.push('  response:', '    body:');
    // Text is a double-quoted scalar (JSON escapes are YAML's); bytes are !!binary.
    out.push(`      string: ${typeof x.responseBody === 'string' ? JSON.stringify(x.responseBody) : binary(x.responseBody, 8)}`);
    out.push('    headers:');
    for (const [k, v] of sorted(x.responseHeaders)) out.push(`      ${k}:`, `      - ${singleQuoted(v, 8)}`);
    out.push('    status:', `      code: ${x.status}`, `      message: ${x.message}`);
  }
  out.push('version: 1', '');
  return out.join('\n');
}

/** A request body as Python's json.dumps writes it (", " and ": " separators). */
const pyJson = (v: unknown): string => JSON.stringify(v).replace(/","/g, '", "').replace(/":/g, '": ').replace(/,\{/g, ', {').replace(/\},"/g, '}, "');

async function live(body: unknown): Promise<{ text: string; type: string }> {
  const r = await fetch(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { text: await r.text(), type: r.headers.get('content-type') ?? '' };
}

describe('VCR.py / pytest-recording cassettes', () => {
  it('a cassette with a gzip body as !!binary and a streamed answer imports and replays through the OpenAI SDK with the live answers', async () => {
    const plain = await live(PLAIN);
    const sse = await live(STREAMED);
    const headers = { Accept: 'application/json', Authorization: 'Bearer sk-proj-vcrSecretKey0123456789abcdef', 'Content-Type': 'application/json', 'User-Agent': 'OpenAI/Python 1.54.0' };
    const text = cassette([
      {
        method: 'POST',
        uri: `${upstream.url}/v1/chat/completions`,
        requestHeaders: headers,
        requestBody: pyJson(PLAIN),
        status: 200,
        message: 'OK',
        // As the API sends it: gzip, which VCR.py keeps as sent (bytes, so !!binary).
        responseHeaders: { 'Content-Encoding': 'gzip', 'Content-Type': plain.type, 'openai-processing-ms': '112' },
        responseBody: gzipSync(plain.text),
      },
      {
        method: 'POST',
        uri: `${upstream.url}/v1/chat/completions`,
        requestHeaders: headers,
        requestBody: pyJson(STREAMED),
        status: 200,
        message: 'OK',
        responseHeaders: { 'Content-Type': sse.type, 'Transfer-Encoding': 'chunked' },
        responseBody: sse.text,
      },
    ]);
    expect(text).toContain('string: !!binary |');
    const file = join(dir, 'test_chat.yaml');
    writeFileSync(file, text);
    const tape = join(dir, 'vcr.tape');
    const report = await importRecordings(file, tape);
    expect(report).toMatchObject({ format: 'VCR.py cassette', records: 2, streams: 1, routes: [{ provider: 'openai', route: 'POST /v1/chat/completions', records: 2 }] });
    const callsBefore = upstream.calls.length;
    expect(await replayAnswers(tape)).toEqual(answersOf(plain.text, sse.text));
    expect(upstream.calls.length).toBe(callsBefore);
  });

  it('the old pickled request body (!!python/object/new:_io.BytesIO) and !!python/unicode read as VCR.py reads them', async () => {
    const plain = await live(PLAIN);
    const body = Buffer.from(JSON.stringify(PLAIN)).toString('base64');
    const text = `interactions:
- request:
    body: !!python/object/new:_io.BytesIO
      state: !!python/tuple
      - !!binary |
        ${body}
      - 0
      - null
    headers:
      Content-Type:
      - !!python/unicode 'application/json'
    method: POST
    uri: ${upstream.url}/v1/chat/completions
  response:
    body:
      string: !!python/unicode ${JSON.stringify(plain.text)}
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
version: 1
`;
    const file = join(dir, 'old.yaml');
    writeFileSync(file, text);
    const tape = join(dir, 'old.tape');
    expect((await importRecordings(file, tape)).records).toBe(1);
    const f = (await import('../../src/proxy/fetch.ts')).createFetch({ tape, mode: 'replay' });
    const client = new OpenAI({ apiKey: 'x', baseURL: 'http://127.0.0.1:9/v1', fetch: f, maxRetries: 0 });
    expect((await client.chat.completions.create(PLAIN)).choices[0]!.message.content).toBe((JSON.parse(plain.text) as { choices: { message: { content: string } }[] }).choices[0]!.message.content);
    await f.close();
  });

  it('a cassette holding Authorization: Bearer sk-... and an api_key body member imports with neither on disk, and says how many it masked', async () => {
    const key = 'sk-proj-Zq8mN3vB7xK2pL9wR4tY6uI1oA5sD0fG';
    const bodyKey = 'sk-live-bodyKey-7Hj2Kl9Mn4Pq8Rs3Tv6Wx1Yz';
    const text = cassette([
      {
        method: 'POST',
        uri: 'https://api.example.com/v1/search',
        requestHeaders: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        requestBody: pyJson({ api_key: bodyKey, query: 'weather in Paris' }),
        status: 200,
        message: 'OK',
        responseHeaders: { 'Content-Type': 'application/json' },
        responseBody: '{"results": ["sunny"]}',
      },
    ]);
    const file = join(dir, 'secrets.yaml');
    writeFileSync(file, text);
    expect(text).toContain(key);
    expect(text).toContain(bodyKey);
    const tape = join(dir, 'secrets.tape');
    const report = await importRecordings(file, tape);
    expect(report.masked).toBe(2);
    const bytes = readFileSync(tape);
    expect(bytes.includes(key)).toBe(false);
    expect(bytes.includes(bodyKey)).toBe(false);
    expect(bytes.includes('Zq8mN3vB7xK2')).toBe(false);
    expect(bytes.includes('7Hj2Kl9Mn4')).toBe(false);
  });
});

describe('compressed answers in a cassette', () => {
  it('gzip, br and deflate bodies (!!binary, as VCR.py keeps them) are stored decoded, as a native recording of the same answers stores them, and replay exactly', async () => {
    const api = await startEncodingUpstream();
    try {
      for (const coding of ENCODED) await httpPost(`${api.url}/v1/chat/completions`, encodedAsk(coding), { 'accept-encoding': coding.split(' ')[0]! });
      const wire = (coding: string, text: string) => (coding.startsWith('br') ? brotliCompressSync(text) : coding.startsWith('deflate') ? deflateSync(text) : gzipSync(text));
      const text = cassette(
        ENCODED.map((coding) => ({
          method: 'POST',
          uri: `${api.url}/v1/chat/completions`,
          requestHeaders: { 'Content-Type': 'application/json' },
          requestBody: pyJson(encodedAsk(coding)),
          status: 200,
          message: 'OK',
          responseHeaders: { 'Content-Encoding': coding.split(' ')[0]!, 'Content-Type': 'application/json' },
          responseBody: wire(coding, api.answers.get(coding)!),
        })),
      );
      const file = join(dir, 'encoded.yaml');
      writeFileSync(file, text);
      const tape = join(dir, 'vcr-encoded.tape');
      expect((await importRecordings(file, tape)).records).toBe(ENCODED.length);
      await expectStoredAsNative(tape, await nativeAnswers(api.url, join(dir, 'vcr-encoded-native.tape')), api);
    } finally {
      await api.close();
    }
  });
});

/**
 * nock 15's interceptors (@mswjs/interceptors) call Promise.withResolvers, which Node 20 lacks
 * (it came in Node 22): the standard function, added only where it is missing.
 */
function withResolvers(): void {
  const P = Promise as unknown as { withResolvers?: () => unknown };
  P.withResolvers ??= () => {
    let resolve!: (v: unknown) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };
}

describe("nock's recorder", () => {
  it('a recording made by nock.recorder (output_objects) around the OpenAI SDK imports and replays with the live answers', async () => {
    withResolvers();
    const nock = (await import('nock')).default;
    nock.recorder.rec({ output_objects: true, dont_print: true, enable_reqheaders_recording: true });
    // Its own server: a connection the earlier tests' fetch keeps alive would bypass the recorder.
    const own = await startUpstream();
    let defs: unknown[];
    let plainText: string;
    let streamText: string;
    let streamId = '';
    try {
      const client = new OpenAI({ apiKey: 'sk-nock-secret-0123456789abcdefgh', baseURL: `${own.url}/v1`, maxRetries: 0 });
      const plain = await client.chat.completions.create(PLAIN);
      plainText = JSON.stringify(plain);
      streamText = '';
      for await (const c of await client.chat.completions.create(STREAMED)) {
        streamId ||= c.id;
        streamText += c.choices[0]?.delta.content ?? '';
      }
      // The recorder writes a definition once it has read the answer's copy: after the client did.
      for (let i = 0; i < 100 && nock.recorder.play().length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      defs = nock.recorder.play() as unknown[];
    } finally {
      nock.recorder.clear();
      nock.restore();
      await own.close();
    }
    expect(defs).toHaveLength(2);
    const file = join(dir, 'nock.json');
    writeFileSync(file, JSON.stringify(defs, null, 2));
    const tape = join(dir, 'nock.tape');
    const report = await importRecordings(file, tape);
    expect(report).toMatchObject({ format: 'nock recording', records: 2, streams: 1 });
    const plain = JSON.parse(plainText) as { id: string; choices: { message: { content: string } }[] };
    expect(await replayAnswers(tape)).toEqual({ plainId: plain.id, plain: plain.choices[0]!.message.content, streamId, stream: streamText });
    expect(readFileSync(tape).includes('sk-nock-secret')).toBe(false);
  });

  it('a request body that is not UTF-8 (nock keeps it as hex) is imported as its bytes and replays; text of hex digits stays text', async () => {
    withResolvers();
    const nock = (await import('nock')).default;
    const own = await startUpstream();
    const binary = Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x80, 0x81, 0x0a, 0x0d]);
    const hexText = 'deadbeef';
    // Text of hex digits whose bytes are not UTF-8 is told from such bytes by its content type.
    const post = (f: typeof fetch, body: Uint8Array | string) => f(`${own.url}/v1/files`, { method: 'POST', body, headers: { 'content-type': typeof body === 'string' ? 'text/plain' : 'application/octet-stream' } }).then((r) => r.text());
    let defs: { body: unknown }[];
    const live: string[] = [];
    nock.recorder.rec({ output_objects: true, dont_print: true, enable_reqheaders_recording: true });
    try {
      live.push(await post(fetch, binary), await post(fetch, hexText));
      for (let i = 0; i < 100 && nock.recorder.play().length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      defs = nock.recorder.play() as { body: unknown }[];
    } finally {
      nock.recorder.clear();
      nock.restore();
      await own.close();
    }
    // nock's own form: the bytes as hex, the text as it is.
    expect(defs.map((d) => d.body)).toEqual([binary.toString('hex'), hexText]);
    const file = join(dir, 'nock-binary.json');
    writeFileSync(file, JSON.stringify(defs, null, 2));
    const tape = join(dir, 'nock-binary.tape');
    expect((await importRecordings(file, tape)).records).toBe(2);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect([await post(play, binary), await post(play, hexText)]).toEqual(live);
      expect((await play.stats()).misses).toBe(0);
    } finally {
      await play.close();
    }
  });

  it('gzip, br and deflate answers (hex chunks as sent) are stored decoded, as a native recording of the same answers stores them, and replay exactly', async () => {
    withResolvers();
    const nock = (await import('nock')).default;
    const api = await startEncodingUpstream();
    try {
      let defs: { response: unknown }[];
      nock.recorder.rec({ output_objects: true, dont_print: true });
      try {
        for (const coding of ENCODED) await httpPost(`${api.url}/v1/chat/completions`, encodedAsk(coding), { 'accept-encoding': coding.split(' ')[0]! });
        for (let i = 0; i < 100 && nock.recorder.play().length < ENCODED.length; i++) await new Promise((r) => setTimeout(r, 10));
        defs = nock.recorder.play() as { response: unknown }[];
      } finally {
        nock.recorder.clear();
        nock.restore();
      }
      // nock's form of an encoded answer: its chunks as sent, hex each.
      expect(defs.map((d) => Array.isArray(d.response))).toEqual(ENCODED.map(() => true));
      const file = join(dir, 'nock-encoded.json');
      writeFileSync(file, JSON.stringify(defs, null, 2));
      const tape = join(dir, 'nock-encoded.tape');
      expect((await importRecordings(file, tape)).records).toBe(ENCODED.length);
      await expectStoredAsNative(tape, await nativeAnswers(api.url, join(dir, 'nock-encoded-native.tape')), api);
    } finally {
      await api.close();
    }
  });
});
