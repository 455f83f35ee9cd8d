// talkback tapes: recorded here by talkback itself (4.x, record mode NEW) proxying the real
// OpenAI and Anthropic SDKs to a loopback API on their wire format (JSON answers, event
// streams, a gzip JSON answer talkback stores decoded, a gzip event stream it stores as base64
// of the compressed bytes). The tape directory (or one tape of it) imports, and the same SDK
// calls replayed through createFetch get exactly the answers talkback recorded, without the
// API; the keys talkback wrote in clear are masked; a changed prompt is a miss. Bad tapes are
// E_IMPORT_ENTRY naming the directory, the tape and the field, kept out with --skip-bad.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import talkback from 'talkback';
import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { startWireUpstream, type WireUpstream } from './talkback-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-talkback-'));
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
/** The json5 package talkback writes its tapes with, to edit a tape as a user would. */
const JSON5 = createRequire(createRequire(import.meta.url).resolve('talkback'))('json5') as { parse(t: string): Record<string, unknown>; stringify(v: unknown, r: null, space: number): string };

const OPENAI_KEY = 'sk-proj-TalkbackOpenAIKey0123456789abcdefGHIJ';
const ANTHROPIC_KEY = 'sk-ant-api03-TalkbackAnthropicKey0123456789abcdefghijklmnop';

/** The calls every pass makes, in this order: one talkback tape each. */
const ASKS = [
  { sdk: 'openai', stream: false, text: 'Name a colour' },
  { sdk: 'openai', stream: true, text: 'Count to three' },
  { sdk: 'openai', stream: false, text: 'Answer with gzip' },
  { sdk: 'openai', stream: true, text: 'Stream with gzip' },
  { sdk: 'anthropic', stream: false, text: 'Say hello' },
  { sdk: 'anthropic', stream: true, text: 'Stream hello' },
] as const;
type Ask = (typeof ASKS)[number];

/** What the SDK gave for one call: the whole parsed answer, or every streamed event in order. */
async function call(ask: Pick<Ask, 'sdk' | 'stream' | 'text'>, baseURL: string, fetch?: typeof globalThis.fetch): Promise<unknown> {
  if (ask.sdk === 'openai') {
    const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${baseURL}/v1`, maxRetries: 0, ...(fetch ? { fetch } : {}) });
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: ask.text }] };
    if (!ask.stream) return client.chat.completions.create(body);
    const events: unknown[] = [];
    for await (const c of await client.chat.completions.create({ ...body, stream: true })) events.push(c);
    return events;
  }
  // This SDK sends its key as Authorization: Bearer; x-api-key as well, as the API documents it
  // (and older SDKs and curl send it).
  const client = new Anthropic({ apiKey: ANTHROPIC_KEY, defaultHeaders: { 'x-api-key': ANTHROPIC_KEY }, baseURL, maxRetries: 0, ...(fetch ? { fetch } : {}) });
  const body = { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content: ask.text }] };
  if (!ask.stream) return client.messages.create(body);
  const events: unknown[] = [];
  for await (const e of await client.messages.create({ ...body, stream: true })) events.push(e);
  return events;
}

let upstream: WireUpstream;
// Talkback recorded its tapes with the fake upstream as their host: createFetch replays them on
// that host (a loopback host's port is not compared), where nothing listens any more.
const REPLAYED_AT = 'http://127.0.0.1:9';
/** The directory talkback recorded to. */
const tapes = join(dir, 'tapes');
/** Each call's answer as the SDK got it through talkback, in ASKS order. */
const recorded: unknown[] = [];
/** The tape files talkback wrote, in name order (which is the order it recorded in). */
let files: string[] = [];

beforeAll(async () => {
  upstream = await startWireUpstream();
  const tb = talkback({ host: upstream.url, record: talkback.Options.RecordMode.NEW, path: tapes, port: 0, silent: true, summary: false });
  const server = await tb.start();
  if (!server.listening) await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    for (const ask of ASKS) recorded.push(await call(ask, url));
  } finally {
    await new Promise<void>((r) => tb.close(() => r()));
  }
  files = readdirSync(tapes).sort();
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A tape file as talkback wrote it, parsed with talkback's own JSON5. */
const tapeOf = (name: string, root = tapes) => JSON5.parse(readFileSync(join(root, name), 'utf8')) as { meta: Record<string, unknown>; req: Record<string, unknown>; res: { status?: number; headers: Record<string, string[]>; body: unknown } };

describe('the tapes talkback wrote', () => {
  it('are one JSON5 file per call (unnamed-<ms>.json5) holding the keys in clear, JSON answers as values, gzip JSON decoded, streams as base64', () => {
    expect(files).toHaveLength(ASKS.length);
    for (const f of files) expect(f).toMatch(/^unnamed-\d+\.json5$/);
    // JSON5, which JSON.parse does not read: the reason the import carries a JSON5 reader.
    expect(() => JSON.parse(readFileSync(join(tapes, files[0]!), 'utf8'))).toThrow();
    const t = files.map((f) => tapeOf(f));
    expect(t[0]!.req.headers).toMatchObject({ authorization: `Bearer ${OPENAI_KEY}` });
    expect(t[4]!.req.headers).toMatchObject({ 'x-api-key': ANTHROPIC_KEY, authorization: `Bearer ${ANTHROPIC_KEY}` });
    expect(t[0]!.meta).toMatchObject({ host: upstream.url, resHumanReadable: true, reqHumanReadable: true });
    expect(typeof t[0]!.res.body).toBe('object');
    expect(t[2]!.meta).toMatchObject({ resHumanReadable: true, resUncompressed: true });
    expect(t[2]!.res.headers['content-encoding']).toEqual(['gzip']);
    // An event stream is no type talkback reads as text: base64, still gzip for the gzip one.
    expect(t[1]!.meta.resHumanReadable).toBeUndefined();
    expect(Buffer.from(t[1]!.res.body as string, 'base64').toString('utf8')).toBe(upstream.sent[1]!.text);
    expect(t[3]!.res.headers['content-encoding']).toEqual(['gzip']);
    expect([...Buffer.from(t[3]!.res.body as string, 'base64').subarray(0, 2)]).toEqual([0x1f, 0x8b]);
  });
});

describe('importing the directory', () => {
  const tape = join(dir, 'talkback.tape');
  beforeAll(async () => {
    await importRecordings(tapes, tape);
  });

  it('reports its records, streams, routes and masked keys', async () => {
    const report = await importRecordings(tapes, join(dir, 'again.tape'));
    expect(report).toEqual({
      format: 'talkback tape directory',
      records: 6,
      streams: 3,
      routes: [
        { provider: 'openai', route: 'POST /v1/chat/completions', records: 4 },
        { provider: 'anthropic', route: 'POST /v1/messages', records: 2 },
      ],
      masked: 8,
      skipped: [],
    });
  });

  it('replays the same SDK calls through createFetch with exactly the answers talkback recorded, streams included, without the API', async () => {
    const before = upstream.calls.length;
    const f = createFetch({ tape, mode: 'replay' });
    try {
      for (const [i, ask] of ASKS.entries()) expect(await call(ask, REPLAYED_AT, f), `${ask.sdk} ${ask.text}`).toEqual(recorded[i]);
    } finally {
      await f.close();
    }
    expect(upstream.calls.length).toBe(before);
  });

  it('replays an event stream byte for byte as the API sent it (the gzip one decoded), and a JSON answer as its value', async () => {
    const f = createFetch({ tape, mode: 'replay' });
    try {
      for (const [i, sent] of upstream.sent.slice(0, ASKS.length).entries()) {
        const asked = upstream.calls[i]!;
        const r = await f(`${REPLAYED_AT}${asked.url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: asked.body });
        expect(r.headers.get('content-encoding')).toBeNull();
        const text = await r.text();
        if (sent.contentType.startsWith('text/event-stream')) expect(text, ASKS[i]!.text).toBe(sent.text);
        else expect(JSON.parse(text), ASKS[i]!.text).toEqual(JSON.parse(sent.text));
      }
    } finally {
      await f.close();
    }
  });

  it('stores the gzip answers readable, without their content-encoding, and the streams as streams', async () => {
    const doc = JSON.parse(await exportTapeJSON(tape, { review: true })) as { records: { request: { headers: Record<string, unknown> }; response: { headers: Record<string, unknown>; body: unknown; chunks?: unknown[] } }[] };
    expect(doc.records).toHaveLength(6);
    const [plainGzip, streamGzip] = [doc.records[2]!, doc.records[3]!];
    expect(plainGzip.response.headers['content-encoding']).toBeUndefined();
    expect(plainGzip.response.body).toMatchObject({ json: JSON.parse(upstream.sent[2]!.text) });
    expect(streamGzip.response.headers['content-encoding']).toBeUndefined();
    expect(JSON.stringify(streamGzip.response)).toContain('Stream with gzip');
    expect(doc.records.map((r) => Array.isArray(r.response.chunks) && r.response.chunks.length > 1)).toEqual(ASKS.map((a) => a.stream));
  });

  it('masks the Authorization and x-api-key talkback kept in clear', async () => {
    const bytes = readFileSync(tape);
    for (const secret of [OPENAI_KEY, ANTHROPIC_KEY, 'TalkbackOpenAIKey', 'TalkbackAnthropicKey']) expect(bytes.includes(secret), secret).toBe(false);
    const doc = JSON.parse(await exportTapeJSON(tape, { review: true })) as { records: { request: { headers: Record<string, string> } }[] };
    expect(doc.records[0]!.request.headers.authorization).toMatch(/^Bearer \[REDACTED(?::[0-9a-f]{16})?\]$|^\[REDACTED(?::[0-9a-f]{16})?\]$/);
    expect(doc.records[4]!.request.headers['x-api-key']).toMatch(/^\[REDACTED(?::[0-9a-f]{16})?\]$/);
    expect(doc.records[4]!.request.headers.authorization).toMatch(/^Bearer \[REDACTED(?::[0-9a-f]{16})?\]$|^\[REDACTED(?::[0-9a-f]{16})?\]$/);
  });

  it('a changed prompt is a miss, for either SDK, and nothing goes to the API', async () => {
    const before = upstream.calls.length;
    const f = createFetch({ tape, mode: 'replay' });
    try {
      for (const ask of [{ ...ASKS[0], text: 'Name a shape' }, { ...ASKS[5], text: 'Stream goodbye' }]) {
        const err = await call(ask, REPLAYED_AT, f).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, ask.text).toBeInstanceOf(Error);
        expect((err as Error).message, ask.text).toMatch(/tapedeck miss/);
      }
    } finally {
      await f.close();
    }
    expect(upstream.calls.length).toBe(before);
  });
});

describe('one tape file', () => {
  it('imports by its .json5 name, and by its shape under another name', async () => {
    const one = join(tapes, files[1]!);
    const byName = await importRecordings(one, join(dir, 'one.tape'));
    expect(byName).toMatchObject({ format: 'talkback tape', records: 1, streams: 1 });
    const renamed = join(dir, 'renamed.json');
    cpSync(one, renamed);
    expect(await importRecordings(renamed, join(dir, 'renamed.tape'))).toMatchObject({ format: 'talkback tape', records: 1, streams: 1 });
    const f = createFetch({ tape: join(dir, 'renamed.tape'), mode: 'replay' });
    try {
      expect(await call(ASKS[1], REPLAYED_AT, f)).toEqual(recorded[1]);
    } finally {
      await f.close();
    }
  });

  it('a tape cut short is E_IMPORT_PARSE naming the line and column, and nothing is written', async () => {
    const text = readFileSync(join(tapes, files[0]!), 'utf8');
    const cut = join(dir, 'cut.json5');
    writeFileSync(cut, text.slice(0, text.indexOf('res:')));
    const out = join(dir, 'cut', 'cut.tape');
    const err = await importRecordings(cut, out).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect(err).toMatchObject({ code: 'E_IMPORT_PARSE', details: { file: cut } });
    expect((err as Error).message).toMatch(/cut\.json5 is not a readable talkback tape: invalid JSON5 at line \d+, column \d+: .*\(the file ends early: truncated\?\)/);
    expect(existsSync(join(dir, 'cut'))).toBe(false);
  });
});

describe('hand-edited tapes', () => {
  /** A tape as a user edits one: comments, a trailing comma, no host (the path alone is kept). */
  const edited = (res: string, meta = '') => `// edited by hand
{
    meta: { createdAt: '2026-12-01T10:00:00.000Z', resHumanReadable: true, ${meta} },
    req: { url: '/v1/models', method: 'GET', headers: { accept: 'application/json' }, body: '' },
    res: ${res},
}
`;

  it('with comments and without meta.host import, a text answer as its text, at the time meta.createdAt says', async () => {
    const file = join(dir, 'edited.json5');
    writeFileSync(file, edited(`{ status: 200, headers: { 'content-type': ['text/plain'] }, /* the answer */ body: 'pong', }`));
    const out = join(dir, 'edited.tape');
    expect(await importRecordings(file, out)).toMatchObject({ records: 1, routes: [{ provider: 'http', route: 'GET /v1/models', records: 1 }] });
    const doc = JSON.parse(await exportTapeJSON(out, { review: true })) as { records: { recordedAt: string; response: { body: unknown } }[] };
    expect(doc.records[0]!.recordedAt).toBe('2026-12-01T10:00:00.000Z');
    const f = createFetch({ tape: out, mode: 'replay' });
    try {
      expect(await (await f('http://api.example.invalid/v1/models', { headers: { accept: 'application/json' } })).text()).toBe('pong');
    } finally {
      await f.close();
    }
  });

  it('an object body under a content type that is not JSON, and a host that is no URL, are bad entries naming the field', async () => {
    const cases: [string, string, string, RegExp][] = [
      ['object-text', `{ status: 200, headers: { 'content-type': ['text/plain'] }, body: { a: 1 } }`, '', /field res\.body: must be text or, with a JSON content type, a JSON value \(content-type is "text\/plain"\), found object/],
      ['bad-host', `{ status: 200, headers: {}, body: '' }`, "host: 'api.openai.com'", /field meta\.host: "api\.openai\.com" is not an absolute URL/],
    ];
    for (const [name, res, meta, message] of cases) {
      const file = join(dir, `${name}.json5`);
      writeFileSync(file, edited(res, meta));
      const err = await importRecordings(file, join(dir, `${name}.tape`)).catch((e: unknown) => e);
      expect(err, name).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { file, entry: 0 } });
      expect((err as Error).message, name).toMatch(message);
      expect(existsSync(join(dir, `${name}.tape`)), name).toBe(false);
    }
  });
});

describe('--skip-bad and identical requests', () => {
  // Failed before: a bad tape left out gave its turn to the next tape of the same request, which
  // then answered the call before its own.
  it('refuses to leave out a bad tape whose request a later tape repeats', async () => {
    const folder = join(dir, 'dup-bad');
    mkdirSync(folder, { recursive: true });
    const tape = (res: string) => `{
    meta: { createdAt: '2026-12-01T10:00:00.000Z', resHumanReadable: true },
    req: { url: '/v1/models', method: 'GET', headers: { accept: 'application/json' }, body: '' },
    res: ${res},
}
`;
    writeFileSync(join(folder, '1.json5'), tape(`{ status: 200, headers: { 'content-type': ['text/plain'] }, body: 'one' }`));
    writeFileSync(join(folder, '2.json5'), tape(`{ status: 200, headers: { 'content-type': ['text/plain'] }, body: { a: 1 } }`));
    writeFileSync(join(folder, '3.json5'), tape(`{ status: 200, headers: { 'content-type': ['text/plain'] }, body: 'three' }`));
    const err = await importRecordings(folder, join(dir, 'dup-bad.tape'), { skipBad: true }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: 1, field: 'res.body' } });
    expect((err as Error).message).toMatch(/repeats its request/);
    expect(existsSync(join(dir, 'dup-bad.tape'))).toBe(false);
  });
});

/** A copy of the recorded directory, with `edit` applied to the tapes at the given positions. */
function editedCopy(name: string, edits: Record<number, (text: string) => string>): string {
  const copy = join(dir, name);
  cpSync(tapes, copy, { recursive: true });
  for (const [i, edit] of Object.entries(edits)) {
    const file = join(copy, files[Number(i)]!);
    writeFileSync(file, edit(readFileSync(file, 'utf8')));
  }
  return copy;
}
const withoutStatus = (text: string) => {
  const t = JSON5.parse(text) as { res: Record<string, unknown> };
  delete t.res.status;
  return JSON5.stringify(t, null, 4);
};
const truncated = (text: string) => text.slice(0, 200);

describe('bad tapes in the directory', () => {
  it('a tape without res.status is E_IMPORT_ENTRY naming the directory, the tape and the field; nothing is written', async () => {
    const bad = editedCopy('no-status', { 2: withoutStatus });
    const out = join(dir, 'no-status.tape');
    const err = await importRecordings(bad, out).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { file: bad, entry: 2, field: 'res.status' } });
    expect((err as Error).message).toContain(`${bad}: entry 2 (${files[2]}), field res.status: undefined is not an HTTP status; no tape written`);
    expect(existsSync(out)).toBe(false);
  });

  it('--skip-bad imports the good tapes and lists the bad ones (a field, a file that does not parse), and the command line prints them', async () => {
    const bad = editedCopy('two-bad', { 2: withoutStatus, 4: truncated });
    const report = await importRecordings(bad, join(dir, 'two-bad.tape'), { skipBad: true });
    expect(report.records).toBe(4);
    expect(report.skipped).toEqual([
      { where: `${files[2]}.res.status`, reason: 'undefined is not an HTTP status' },
      { where: `${files[4]}.(tape)`, reason: expect.stringMatching(/^is not valid JSON5: .* at line \d+, column \d+ \(the file ends early: truncated\?\)$/) },
    ]);
    const stdout = execFileSync(process.execPath, [CLI, 'import', bad, join(dir, 'two-bad-cli.tape'), '--skip-bad'], { encoding: 'utf8' });
    const lines = stdout.split('\n');
    expect(lines[0]).toBe(`wrote ${join(dir, 'two-bad-cli.tape')}: 4 records from a talkback tape directory (3 streams; 5 values masked)`);
    expect(lines.slice(1, 3)).toEqual(['      3  openai  POST /v1/chat/completions', '      1  anthropic  POST /v1/messages']);
    expect(lines[3]).toBe('skipped 2 entries:');
    expect(lines[4]).toBe(`  ${files[2]}.res.status: undefined is not an HTTP status`);
    expect(lines[5]).toMatch(new RegExp(`^  ${files[4]!.replace('.', '\\.')}\\.\\(tape\\): is not valid JSON5`));
  });

  it('when no tape imports, even with --skip-bad: E_IMPORT_ENTRY, no tape written, an existing one kept', async () => {
    const bad = editedCopy('all-bad', Object.fromEntries(files.map((_, i) => [i, withoutStatus])));
    const out = join(dir, 'all-bad.tape');
    const err = await importRecordings(bad, out, { skipBad: true }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { file: bad, entry: 0, field: 'res.status' } });
    expect((err as Error).message).toContain(`${bad}: none of its 6 entries imports`);
    expect(existsSync(out)).toBe(false);
    writeFileSync(out, 'not a tape');
    await expect(importRecordings(bad, out, { skipBad: true, force: true })).rejects.toMatchObject({ code: 'E_IMPORT_ENTRY' });
    expect(readFileSync(out, 'utf8')).toBe('not a tape');
  });

  it('a directory without a tape is E_IMPORT_ENTRY; a directory given --from another format is E_IMPORT_FORMAT', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(join(empty, 'sub'), { recursive: true });
    writeFileSync(join(empty, 'README.md'), 'no tapes here');
    const out = join(dir, 'empty-out', 'x.tape');
    await expect(importRecordings(empty, out, { from: 'talkback' })).rejects.toMatchObject({ code: 'E_IMPORT_ENTRY', details: { file: empty, entries: 0 } });
    await expect(importRecordings(tapes, out, { from: 'har' })).rejects.toMatchObject({ code: 'E_IMPORT_FORMAT', details: { file: tapes } });
    expect(existsSync(join(dir, 'empty-out'))).toBe(false);
  });
});

describe('the command line', () => {
  it('tells a talkback directory by its files, and prints the summary lines', () => {
    const out = join(dir, 'cli.tape');
    const stdout = execFileSync(process.execPath, [CLI, 'import', tapes, out], { encoding: 'utf8' });
    expect(stdout).toBe(
      [`wrote ${out}: 6 records from a talkback tape directory (3 streams; 8 values masked)`, '      4  openai  POST /v1/chat/completions', '      2  anthropic  POST /v1/messages', ''].join('\n'),
    );
  });

  it('takes tapes in directories below (a tapeNameGenerator that files them by host), and --from talkback', () => {
    const nested = join(dir, 'nested');
    mkdirSync(join(nested, 'openai'), { recursive: true });
    mkdirSync(join(nested, 'anthropic'), { recursive: true });
    for (const [i, f] of files.entries()) cpSync(join(tapes, f), join(nested, ASKS[i]!.sdk, f));
    const out = join(dir, 'nested.tape');
    const stdout = execFileSync(process.execPath, [CLI, 'import', nested, out, '--from', 'talkback'], { encoding: 'utf8' });
    expect(stdout.split('\n')[0]).toBe(`wrote ${out}: 6 records from a talkback tape directory (3 streams; 8 values masked)`);
    // Anthropic's directory sorts first: its tapes come first, as talkback would load them.
    expect(stdout.split('\n').slice(1, 3)).toEqual(['      2  anthropic  POST /v1/messages', '      4  openai  POST /v1/chat/completions']);
  });

  it('--force rules are unchanged: an existing tape is refused without it (kept as it was) and replaced with it', () => {
    const out = join(dir, 'cli.tape');
    const before = readFileSync(out);
    const r = spawnSync(process.execPath, [CLI, 'import', tapes, out], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^tapedeck: E_TAPE_EXISTS .*cli\.tape already exists/m);
    expect(readFileSync(out).equals(before)).toBe(true);
    const forced = spawnSync(process.execPath, [CLI, 'import', tapes, out, '--force'], { encoding: 'utf8' });
    expect(forced.status).toBe(0);
    expect(forced.stdout).toMatch(/^wrote .*cli\.tape: 6 records from a talkback tape directory/);
    // A new salt: the tape was written again.
    expect(readFileSync(out).equals(before)).toBe(false);
  });

  it('a directory of JSON recordings is still read as one (a *.json file beside the tapes decides)', () => {
    const mixed = join(dir, 'mixed');
    cpSync(tapes, mixed, { recursive: true });
    writeFileSync(join(mixed, 'rec.json'), JSON.stringify({ request: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, response: { id: 'x' } }));
    const out = join(dir, 'mixed.tape');
    const stdout = execFileSync(process.execPath, [CLI, 'import', mixed, out], { encoding: 'utf8' });
    // Then the line naming them ReplayCache records (import-cache-summary.test.ts).
    expect(stdout.startsWith(`wrote ${out}: 1 record from a directory of JSON recordings\n  it is a ReplayCache record`)).toBe(true);
  });
});
