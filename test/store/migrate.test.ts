// Importing directories of JSON recordings and DSPy-style JSON cache files onto tapes, through the
// library and through `tapedeck import`, then replaying them with ReplayCache.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRecordingsDir } from '../../src/match/recordings.ts';
import { importCacheJSON, importRecordingsDir } from '../../src/store/migrate.ts';
import { ReplayCache, type ReplayRecord } from '../../src/store/replay-cache.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { rejectionOf } from '../helpers.ts';
import { tapeSuite } from './setup.ts';

const { root, fresh } = tapeSuite('migrate');

const RECORDINGS_DIR = 'test/fixtures/recordings-dir';
const DSPY_CACHE = 'test/fixtures/dspy-cache/qa-cache.json';
const records = async (file: string) => (await readTape(file)).records.map((r) => r.value as ReplayRecord);

describe('directories of JSON recordings', () => {
  it('become one record per file, in file order, and replay with the original responses', async () => {
    const out = fresh();
    const salt = '0123456789abcdef0123456789abcdef';
    const res = await importRecordingsDir(RECORDINGS_DIR, out, { created: '2026-01-01T00:00:00.000Z', salt });
    const source = loadRecordingsDir(RECORDINGS_DIR, { onWarning: () => {} });
    expect(res).toEqual({ records: source.length, skipped: 0 });
    const recs = await records(out);
    expect(recs.map((r) => r.meta!.source)).toEqual(source.map((s) => s.source));
    expect(recs.map((r) => r.recordedAt)).toEqual(source.map((s) => (s as unknown as { recordedAt: string }).recordedAt));
    const cache = await ReplayCache.open(out, { mode: 'replay' });
    for (const s of source) expect(await cache.get(s.request)).toEqual(s.response);
    // Deterministic: the same directory, `created` and salt give the same bytes.
    const again = fresh();
    await importRecordingsDir(RECORDINGS_DIR, again, { created: '2026-01-01T00:00:00.000Z', salt });
    expect(readFileSync(again).equals(readFileSync(out))).toBe(true);
  });

  it('skips a broken file with a warning naming it, and keeps the rest', async () => {
    const dir = `${fresh()}.d`;
    cpSync(RECORDINGS_DIR, dir, { recursive: true });
    writeFileSync(join(dir, '000-broken.json'), '{"request": {"messages": [}');
    const warnings: string[] = [];
    const res = await importRecordingsDir(dir, fresh(), { onWarning: (m) => warnings.push(m) });
    expect(res.skipped).toBe(1);
    expect(res.records).toBe(loadRecordingsDir(RECORDINGS_DIR, { onWarning: () => {} }).length);
    expect(warnings.join('\n')).toContain('000-broken.json');
  });

  it('a directory none of whose files imports is E_IMPORT_FORMAT naming each file and why (a hand-written one said to be one); no tape written', async () => {
    const dir = `${fresh()}.d`;
    mkdirSync(dir);
    // The shape tapedeck add takes (docs/hand-written.md): its request holds the URL and the body.
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'dir a' }] };
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ request: { url: 'https://api.openai.com/v1/chat/completions', body }, response: { body: { id: 'x', choices: [] } } }));
    writeFileSync(join(dir, 'b.json'), '{"request": {"url": ');
    const out = fresh();
    const warnings: string[] = [];
    const e = await rejectionOf(importRecordingsDir(dir, out, { onWarning: (m) => warnings.push(m) }));
    expect(e.code, e.message).toBe('E_IMPORT_FORMAT');
    expect(e.message).toContain(`none of the 2 *.json files in ${dir} is a recording import reads: (1) ${join(dir, 'a.json')}: this is a hand-written recording`);
    expect(e.message).toContain(`use tapedeck add <tape> ${join(dir, 'a.json')}`);
    expect(e.message).not.toContain('none of `messages`');
    expect(e.message).toContain(`(2) ${join(dir, 'b.json')}: Invalid JSON at byte 20`);
    expect(e.message).toMatch(/; no tape written\./);
    expect(e.hint).toMatch(/one recording per \*\.json file, \{ "request": <the request body.*tapedeck add <tape> <file\.json>/);
    expect(warnings).toEqual([]);
    expect(existsSync(out)).toBe(false);
    // A directory with no *.json file at all writes no empty tape either.
    const none = `${fresh()}.d`;
    mkdirSync(none);
    expect((await rejectionOf(importRecordingsDir(none, out))).message).toMatch(/holds no \*\.json recordings; no tape written/);
    expect(existsSync(out)).toBe(false);
  });
});

describe('DSPy-style JSON cache files', () => {
  it('become records with the values a caller expects, typed metadata kept, secrets redacted', async () => {
    const out = fresh();
    const warnings: string[] = [];
    const res = await importCacheJSON(DSPY_CACHE, out, { onWarning: (m) => warnings.push(m) });
    expect(res).toEqual({ records: 3, skipped: 1 });
    expect(warnings.join('\n')).toMatch(/dead00.*pickle/);
    // The skipped entry named as an entry, its reason after it.
    expect(warnings[0]).toMatch(/qa-cache\.json: skipped entry "dead00": /);
    const src = JSON.parse(readFileSync(DSPY_CACHE, 'utf8')) as { entries: Record<string, { request: Record<string, unknown> }> };
    const recs = await records(out);
    expect(recs.map((r) => r.meta!.sourceKey)).toEqual(['0f3a9c', '7be210', 'c41d07']);
    expect(recs[0]!.meta).toMatchObject({ type: 'Prediction', usage: { prompt_tokens: 12, completion_tokens: 9 }, cacheHit: false });
    expect(recs[2]!.meta).toMatchObject({ type: 'pydantic', class: 'app.models.Animal' });
    expect(recs.every((r) => r.recordedAt === '2025-11-14T12:05:00.000Z')).toBe(true);
    expect((await readTape(out)).header.created).toBe('2025-11-14T12:00:00.000Z');
    expect(readFileSync(out).includes(Buffer.from('LEAKEDLEAKED'))).toBe(false);

    const cache = await ReplayCache.open(out, { mode: 'replay' });
    expect(await cache.get(src.entries['0f3a9c']!.request)).toEqual({ answer: 'Paris', reasoning: "France's capital is Paris" });
    expect(await cache.get(src.entries['7be210']!.request)).toEqual({ primes: [2, 3] });
    expect(await cache.get(src.entries.c41d07!.request)).toEqual({ legs: 4, name: 'cat' });
  });

  it('names an entry whose request is no LLM request, which the shape check does not place', async () => {
    const file = join(root, 'shape.json');
    writeFileSync(file, JSON.stringify({ metadata: {}, entries: { ok: { request: { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, response: { type: 'dict', data: { a: 1 } } }, bad: { request: { q: 1 }, response: { type: 'dict', data: { a: 2 } } } } }));
    const warnings: string[] = [];
    expect(await importCacheJSON(file, fresh(), { onWarning: (m) => warnings.push(m) })).toEqual({ records: 1, skipped: 1 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/shape\.json: skipped entry "bad": The request has none of/);
  });

  it('refuses a file that is not a DSPy-style cache, and an existing tape without force', async () => {
    const bad = join(root, 'bad.json');
    writeFileSync(bad, '{"records": []}');
    expect((await rejectionOf(importCacheJSON(bad, fresh()))).code).toBe('E_RECORDING');
    const out = fresh();
    await importCacheJSON(DSPY_CACHE, out, { onWarning: () => {} });
    expect((await rejectionOf(importCacheJSON(DSPY_CACHE, out, { onWarning: () => {} }))).code).toBe('E_TAPE_EXISTS');
    await importCacheJSON(DSPY_CACHE, out, { force: true, onWarning: () => {} });
  });
});

describe('tapedeck import', () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, ['dist/cli.js', ...args], { encoding: 'utf8' });

  it('tells a directory, a DSPy-style cache and a tapedeck JSON export apart', async () => {
    const a = fresh();
    const fromDir = cli('import', RECORDINGS_DIR, a);
    expect(fromDir.status).toBe(0);
    expect(fromDir.stdout).toContain('from a directory of JSON recordings');
    const b = fresh();
    const fromCache = cli('import', DSPY_CACHE, b);
    expect(fromCache.status).toBe(0);
    expect(fromCache.stdout).toMatch(/3 records from a DSPy-style cache.json \(1 skipped/);
    const exported = cli('export', b);
    expect(exported.status).toBe(0);
    const json = join(root, 'b.json');
    writeFileSync(json, exported.stdout);
    const c = fresh();
    expect(cli('import', json, c).stdout).toContain('tapedeck JSON export');
    expect(readFileSync(c).equals(readFileSync(b))).toBe(true);
  });

  it('a directory whose every file is skipped exits 1 saying why for each file; no tape is written', () => {
    const dir = `${fresh()}.d`;
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ request: { url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } }, response: { body: {} } }));
    writeFileSync(join(dir, 'b.json'), '{"not": "a recording"}');
    const out = fresh();
    const r = cli('import', dir, out);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^tapedeck: E_IMPORT_FORMAT none of the 2 \*\.json files in .* is a recording import reads: \(1\) .*a\.json: this is a hand-written recording .*: use tapedeck add <tape> .*a\.json; \(2\) .*b\.json: expected an object with "request" and "response"; no tape written\.\nhint: A directory import takes/);
    expect(r.status).toBe(1);
    expect(existsSync(out)).toBe(false);
  });
});
