// `tapedeck export --har` written as it is made: the streamed text is byte for byte the document
// the export used to build whole (JSON.stringify of the HAR, 2-space indent, newline), on tapes of
// many records, of none, and of records with no HAR form; it is handed out in pieces; and damage
// is listed in the document (`log._warnings`) with the JSON export's words and offsets.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { exportTapeHar, harEntry, writeTapeHar } from '../../src/store/export-har.ts';
import { isHttpRecord } from '../../src/store/records.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-export-har-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const enc = new TextEncoder();

let n = 0;
const http = (over: { url?: string; reqBody?: unknown; headers?: Record<string, string | string[]>; body?: Uint8Array; chunks?: [number, number][]; status?: number; statusText?: string }) => ({
  v: 1,
  kind: 'http',
  match: 'llm',
  route: 'POST /v1/chat/completions',
  key: String(n++).padStart(64, '0'),
  request: { method: 'POST', url: over.url ?? '/v1/chat/completions?x=1&y=%C3%A9', headers: { 'content-type': 'application/json', 'x-multi': ['a', 'b'] }, ...(over.reqBody === undefined ? {} : { body: over.reqBody }) },
  response: {
    status: over.status ?? 200,
    ...(over.statusText === undefined ? {} : { statusText: over.statusText }),
    headers: over.headers ?? { 'content-type': 'application/json' },
    body: over.body ?? enc.encode('{"choices":[{"message":{"content":"Paris.\\nLine two: \\"quoted\\" 你好 🎉"}}]}'),
    ...(over.chunks ? { chunks: over.chunks } : {}),
  },
  recordedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 12,
});

const sse = 'data: {"choices":[{"delta":{"content":"Hel"}}]}\n\ndata: {"choices":[{"delta":{"content":"lo\\n"}}]}\n\ndata: [DONE]\n\n';

/** Records of every HAR form: JSON, text and binary bodies, streams, and values with none. */
const RECORDS = [
  http({ reqBody: { model: 'gpt-4o', messages: [{ role: 'user', content: 'multi\nline "quoted" é' }] } }),
  http({ reqBody: 'plain text body', headers: { 'content-type': 'text/event-stream' }, body: enc.encode(sse), chunks: [[5, 48], [9, 96], [11, sse.length]] }),
  { v: 1, key: 'k', request: { model: 'm' }, value: { text: 'a ReplayCache value' }, recordedAt: '2026-01-01T00:00:00.000Z' },
  http({ reqBody: Uint8Array.of(0, 1, 2, 255), headers: { 'content-type': 'application/octet-stream', location: '/elsewhere' }, body: Uint8Array.of(0, 159, 146, 150), status: 302, statusText: 'Found' }),
  http({ url: '/v1/embeddings', body: new Uint8Array(0) }),
];

/** The document as the export built it before it streamed: every entry, then one JSON.stringify. */
async function wholeDocument(tape: string, origin = 'http://localhost'): Promise<string> {
  const { header, records } = await readTape(tape);
  const entries = records.filter((r) => isHttpRecord(r.value)).map((r) => harEntry(r.value as Parameters<typeof harEntry>[0], origin));
  const salt = header.salt === undefined ? {} : { _redactionSalt: header.salt };
  return `${JSON.stringify({ log: { version: '1.2', creator: { name: 'tapedeck', version: VERSION }, ...salt, pages: [], entries } }, null, 2)}\n`;
}

async function streamed(tape: string, opts: { origin?: string } = {}): Promise<{ text: string; writes: number; result: Awaited<ReturnType<typeof writeTapeHar>> }> {
  const parts: string[] = [];
  const result = await writeTapeHar(tape, async (t) => void parts.push(t), opts);
  return { text: parts.join(''), writes: parts.length, result };
}

describe('export --har, streamed', () => {
  it('writes the same bytes as the whole document, for many records, one, none, and none with a HAR form', async () => {
    const cases: [string, unknown[]][] = [
      ['many', RECORDS],
      ['one', [RECORDS[0]]],
      ['none', []],
      ['no-har-form', [RECORDS[2]]],
      // A tape made before salts existed: no `_redactionSalt` member.
      ['no-salt', RECORDS],
    ];
    for (const [name, values] of cases) {
      const tape = join(dir, `${name}.tape`);
      await createTape(tape, name === 'no-salt' ? { salt: null } : {});
      if (values.length > 0) await appendRecords(tape, values);
      const { text, result } = await streamed(tape, { origin: 'https://api.openai.com' });
      expect(text, name).toBe(await wholeDocument(tape, 'https://api.openai.com'));
      expect('_redactionSalt' in (JSON.parse(text) as { log: object }).log, name).toBe(name !== 'no-salt');
      expect((await exportTapeHar(tape, { origin: 'https://api.openai.com' })).text, name).toBe(text);
      const http = values.filter(isHttpRecord).length;
      expect(result, name).toEqual({ entries: http, skipped: values.length - http, warnings: [] });
    }
  });

  it('hands the text out in pieces as records are read, not as one document', async () => {
    const tape = join(dir, 'large.tape');
    await createTape(tape);
    await appendRecords(tape, Array.from({ length: 200 }, () => RECORDS[1]));
    const { text, writes } = await streamed(tape);
    expect(text).toBe(await wholeDocument(tape));
    expect(writes).toBeGreaterThan(2);
  });

  it('lists damage in log._warnings as the JSON export lists it, the intact records exported', async () => {
    const tape = join(dir, 'damaged.tape');
    await createTape(tape);
    const { offsets } = await appendRecords(tape, [RECORDS[0], RECORDS[1], RECORDS[3]]);
    const bytes = readFileSync(tape);
    bytes[offsets[1]! + 8]! ^= 0xff; // record 1's CRC
    writeFileSync(tape, bytes);
    const { text, result } = await streamed(tape);
    const har = JSON.parse(text) as { log: { entries: unknown[]; _warnings: { code: string; offset: number; message: string }[] } };
    expect(har.log.entries).toHaveLength(2);
    const json = JSON.parse(await exportTapeJSON(tape)) as { warnings: { code: string; offset: number; message: string }[] };
    expect(json.warnings).toHaveLength(1);
    expect(har.log._warnings).toEqual(json.warnings);
    expect(Object.keys(har.log)).toEqual(['version', 'creator', '_redactionSalt', 'pages', 'entries', '_warnings']);
    expect(result.warnings.map((w) => w.offset)).toEqual([offsets[1]]);
    // Otherwise the document is the one JSON.stringify makes.
    expect(text).toBe(`${JSON.stringify(har, null, 2)}\n`);
  });
});
