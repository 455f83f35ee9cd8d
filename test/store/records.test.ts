// What a ReplayCache record holds (hashes, duration, raw bytes, metadata), redaction before
// writes, the lazy open (key bytes index, decode on demand) checked against a full readTape,
// ignoredArgs changes, batched puts, and user classes registered as tape types.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { canonicalize } from '../../src/core/index.ts';
import { requestKeys } from '../../src/match/matcher.ts';
import { normalizeRequest } from '../../src/providers/normalize.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { REDACTED, redact, redactor } from '../../src/store/redact.ts';
import { ReplayCache, type ReplayRecord } from '../../src/store/replay-cache.ts';
import {
  appendRecords,
  createTape,
  decodeFrame,
  FRAME_MAGIC,
  peekFrame,
  readTape,
  registerTapeType,
  scanTape,
} from '../../src/store/tape-file.ts';
import { errorOf, rejectionOf } from '../helpers.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('records');

const req = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...extra });
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const records = async (file: string) => (await readTape(file)).records.map((r) => r.value as ReplayRecord);

describe('record contents', () => {
  it('stores key, hashes (checked against node:crypto), duration, raw bytes and metadata', async () => {
    const file = fresh();
    const request = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi ✓' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'Again' },
      ],
    };
    // Unicode, a blank line and a trailing newline: the bytes must come back exactly.
    const body = Buffer.from('{"id":"x",\n\n "text":"Grüße 🎉"}\n', 'utf8');
    {
      await using cache = await ReplayCache.open(file, { mode: 'record' });
      await cache.put(request, { text: 'ok' }, { durationMs: 812.5, raw: { body, contentType: 'application/json; charset=utf-8' }, meta: { test: 'qa', run: 7 } });
    }
    const [rec] = await records(file);
    const keys = requestKeys(request);
    expect(rec!.key).toBe(keys.key);
    expect(rec!.durationMs).toBe(812.5);
    expect(rec!.meta).toEqual({ test: 'qa', run: 7 });
    expect(Buffer.compare(Buffer.from(rec!.raw!.body), body)).toBe(0);
    expect(rec!.raw!.contentType).toBe('application/json; charset=utf-8');
    // The hash spec, computed independently: message hash = SHA-256 of the canonical message;
    // path hash i = SHA-256(path i-1 || message hash i) over raw 32-byte digests, path 0 = message 0.
    const view = normalizeRequest(request).messages as unknown[];
    const msg = view.map((m) => createHash('sha256').update(canonicalize(m)).digest());
    const paths: Buffer[] = [];
    msg.forEach((h, i) => paths.push(i === 0 ? h : createHash('sha256').update(Buffer.concat([paths[i - 1]!, h])).digest()));
    expect(Buffer.from(rec!.hashes!.messages).toString('hex')).toBe(Buffer.concat(msg).toString('hex'));
    expect(Buffer.from(rec!.hashes!.paths).toString('hex')).toBe(keys.pathHashes.join(''));
    expect(keys.messageHashes).toEqual(msg.map((h) => h.toString('hex')));

    // Replay serves the value and the whole record, raw bytes included.
    const replay = await ReplayCache.open(file, { mode: 'replay' });
    const got = await replay.getRecord(request);
    expect(got!.value).toEqual({ text: 'ok' });
    expect(Buffer.compare(Buffer.from(got!.raw!.body), body)).toBe(0);
    await replay.close();
  });

  it('writes scalar fields first, so an index reads them without decoding', async () => {
    const file = fresh();
    {
      await using cache = await ReplayCache.open(file, { mode: 'record', ignoredArgs: ['seed'] });
      await cache.put(req('a', { seed: 3 }), 1, { durationMs: 5 });
    }
    const scan = await scanTape(file);
    const head = peekFrame(scan.bytes, scan.frames[0]!);
    const full = decodeFrame(scan.bytes, scan.frames[0]!) as ReplayRecord;
    expect(Object.keys(full).slice(0, 8)).toEqual(['v', 'key', 'keyVersion', 'recordedAt', 'durationMs', 'run', 'repeat', 'ignored']);
    expect(head).toEqual({ v: 1, key: full.key, keyVersion: 2, recordedAt: full.recordedAt, durationMs: 5, run: expect.any(String), repeat: 0, ignored: '["seed"]' });
  });

  it('the head, whole or limited to some fields, holds the leading scalars msgpack decodes (every scalar width)', async () => {
    const file = fresh();
    const fc = await import('fast-check');
    // Integers from every msgpack width (fixint, uint8/16/32, int8/16/32).
    const widths = [[0, 127], [-32, -1], [128, 255], [256, 65535], [65536, 2 ** 32 - 1], [-128, -33], [-32768, -129], [-(2 ** 31), -32769]] as const;
    const scalar = fc.oneof(
      ...widths.map(([min, max]) => fc.integer({ min, max })),
      fc.double({ noNaN: true }),
      fc.boolean(),
      fc.constant(null),
      fc.string({ maxLength: 40 }),
      fc.string({ minLength: 200, maxLength: 300 }),
      fc.string({ unit: 'grapheme', maxLength: 20 }),
    );
    const names = ['v', 'kind', 'key', 'keyVersion', 'ignored', 'recordedAt', 'durationMs', 'x', 'keyVersions', 'ke'];
    const value = fc.dictionary(fc.constantFrom(...names), scalar, { maxKeys: 8 }).map((o) => ({ ...o, nested: { a: 1 } }));
    const values = fc.sample(value, { numRuns: 300, seed: 7 });
    await createTape(file);
    await appendRecords(file, values, { durable: false });
    const scan = await scanTape(file);
    const fields = ['v', 'kind', 'key', 'keyVersion', 'ignored'];
    let compared = 0;
    // The oracle is msgpackr's full decode: the head is every field before the first object.
    const isScalar = (v: unknown) => v === null || typeof v !== 'object';
    scan.frames.forEach((f) => {
      const entries = Object.entries(decodeFrame(scan.bytes, f) as Record<string, unknown>);
      const leading = Object.fromEntries(entries.slice(0, entries.findIndex(([, v]) => !isScalar(v))));
      expect(peekFrame(scan.bytes, f)).toEqual(leading);
      const want = Object.fromEntries(Object.entries(leading).filter(([k]) => fields.includes(k)));
      compared += Object.keys(want).length;
      expect(peekFrame(scan.bytes, f, fields)).toEqual(want);
    });
    expect(compared).toBeGreaterThan(300);
  });

  it('rejects a bad durationMs or raw body before writing', async () => {
    const file = fresh();
    const cache = await ReplayCache.open(file, { mode: 'record' });
    expect((await rejectionOf(cache.put(req('a'), 1, { durationMs: -1 }))).code).toBe('E_ARG');
    expect((await rejectionOf(cache.put(req('a'), 1, { raw: { body: 42 as unknown as string } }))).code).toBe('E_ARG');
    await cache.close({ prune: false });
    // Nothing written: not even the tape the run made (removed again, empty).
    expect(existsSync(file)).toBe(false);
  });
});

describe('redaction', () => {
  const key = `sk-proj-${'Ab3'.repeat(14)}`;
  const anthropic = `sk-ant-api03-${'xY9_'.repeat(10)}`;
  const secretRequest = () => ({
    model: 'gpt-4o-mini',
    api_key: key,
    messages: [{ role: 'user', content: `my key is ${anthropic}, keep it safe` }],
  });
  const secretValue = () => ({ headers: { 'set-cookie': 'session=abc123secretcookie', Authorization: `Bearer ${key}` }, text: 'fine' });

  it('never writes API keys, authorization headers or cookies, and still replays', async () => {
    const file = fresh();
    {
      await using cache = await ReplayCache.open(file, { mode: 'record' });
      await cache.put(secretRequest(), secretValue(), { meta: { cookie: 'id=supersecretcookievalue' } });
    }
    const bytes = readFileSync(file);
    for (const secret of [key, anthropic, 'abc123secretcookie', 'supersecretcookievalue']) {
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
    }
    const [rec] = await records(file);
    // Not credentials of a provider's API: masked by a keyed mask of the value (one value, one mask).
    const keyed = /^\[REDACTED:[0-9a-f]{16}\]$/;
    expect((rec!.request as { api_key: string }).api_key).toMatch(keyed);
    expect((rec!.value as ReturnType<typeof secretValue>).headers.Authorization).toMatch(keyed);
    expect((rec!.request as ReturnType<typeof secretRequest>).messages[0]!.content).toMatch(/^my key is \[REDACTED:[0-9a-f]{16}\], keep it safe$/);
    // The key was computed from the request as sent: the same request replays.
    const replay = await ReplayCache.open(file, { mode: 'replay' });
    expect(((await replay.get(secretRequest())) as { text: string }).text).toBe('fine');
    await replay.close();
  });

  it('keeps secrets only when asked, and redacts extra names the user gives', async () => {
    const kept = fresh();
    {
      await using cache = await ReplayCache.open(kept, { mode: 'record', redact: { keepSecrets: true } });
      await cache.put(secretRequest(), secretValue());
    }
    expect(readFileSync(kept).includes(Buffer.from(key))).toBe(true);
    const extra = fresh();
    {
      await using cache = await ReplayCache.open(extra, { mode: 'record', redact: { fields: ['internal_token'] } });
      await cache.put(req('a'), { internal_token: 'tok-123456', Internal_Token: 'tok-654321' });
    }
    expect(readFileSync(extra).includes(Buffer.from('tok-123456'))).toBe(false);
    expect(readFileSync(extra).includes(Buffer.from('tok-654321'))).toBe(false);
  });

  it('redacts headers, URLs and strings, and leaves ordinary text alone', () => {
    const r = redactor({ headers: ['x-internal'], query: ['session'] });
    expect(r.headers({ Authorization: 'Bearer abc', 'X-Internal': 'v', 'set-cookie': ['a=1', 'b=2'], accept: 'json' })).toEqual({
      Authorization: REDACTED,
      'X-Internal': REDACTED,
      'set-cookie': [REDACTED, REDACTED],
      accept: 'json',
    });
    expect(r.url('/v1/models?key=AIzaSecret&x=1&session=s1#frag')).toBe(`/v1/models?key=${encodeURIComponent(REDACTED)}&x=1&session=${encodeURIComponent(REDACTED)}#frag`);
    expect(r.text('Bearer of bad news')).toBe('Bearer of bad news');
    expect(r.text('we use sk-learn daily')).toBe('we use sk-learn daily');
    expect(redact({ a: [{ password: 'p4ss' }], b: new Date(0) })).toEqual({ a: [{ password: REDACTED }], b: new Date(0) });
    const untouched = { model: 'x', messages: [{ role: 'user', content: 'hello' }] };
    expect(redact(untouched)).toBe(untouched); // nothing to mask: not even copied
    expect(redactor({ keepSecrets: true }).headers({ authorization: 'x' })).toEqual({ authorization: 'x' });
  });

  it('judges a header value or member name met before as a fresh redactor does (what it remembers between calls changes nothing)', () => {
    const opts = { salt: '0123456789abcdef0123456789abcdef', fields: ['Internal_Token'] };
    const kept = redactor(opts);
    const values = ['application/json', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36', 'Bearer sk-proj-4bcdefGhijklmnopqrstu9wx', 'token sk-ant-api03-abcdefghijklmnopqrstuv', 'x'.repeat(300)];
    const names = ['model', 'api_key', 'apiKey', 'internal-token', 'content', 'db_password'];
    // More distinct names than the redactor remembers (secret ones among them), so it stops
    // remembering new ones too.
    for (let i = 0; i < 9000; i++) {
      const v = i % 3 === 0 ? `req_${i.toString(16).padStart(16, '0')}` : values[i % values.length]!;
      const unique = i % 2 === 0 ? `field_${i}` : `x${i}_db-Password`;
      const headers = { 'x-trace': v, 'user-agent': values[(i * 7) % values.length]!, 'x-api-key': v, [`x-${unique}`]: v };
      const body = { [names[i % names.length]!]: v, [unique]: i, nested: [{ [names[(i + 1) % names.length]!]: `${v} sk-${'a'.repeat(24)}` }] };
      const fresh = redactor(opts);
      expect(kept.headers(headers)).toEqual(fresh.headers(headers));
      expect(kept.value(body)).toEqual(fresh.value(body));
    }
    expect(kept.headers({ 'x-trace': values[2]! })).toEqual({ 'x-trace': kept.mask(values[2]!) });
  });
});

describe('opening without decoding', () => {
  it('indexes the same records readTape decodes, and serves every one of them', async () => {
    const file = fresh();
    await createTape(file);
    const all: ReplayRecord[] = [];
    for (let i = 0; i < 300; i++) {
      const k = requestKeys(req(`q${i % 250}`));
      all.push({ v: 1, key: k.key, signature: k.signature, request: req(`q${i % 250}`), value: { i }, recordedAt: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z` });
    }
    await appendRecords(file, all, { durable: false });
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    expect(cache.size).toBe(300);
    // Keys 0..49 were recorded twice: the k-th get is the k-th recording.
    for (let i = 0; i < 300; i++) expect(await cache.get(req(`q${i % 250}`))).toEqual({ i });
    expect((await rejectionOf(cache.get(req('q0')))).code).toBe('E_MISS');
  });

  it('finds the same frames as readTape on a damaged tape', async () => {
    const file = fresh();
    await createTape(file);
    await appendRecords(file, Array.from({ length: 40 }, (_, i) => ({ v: 1, key: sha(`k${i}`), request: req(`k${i}`), value: i })), { durable: false });
    const bytes = readFileSync(file);
    const full = await readTape(file);
    bytes[full.records[7]!.offset + 30]! ^= 0x10; // a flipped bit in record 7
    writeFileSync(file, bytes.subarray(0, bytes.length - 9)); // and a torn tail
    const a = await readTape(file);
    const b = await scanTape(file);
    expect(b.frames.map((f) => [f.offset, f.length])).toEqual(a.records.map((r) => [r.offset, r.length]));
    expect(b.warnings).toEqual(a.warnings);
    expect(b.frames.map((f) => decodeFrame(b.bytes, f))).toEqual(a.records.map((r) => r.value));
  });

  it('skips a record whose checksum matches but whose payload does not decode, with a warning at its offset', async () => {
    const file = fresh();
    await createTape(file);
    const k = requestKeys(req('bad')).key;
    // The fast-path layout ({ v: 1, key: <64 hex>, ... }) followed by a truncated value.
    const payload = Buffer.concat([Buffer.from([0x83, 0xa1, 0x76, 0x01, 0xa3, 0x6b, 0x65, 0x79, 0xd9, 64]), Buffer.from(k), Buffer.from([0xa5, 0x76, 0x61, 0x6c, 0x75, 0x65, 0xdc, 0x00])]);
    const frame = Buffer.alloc(12 + payload.length);
    frame.set(FRAME_MAGIC, 0);
    frame.writeUInt32BE(payload.length, 4);
    frame.writeUInt32BE(crc32(payload), 8);
    frame.set(payload, 12);
    const offset = readFileSync(file).length;
    writeFileSync(file, Buffer.concat([readFileSync(file), frame]));
    await appendRecords(file, [{ v: 1, key: k, request: req('bad'), value: 'second' }]);
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    expect(await cache.get(req('bad'))).toBe('second');
    expect(cache.warnings.map((w) => [w.code, w.offset])).toEqual([['E_TAPE_CORRUPT', offset]]);
    warn.mockRestore();
  });

  it('keys old records without a key on load, and leaves other record kinds alone', async () => {
    const file = fresh();
    await createTape(file);
    await appendRecords(file, [{ request: req('old'), value: 'from v0' }, { v: 1, kind: 'http', key: requestKeys(req('x')).key, request: req('x'), value: 'proxy' }, { v: 2, request: req('y'), value: 'future' }]);
    const cache = await ReplayCache.open(file, { mode: 'update' });
    expect(await cache.get(req('old'))).toBe('from v0');
    expect(await cache.get(req('x'))).toBeUndefined();
    expect(await cache.get(req('y'))).toBeUndefined();
    await cache.close();
  });
});

describe('ignoredArgs across runs', () => {
  it('finds records made without ignoredArgs when the option now leaves an argument out', async () => {
    const file = fresh();
    {
      await using cache = await ReplayCache.open(file, { mode: 'record' });
      await cache.put(req('q', { seed: 1 }), 'answer');
    }
    const cache = await ReplayCache.open(file, { mode: 'replay', ignoredArgs: ['seed'] });
    expect(await cache.get(req('q', { seed: 99 }))).toBe('answer');
  });

  it('per-call ignoredArgs keep working when the tape is reopened with other options', async () => {
    const file = fresh();
    {
      await using cache = await ReplayCache.open(file, { mode: 'record' });
      await cache.put(req('q', { seed: 1 }), 'per-call', ['seed']);
    }
    const plain = await ReplayCache.open(file, { mode: 'replay' });
    expect(await plain.get(req('q', { seed: 5 }), ['seed'])).toBe('per-call');
    const other = await ReplayCache.open(file, { mode: 'replay', ignoredArgs: ['temperature'] });
    expect(await other.get(req('q', { seed: 7 }), ['seed'])).toBe('per-call');
    expect(await other.get(req('q', { seed: 1, temperature: 0 }))).toBe('per-call'); // re-keyed under the option
  });
});

describe('batched puts', () => {
  it('concurrent puts land in call order, each resolved only once on disk', async () => {
    const file = fresh();
    const cache = await ReplayCache.open(file, { mode: 'record' });
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        cache.put(req(`p${i}`), i).then(async () => {
          // Resolved means on disk: the record is readable right now.
          const onDisk = (await records(file)).map((r) => r.value);
          expect(onDisk).toContain(i);
          done.push(i);
        }),
      ),
    );
    expect(done.length).toBe(60);
    expect((await records(file)).map((r) => r.value)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    await cache.close();
  });
});

class Money {
  constructor(
    readonly cents: bigint,
    readonly currency: string,
  ) {}
  total(): string {
    return `${this.cents} ${this.currency}`;
  }
}
registerTapeType({ type: 7, name: 'Money', Class: Money, write: (m) => [m.cents, m.currency], read: (d) => new Money((d as [bigint, string])[0], (d as [bigint, string])[1]) });

class Ledger {
  constructor(readonly entries: Map<string, Money>) {}
}
registerTapeType({ type: 8, name: 'Ledger', Class: Ledger, write: (l) => l.entries, read: (d) => new Ledger(d as Map<string, Money>) });

describe('user classes as tape types', () => {
  it('round-trip through a tape and through export/import as instances', async () => {
    const file = fresh();
    const value = { price: new Money(1999n, 'EUR'), ledger: new Ledger(new Map([['a', new Money(5n, 'USD')]])) };
    {
      await using cache = await ReplayCache.open(file, { mode: 'record' });
      await cache.put(req('typed'), value);
    }
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    const got = (await cache.get(req('typed'))) as typeof value;
    expect(got.price).toBeInstanceOf(Money);
    expect(got.price.total()).toBe('1999 EUR');
    expect(got.ledger).toBeInstanceOf(Ledger);
    expect(got.ledger.entries.get('a')).toEqual(new Money(5n, 'USD'));

    const json = await exportTapeJSON(file);
    expect(json).toContain('"$type": "ext"');
    expect(json).toContain('"name": "Money"');
    const back = fresh();
    await importTapeJSON(json, back);
    expect(readFileSync(back).equals(readFileSync(file))).toBe(true);
  });

  it('refuses bad registrations and names an unregistered type on import', async () => {
    const noop = { name: 'X', Class: class X {}, write: () => 0, read: () => ({}) };
    expect(errorOf(() => registerTapeType({ ...noop, type: 0 })).code).toBe('E_ARG');
    expect(errorOf(() => registerTapeType({ ...noop, type: 64 })).code).toBe('E_ARG');
    expect(errorOf(() => registerTapeType({ ...noop, type: 7 })).code).toBe('E_ARG'); // Money's number
    const json = JSON.stringify({ header: { created: '2026-01-01T00:00:00.000Z', formatVersion: 1, tapedeckVersion: '0.1.0' }, records: [{ $type: 'ext', name: 'Nope', value: 1 }], warnings: [] });
    const err = await rejectionOf(importTapeJSON(json, fresh()));
    expect(err.code).toBe('E_TAPE_TYPE');
    expect(err.message).toContain('Nope');
  });
});
