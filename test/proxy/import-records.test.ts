// The import's fast path (records framed one by one, keys sorted only where out of order, no
// Map-boxing walk, requests keyed without path hashes) against the plain per-request path a
// recording takes: the deck's prepareRequest and recordOf for each exchange, the deep-copying
// sortedKeys, and appendRecords with its Map-boxing walk. Both must write the same bytes, record
// for record, for a large HAR of many providers, streams, repeats and secrets.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { requestKey, requestKeys } from '../../src/match/matcher.ts';
import { Deck, UNSTORED_RESPONSE_HEADERS, type DeckRequest } from '../../src/proxy/deck.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { readRecordingFile } from '../../src/store/import/read.ts';
import { inRecordOrder, sortedKeys } from '../../src/store/record-order.ts';
import { filedKey } from '../../src/store/origins.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { appendRecords, createTape, scanTape } from '../../src/store/tape-file.ts';
import { corpusHar } from './import-corpus.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RECORDED_AT = '2026-01-01T00:00:00.000Z';
const N = 3000;

// As written, or percent-encoded where a query parameter or form field was masked.
const MASK = /\[REDACTED(?::[0-9a-f]{16})?\]|%5BREDACTED(?:%3A[0-9a-f]{16})?%5D/g;

/** Masks in every string of a value (bytes read as latin1), walked whole. */
function masksOf(v: unknown): number {
  if (typeof v === 'string') return v.match(MASK)?.length ?? 0;
  if (v instanceof Uint8Array) return masksOf(Buffer.from(v).toString('latin1'));
  if (v === null || typeof v !== 'object') return 0;
  return Object.values(v).reduce((n: number, x) => n + masksOf(x), 0);
}

/** The tape the per-request path writes for a HAR, under the given salt, and the masks it added (stored less sent, per record). */
async function oracleTape(src: string, text: string, salt: string): Promise<{ tape: string; masked: number }> {
  let masked = 0;
  const read = readRecordingFile(src, text, 'har');
  const deck = await Deck.open({ mode: 'passthrough', redact: { salt }, onWarning: () => {} }, { kind: 'fetch' });
  const repeats = new Map<string, number>();
  const values: unknown[] = [];
  try {
    for (const x of read.exchanges) {
      const u = new URL(x.request.url);
      // The headers copied (not frozen): redacted afresh, not as the import's shared map.
      const req: DeckRequest = { method: x.request.method, url: u.pathname + u.search, headers: { ...x.request.headers }, body: x.request.body, origin: u.origin };
      const headers: HttpRecord['response']['headers'] = {};
      for (const [k, v] of Object.entries(x.response.headers)) if (!UNSTORED_RESPONSE_HEADERS.has(k)) headers[k] = v;
      const rec = deck.recordOf(deck.prepareRequest(req), req, { ...x.response, headers }, new Date(x.startedAt ?? RECORDED_AT), x.durationMs ?? 0)!;
      const answer = rec.response.body === x.response.body ? 0 : masksOf(rec.response.body) - masksOf(x.response.body);
      masked += Math.max(0, masksOf([rec.request.url, rec.request.headers, rec.request.body, rec.response.headers]) - masksOf([x.request.url, x.request.headers, x.request.body, x.response.headers]) + answer);
      // Turns are counted per host, as recordings are filed.
      const key = filedKey(rec);
      const repeat = repeats.get(key) ?? 0;
      repeats.set(key, repeat + 1);
      values.push(inRecordOrder({ ...sortedKeys(rec), repeat }));
    }
  } finally {
    await deck.close();
  }
  const out = join(dir, 'oracle.tape');
  await createTape(out, { salt });
  await appendRecords(out, values);
  return { tape: out, masked };
}

describe('import writes what the per-request recording path writes', () => {
  it(`${N} HAR entries (OpenAI, Anthropic, Gemini, Azure, Bedrock, Ollama, JSON and form calls; streams, repeats, secrets): the same frames, byte for byte`, async () => {
    const text = corpusHar(N);
    const src = join(dir, 'corpus.har');
    writeFileSync(src, text);
    const out = join(dir, 'imported.tape');
    const report = await importRecordings(src, out, { recordedAt: RECORDED_AT, onWarning: () => {} });
    expect(report.records).toBe(N);
    expect(report.streams).toBeGreaterThan(N / 10);
    expect(report.masked).toBeGreaterThan(N);
    expect(new Set(report.routes.map((r) => r.provider))).toEqual(new Set(['openai', 'anthropic', 'gemini', 'azure', 'bedrock', 'ollama', 'json', 'http']));

    const got = await scanTape(out);
    const oracle = await oracleTape(src, text, got.header.salt!);
    const want = await scanTape(oracle.tape);
    expect(report.masked).toBe(oracle.masked);
    expect(got.warnings).toEqual([]);
    expect(got.frames.length).toBe(want.frames.length);
    for (let i = 0; i < got.frames.length; i++) {
      const a = got.frames[i]!;
      const b = want.frames[i]!;
      // Compared one by one so a failure names the record.
      if (!got.bytes.subarray(a.offset, a.offset + a.length).equals(want.bytes.subarray(b.offset, b.offset + b.length))) {
        expect.fail(`record ${i} differs from the per-request path's`);
      }
    }
  }, 120_000);

  // The import's loops over plain objects (redaction, the mask count, the frame writer) walk
  // names with for-in, which also lists what Object.prototype lends: a lent member must change
  // nothing (not redacted into a record, not counted, not written).
  it('writes the same tape and report while Object.prototype lends an enumerable member (a secret name, a credential value)', async () => {
    const src = join(dir, 'lent.har');
    writeFileSync(src, corpusHar(400));
    const spy = vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(a: T): T => {
      if (a) new Uint8Array(a.buffer, a.byteOffset, a.byteLength).fill(7);
      return a;
    });
    const run = async (out: string) => {
      const report = await importRecordings(src, out, { recordedAt: RECORDED_AT, onWarning: () => {} });
      const bytes = readFileSync(out);
      // From the first frame on (the header holds the creation time).
      return { report, frames: bytes.subarray(18 + bytes.readUInt32BE(10)) };
    };
    try {
      const plain = await run(join(dir, 'plain.tape'));
      const lent = 'Bearer sk-proj-lentlentlentlentlentlentlent';
      Object.defineProperty(Object.prototype, 'api_key', { value: lent, enumerable: true, configurable: true, writable: true });
      let polluted: Awaited<ReturnType<typeof run>>;
      try {
        polluted = await run(join(dir, 'polluted.tape'));
      } finally {
        delete (Object.prototype as Record<string, unknown>).api_key;
      }
      expect(polluted.report).toEqual(plain.report);
      expect(polluted.frames.includes('api_key')).toBe(false);
      expect(polluted.frames.equals(plain.frames)).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('requestKey gives the key and signature requestKeys gives, for every request of the corpus', () => {
    const read = readRecordingFile('corpus.har', corpusHar(600), 'har');
    let keyed = 0;
    for (const x of read.exchanges) {
      if (x.request.body.length === 0 || !String(x.request.headers['content-type']).includes('json')) continue;
      const body: unknown = JSON.parse(Buffer.from(x.request.body).toString('utf8'));
      const u = new URL(x.request.url);
      const opts = { endpoint: { method: x.request.method, url: u.pathname + u.search } };
      let want: ReturnType<typeof requestKeys> | string;
      try {
        want = requestKeys(body, opts);
      } catch (e) {
        want = (e as { code: string }).code;
      }
      if (typeof want === 'string') {
        expect(() => requestKey(body, opts)).toThrow(expect.objectContaining({ code: want }));
        continue;
      }
      const got = requestKey(body, opts);
      expect(got.key).toBe(want.key);
      expect(got.signature).toEqual(want.signature);
      expect(got.view).toEqual(want.view);
      keyed++;
    }
    expect(keyed).toBeGreaterThan(400);
  });
});
