// An HTTP record's `origin` (docs/tape-format.md): how it is written (no user or password,
// lowercase host, no default port), compared (a loopback host's port is not) and filed beside
// the route; read from a record's head without stepping over the containers of records written
// before it; and kept by the import (HAR), the JSON export and import, and the HAR export.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { exportTapeHar } from '../../src/store/export-har.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { filedName, originInName, originKey, originOf, routeOfName, withoutOrigin } from '../../src/store/origins.ts';
import { inRecordOrder } from '../../src/store/record-order.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { appendRecords, createTape, peekFrame, readTape, scanTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-origins-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = (ext = 'tape') => join(dir, `o${n++}.${ext}`);

describe('origins', () => {
  it('are stored as URL#origin gives them: no user or password, lowercase host, no default port; none for a path', () => {
    expect(originOf('HTTPS://me:s3cret@API.OpenAI.com:443/v1/models?x=1')).toBe('https://api.openai.com');
    expect(originOf('http://127.0.0.1:8080/v1')).toBe('http://127.0.0.1:8080');
    expect(originOf('http://[::1]:80/')).toBe('http://[::1]');
    expect(originOf('/v1/models')).toBeUndefined();
    expect(originOf('ftp://example.com/x')).toBeUndefined();
  });

  it("are compared without a loopback host's port; loopback hosts by name, and every other host with its port", () => {
    expect(originKey('http://localhost:5173')).toBe('http://localhost');
    expect(originKey('http://127.0.0.1:53412')).toBe('http://127.0.0.1');
    expect(originKey('http://127.8.9.10:1')).toBe('http://127.8.9.10');
    expect(originKey('http://[::1]:8080')).toBe('http://[::1]');
    expect(originKey('http://app.localhost:3000')).toBe('http://app.localhost');
    expect(originKey('https://api.groq.com')).toBe('https://api.groq.com');
    expect(originKey('https://gateway.example.com:8443')).toBe('https://gateway.example.com:8443');
    // Another scheme on a loopback host is another origin.
    expect(originKey('https://localhost:8443')).not.toBe(originKey('http://localhost:8080'));
    expect(originKey('http://localhost:1')).not.toBe(originKey('http://127.0.0.1:1'));
    // One written by hand, in another case or with credentials, compares as stored.
    expect(originKey('HTTPS://user:pw@API.OPENAI.COM:443')).toBe('https://api.openai.com');
  });

  it('file a recording under its route and origin, which splits back, and whose request the origin-less filing of names', () => {
    const route = 'POST /v1/messages (anthropic-beta: a,b)';
    const name = filedName(route, 'http://localhost:9999');
    expect(name).toBe('POST /v1/messages (anthropic-beta: a,b) http://localhost');
    expect(filedName(route, undefined)).toBe(route);
    expect(originInName(name, route)).toBe('http://localhost');
    expect(originInName(route, route)).toBeUndefined();
    expect(originInName('POST /v1/messages/batches', 'POST /v1/messages')).toBeUndefined();
    expect(routeOfName(name)).toBe(route);
    expect(routeOfName(route)).toBe(route);
    // An absolute-form request target is a route, not a method and an origin.
    expect(routeOfName('GET http://example.com')).toBe('GET http://example.com');
    expect(withoutOrigin(`${name}\u0000llm:abc`)).toBe(`${route}\u0000llm:abc`);
    expect(withoutOrigin(`${route}\u0000llm:abc`)).toBeUndefined();
    expect(withoutOrigin('POST /v1/chat/completions\u0000json:abc')).toBeUndefined();
  });
});

describe('reading `origin` from a record head', () => {
  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(200) }] };
  const head = (fields: Record<string, unknown>) => ({ v: 1, kind: 'http', key: 'k'.repeat(64), keyVersion: 2, ...fields });

  it('finds it among the leading scalars, and never steps over the containers of a record that has none', async () => {
    const tape = fresh();
    await createTape(tape);
    await appendRecords(tape, [
      inRecordOrder({ ...head({ match: 'llm', route: 'POST /v1/chat/completions', origin: 'https://api.openai.com', trace: 't1' }), request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body }, response: { status: 200, headers: {}, body: new Uint8Array(3) } }),
      inRecordOrder({ ...head({ match: 'llm', route: 'POST /v1/chat/completions', trace: 't2' }), request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body }, response: { status: 200, headers: {}, body: new Uint8Array(3) } }),
      // A record of the layout before `match` and `route` led: they follow the containers.
      { ...head({}), request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body }, response: { status: 200, headers: {}, body: new Uint8Array(3) }, match: 'llm', route: 'POST /v1/chat/completions', origin: 'https://late.example', trace: 't3' },
    ]);
    const scan = await scanTape(tape);
    const fields = ['kind', 'key', 'keyVersion', 'match', 'route', 'origin'];
    const [withOrigin, without, old] = scan.frames.map((f) => peekFrame(scan.bytes, f, fields, 5));
    expect(withOrigin).toMatchObject({ match: 'llm', route: 'POST /v1/chat/completions', origin: 'https://api.openai.com' });
    expect(without).toMatchObject({ match: 'llm', route: 'POST /v1/chat/completions' });
    expect(without).not.toHaveProperty('origin');
    // Past the containers only the first five are looked for: `origin` there is not read.
    expect(old).toMatchObject({ match: 'llm', route: 'POST /v1/chat/completions' });
    expect(old).not.toHaveProperty('origin');
    // `true`: every field asked for is looked for past the containers, as before.
    expect(peekFrame(scan.bytes, scan.frames[2]!, fields, true)).toMatchObject({ origin: 'https://late.example' });
  });
});

/** A HAR with the same request to two hosts, answered differently. */
function twoHostHar(first: string, second: string): string {
  const entry = (url: string, text: string) => ({
    startedDateTime: '2026-01-02T03:04:05.000Z',
    time: 10,
    request: { method: 'POST', url, httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'content-type', value: 'application/json' }], queryString: [], postData: { mimeType: 'application/json', text: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }) }, headersSize: -1, bodySize: -1 },
    response: { status: 200, statusText: 'OK', httpVersion: 'HTTP/1.1', cookies: [], headers: [{ name: 'content-type', value: 'application/json' }], content: { size: -1, mimeType: 'application/json', text: JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] }) }, redirectURL: '', headersSize: -1, bodySize: -1 },
    cache: {},
    timings: { send: 0, wait: 10, receive: 0 },
  });
  return JSON.stringify({ log: { version: '1.2', creator: { name: 'test', version: '1' }, entries: [entry(first, 'from the first'), entry(second, 'from the second')] } });
}

const chat = (f: typeof fetch, base: string) => f(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }) });
const contentOf = async (res: Response) => ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
const records = async (tape: string) => (await readTape(tape)).records.map((r) => r.value as HttpRecord & { repeat?: number });

describe('import and export keep the origin', () => {
  it("a HAR import stores each entry's origin (never a user or password in its URL), and each host replays its own answer", async () => {
    const har = fresh('har');
    writeFileSync(har, twoHostHar('https://api.openai.com/v1/chat/completions', 'https://proxy-user:s3cret-Passw0rd@mirror.example.com/v1/chat/completions'));
    const tape = fresh();
    expect((await importRecordings(har, tape)).records).toBe(2);
    const recs = await records(tape);
    expect(recs.map((r) => r.origin)).toEqual(['https://api.openai.com', 'https://mirror.example.com']);
    // Each host's first recording of the request.
    expect(recs.map((r) => r.repeat)).toEqual([0, 0]);
    expect(readFileSync(tape).includes('s3cret-Passw0rd')).toBe(false);
    expect(readFileSync(tape).includes('proxy-user')).toBe(false);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    try {
      expect(await contentOf(await chat(f, 'https://mirror.example.com'))).toBe('from the second');
      expect(await contentOf(await chat(f, 'https://api.openai.com'))).toBe('from the first');
      expect((await chat(f, 'https://third.example.com')).status).toBe(400);
    } finally {
      await f.close();
    }
  });

  it('the JSON export and import round-trip it, byte for byte', async () => {
    const har = fresh('har');
    writeFileSync(har, twoHostHar('https://api.openai.com/v1/chat/completions', 'https://mirror.example.com/v1/chat/completions'));
    const tape = fresh();
    await importRecordings(har, tape);
    const json = await exportTapeJSON(tape);
    expect(json).toContain('"origin": "https://mirror.example.com"');
    const back = fresh();
    await importTapeJSON(json, back);
    expect(readFileSync(back).equals(readFileSync(tape))).toBe(true);
  });

  it('a JSON import puts an origin written by hand in stored form, its password left out, and refuses one that is no origin', async () => {
    const har = fresh('har');
    writeFileSync(har, twoHostHar('https://api.openai.com/v1/chat/completions', 'https://mirror.example.com/v1/chat/completions'));
    const tape = fresh();
    await importRecordings(har, tape);
    const doc = JSON.parse(await exportTapeJSON(tape)) as { records: { origin?: string }[] };
    doc.records[1]!.origin = 'HTTPS://admin:hunter2-Secret@Mirror.Example.com:443';
    const back = fresh();
    await importTapeJSON(JSON.stringify(doc), back);
    expect(readFileSync(back).includes('hunter2-Secret')).toBe(false);
    expect((await records(back)).map((r) => r.origin)).toEqual(['https://api.openai.com', 'https://mirror.example.com']);
    doc.records[1]!.origin = 'mirror.example.com';
    const err = await importTapeJSON(JSON.stringify(doc), fresh()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_TAPE_IMPORT');
    expect((err as TapedeckError).details.path).toBe('$.records[1].origin');
  });

  it("the HAR export puts each entry on its recording's origin, the origin given instead; an import files them as they were", async () => {
    const har = fresh('har');
    writeFileSync(har, twoHostHar('https://api.openai.com/v1/chat/completions', 'https://mirror.example.com/v1/chat/completions'));
    const tape = fresh();
    await importRecordings(har, tape);
    // A recording written before origins were stored, after them.
    const old = (await records(tape))[0]!;
    const { origin: _origin, ...withoutOne } = old;
    await appendRecords(tape, [inRecordOrder({ ...withoutOne, repeat: 0 })]);

    const own = JSON.parse((await exportTapeHar(tape)).text) as { log: { entries: { request: { url: string }; _tapedeck?: Record<string, unknown> }[] } };
    expect(own.log.entries.map((e) => e.request.url)).toEqual(['https://api.openai.com/v1/chat/completions', 'https://mirror.example.com/v1/chat/completions', 'http://localhost/v1/chat/completions']);
    expect(own.log.entries.map((e) => e._tapedeck?.origin)).toEqual([undefined, undefined, null]);

    const given = JSON.parse((await exportTapeHar(tape, { origin: 'https://gateway.example.com' })).text) as typeof own;
    expect(new Set(given.log.entries.map((e) => new URL(e.request.url).origin))).toEqual(new Set(['https://gateway.example.com']));
    expect(given.log.entries.map((e) => e._tapedeck?.origin)).toEqual(['https://api.openai.com', 'https://mirror.example.com', null]);

    for (const doc of [own, given]) {
      const file = fresh('har');
      writeFileSync(file, JSON.stringify(doc));
      const back = fresh();
      await importRecordings(file, back);
      expect((await records(back)).map((r) => r.origin)).toEqual(['https://api.openai.com', 'https://mirror.example.com', undefined]);
    }

    // An origin edited into the file keeps no user or password; one that is no origin is a bad entry.
    given.log.entries[0]!._tapedeck!.origin = 'https://admin:hunter3-Secret@API.openai.com';
    const edited = fresh('har');
    writeFileSync(edited, JSON.stringify(given));
    const back = fresh();
    await importRecordings(edited, back);
    expect(readFileSync(back).includes('hunter3-Secret')).toBe(false);
    expect((await records(back))[0]!.origin).toBe('https://api.openai.com');
    given.log.entries[0]!._tapedeck!.origin = 'api.openai.com';
    writeFileSync(edited, JSON.stringify(given));
    const err = await importRecordings(edited, fresh()).catch((e: unknown) => e);
    expect((err as TapedeckError).code).toBe('E_IMPORT_ENTRY');
    expect((err as TapedeckError).details.field).toBe('_tapedeck.origin');
  });
});
