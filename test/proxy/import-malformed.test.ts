// Bad input never costs a recording: 20 malformed or truncated files of each import format
// (HAR, VCR.py cassette, nock recording, mock-server fixtures) each give a TapedeckError that
// names the file (and, for a bad entry, the entry and the field), and the tape they were
// imported onto (with --force) keeps its bytes. --skip-bad keeps the good entries and lists the
// bad; mock-server rules that are no request are listed, never guessed.
import OpenAI from 'openai';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vcrCassette, vcrInteraction } from './vcr-cassette.ts';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import type { ImportFormat } from '../../src/store/import/read.ts';
import { startUpstream } from './fake-upstream.ts';
import { PLAIN } from './import-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-bad-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

const URL_ = 'https://api.openai.com/v1/chat/completions';
const answer = { id: 'chatcmpl-1', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Blue', refusal: null }, finish_reason: 'stop', logprobs: null }] };
const ask = (text: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });

// ---- One good file per format (three entries), and ways to break it ----

const harEntry = (text: string) => ({
  startedDateTime: '2026-01-01T00:00:00.000Z',
  time: 12,
  request: { method: 'POST', url: URL_, httpVersion: 'HTTP/1.1', headers: [{ name: 'content-type', value: 'application/json' }], postData: { mimeType: 'application/json', text: JSON.stringify(ask(text)) } },
  response: { status: 200, statusText: 'OK', headers: [{ name: 'content-type', value: 'application/json' }], content: { size: 10, mimeType: 'application/json', text: JSON.stringify(answer) } },
  timings: { send: 1, wait: 10, receive: 1 },
});
const har = () => ({ log: { version: '1.2', creator: { name: 'test', version: '1' }, entries: [harEntry('a'), harEntry('b'), harEntry('c')] } });

const vcr = () => vcrCassette(...['a', 'b', 'c'].map((t) => vcrInteraction(JSON.stringify(ask(t)), JSON.stringify(answer), URL_)));

const nockDef = (text: string) => ({ scope: 'https://api.openai.com:443', method: 'POST', path: '/v1/chat/completions', body: ask(text), status: 200, response: answer, rawHeaders: { 'content-type': 'application/json' }, responseIsBinary: false });
const nock = () => [nockDef('a'), nockDef('b'), nockDef('c')];

const mockServer = (text: string) => ({ httpRequest: { method: 'POST', path: '/v1/chat/completions', body: { type: 'JSON', json: ask(text), matchType: 'STRICT' } }, httpResponse: { statusCode: 200, headers: { 'content-type': ['application/json'] }, body: answer } });
const fixtures = () => [mockServer('a'), mockServer('b'), mockServer('c')];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Ten cuts of a file: what a crash or an interrupted download leaves. */
function truncations(text: string): string[] {
  return Array.from({ length: 10 }, (_, i) => text.slice(0, Math.floor(((i + 0.5) / 10) * (text.trimEnd().length - 2))));
}

const jsonMutations = <T>(make: () => T, edits: ((v: T) => unknown)[]): string[] =>
  edits.map((edit) => {
    const v = make();
    const r = edit(v);
    return JSON.stringify(r === undefined ? v : r, null, 2);
  });

const CASES: Record<ImportFormat, { ext: string; good: string; bad: string[] }> = {
  har: {
    ext: 'har',
    good: JSON.stringify(har(), null, 2),
    bad: [
      ...truncations(JSON.stringify(har(), null, 2)),
      ...jsonMutations(har, [
        (h: Json) => delete h.log.entries[1].response,
        (h: Json) => (h.log.entries[2].response.status = 0),
        (h: Json) => (h.log.entries[0].response.content = { size: 5, mimeType: 'application/json', text: '%%%not base64%%%', encoding: 'base64' }),
        (h: Json) => (h.log.entries[1].request.url = '/relative/only'),
        (h: Json) => (h.log.entries[0].request.headers = { 'content-type': 'application/json' }),
        (h: Json) => (h.log.entries[2].request.postData.text = 42),
        (h: Json) => delete h.log.entries[1].response.content,
        (h: Json) => (h.log.entries = {}),
        () => ({ entries: [] }),
        (h: Json) => (h.log.entries[0].response.content = { size: 200, mimeType: 'application/json' }),
      ]),
    ],
  },
  vcr: {
    ext: 'yaml',
    good: vcr(),
    bad: [
      ...truncations(vcr()),
      vcr().replace('version: 1\n', ''),
      vcr().replace('version: 1', 'version: 2'),
      vcr().replace('    method: POST\n', ''),
      vcr().replace('      code: 200\n', '      code: six\n'),
      vcr().replace(`    uri: ${URL_}`, '    uri: not a url'),
      vcr().replace("      string: '", "      strin: '"),
      vcr().replace('interactions:', 'interactions: {'),
      vcr().replace('  response:\n', '  response: !!python/object/apply:os.system ["echo"]\n  responsex:\n'),
      vcr().replace('    method: POST\n', '    method: POST\n    method: GET\n'),
      `interactions:\n${vcrInteraction('a').replace("string: '", "string: !!binary |\n        H4sIAKwrpmIA/z2OSwrCMBCG956izLIkfQSxkl2RogfQA9R2bIM1iUkq\n      other: '")}\n    headers2: x\nversion: 1\n`.replace('Content-Type:\n      - application/json\n    status', 'Content-Encoding:\n      - gzip\n    status'),
    ],
  },
  nock: {
    ext: 'json',
    good: JSON.stringify(nock(), null, 2),
    bad: [
      ...truncations(JSON.stringify(nock(), null, 2)),
      ...jsonMutations(nock, [
        (d: Json[]) => delete d[1].status,
        (d: Json[]) => (d[0].scope = 'api.openai.com'),
        (d: Json[]) => (d[2].path = 'v1/chat/completions'),
        (d: Json[]) => (d[1].status = 1000),
        (d: Json[]) => Object.assign(d[0], { responseIsBinary: true, response: 'zz-not-hex' }),
        (d: Json[]) => Object.assign(d[1], { rawHeaders: { 'content-encoding': 'gzip' }, response: ['1f8b0800', 'zz'] }),
        (d: Json[]) => Object.assign(d[2], { rawHeaders: { 'content-encoding': 'gzip' }, response: ['1f8b08000000000000ff'] }),
        (d: Json[]) => (d[0].rawHeaders = ['content-type']),
        (d: Json[]) => delete d[1].method,
        () => ({ scope: 'https://api.openai.com:443' }),
      ]),
    ],
  },
  fixtures: {
    ext: 'json',
    good: JSON.stringify(fixtures(), null, 2),
    bad: [
      ...truncations(JSON.stringify(fixtures(), null, 2)),
      ...jsonMutations(fixtures, [
        (f: Json[]) => delete f[1].httpResponse,
        (f: Json[]) => (f[0].httpResponse.statusCode = 0),
        (f: Json[]) => (f[2].httpRequest = 'POST /v1/chat/completions'),
        (f: Json[]) => (f[1].httpResponse.headers = 'content-type: application/json'),
        (f: Json[]) => (f[0].httpResponse.body = { type: 'XML', xml: '<a/>' }),
        (f: Json[]) => (f[2].httpResponse.body = { type: 'BINARY', base64Bytes: '***' }),
        (f: Json[]) => (f[1] = 'a fixture'),
        (f: Json[]) => (f[0] = { response: { content: 'hi' } }),
        () => ({ fixtures: 'none' }),
        (f: Json[]) => (f[2].httpResponse.statusCode = 'OK'),
      ]),
    ],
  },
};

let target: string;
let targetBytes: Buffer;
beforeAll(async () => {
  // The tape every bad import is aimed at, with --force: it must come out as it went in.
  target = join(dir, 'kept.tape');
  await addRecordings({ tape: target }, [{ request: { url: URL_, body: PLAIN }, response: { body: { ...answer, choices: [{ ...answer.choices[0], message: { role: 'assistant', content: 'kept' } }] } } }]);
  targetBytes = readFileSync(target);
});

describe.each(Object.keys(CASES) as ImportFormat[])('%s', (format) => {
  const c = CASES[format];

  it('the good file imports (so each bad one fails for its fault, not the file)', async () => {
    const src = join(dir, `good-${format}.${c.ext}`);
    writeFileSync(src, c.good);
    const out = join(dir, `good-${format}.tape`);
    const report = await importRecordings(src, out, { from: format });
    expect(report.records).toBe(3);
  });

  it('20 malformed or truncated files: a clear error naming the file (and entry and field), and the target tape untouched', async () => {
    expect(c.bad).toHaveLength(20);
    for (const [i, text] of c.bad.entries()) {
      const src = join(dir, `bad-${format}-${i}.${c.ext}`);
      writeFileSync(src, text);
      let err: unknown;
      try {
        await importRecordings(src, target, { from: format, force: true });
      } catch (e) {
        err = e;
      }
      expect(err, `case ${i}`).toBeInstanceOf(TapedeckError);
      const e = err as TapedeckError;
      expect(['E_IMPORT_PARSE', 'E_IMPORT_ENTRY'], `case ${i}: ${e.code} ${e.message}`).toContain(e.code);
      expect(e.message, `case ${i}`).toContain(src);
      expect(e.message, `case ${i}`).toMatch(/no tape written/);
      if (e.code === 'E_IMPORT_ENTRY') {
        expect(e.message, `case ${i}`).toMatch(/entry \d+ \(.+\), field \S+/);
        expect(typeof e.details.entry).toBe('number');
        expect(typeof e.details.field).toBe('string');
      }
      expect(readFileSync(target).equals(targetBytes), `case ${i}: the target tape changed`).toBe(true);
    }
    // Nothing left beside the target: no temporary tape, no lock.
    expect(readdirSync(dir).filter((n) => n.includes('kept.tape') && n !== 'kept.tape')).toEqual([]);
  });
});

describe('a nock recording with one definition short of scope or method, its format not named', () => {
  // Detected as nock all the same (the other definitions are whole), so the error names the entry
  // and the field; it was "none of the formats import reads: found an array".
  for (const [field, edit] of [
    ['method', (d: Json[]) => delete d[1].method],
    ['scope', (d: Json[]) => delete d[2].scope],
  ] as const) {
    it(`without ${field}: the entry and field named`, async () => {
      const d = nock() as Json[];
      edit(d);
      const src = join(dir, `nock-no-${field}.json`);
      writeFileSync(src, JSON.stringify(d, null, 2));
      const err = await importRecordings(src, join(dir, `nock-no-${field}.tape`)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TapedeckError);
      expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { field } });
      expect((err as Error).message).toMatch(new RegExp(`entry ${field === 'method' ? 1 : 2} \\(\\[${field === 'method' ? 1 : 2}\\]\\), field ${field}: is missing`));
    });
  }

  it('an array that is mostly not nock, or holds mock-server rules, is not taken for nock', async () => {
    const half = nock() as Json[];
    delete half[0].method;
    delete half[1].scope;
    const src = join(dir, 'nock-mostly-not.json');
    writeFileSync(src, JSON.stringify(half));
    await expect(importRecordings(src, join(dir, 'nock-mostly-not.tape'))).rejects.toMatchObject({ code: 'E_IMPORT_FORMAT' });
    const good = join(dir, 'fixtures-still.json');
    writeFileSync(good, JSON.stringify(fixtures()));
    expect((await importRecordings(good, join(dir, 'fixtures-still.tape'))).records).toBe(3);
  });
});

describe('the command line', () => {
  it('a bad entry: one line naming file, entry and field, a hint with --skip-bad, exit 1, no stack; the tape kept', () => {
    const src = join(dir, 'cli-bad.har');
    const h = har() as Json;
    delete h.log.entries[1].response;
    writeFileSync(src, JSON.stringify(h));
    let stderr = '';
    let status = 0;
    try {
      execFileSync(process.execPath, [CLI, 'import', src, target, '--force'], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      stderr = String((e as { stderr: string }).stderr);
      status = (e as { status: number }).status;
    }
    expect(status).toBe(1);
    expect(stderr).toMatch(/^tapedeck: E_IMPORT_ENTRY .*cli-bad\.har: entry 1 \(log\.entries\[1\]\), field response: is missing/m);
    expect(stderr).toContain('--skip-bad');
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(target).equals(targetBytes)).toBe(true);
  });

  it('--skip-bad keeps the good entries and lists the bad one with why', () => {
    const src = join(dir, 'cli-skip.har');
    const h = har() as Json;
    h.log.entries[1].response.status = 0;
    writeFileSync(src, JSON.stringify(h));
    const out = join(dir, 'cli-skip.tape');
    const stdout = execFileSync(process.execPath, [CLI, 'import', src, out, '--skip-bad'], { encoding: 'utf8' });
    expect(stdout).toMatch(/wrote .*cli-skip\.tape: 2 records from a HAR/);
    expect(stdout).toMatch(/2\s+openai\s+POST \/v1\/chat\/completions/);
    expect(stdout).toMatch(/skipped 1 entry:\n\s+log\.entries\[1\]\.response\.status: .*got no response/);
  });
});

describe('a request body the keyer refuses', () => {
  // Entries are read as they are keyed: whatever stops the import first, a malformed entry
  // further on is still what the import reports, as when the whole file was read first.
  const withBodies = (...texts: string[]) => {
    const h = har() as Json;
    h.log.entries = texts.map((t, i) => ({ ...harEntry(`e${i}`), request: { ...harEntry(`e${i}`).request, postData: { mimeType: 'application/json', text: t } } }));
    return h;
  };
  const ok = JSON.stringify(ask('fine'));
  const dup = '{"model":"gpt-4o-mini","model":"x","messages":[]}';

  it('is the entry and field named, and nothing is written; --skip-bad lists it and keeps the rest', async () => {
    const src = join(dir, 'dup-body.har');
    writeFileSync(src, JSON.stringify(withBodies(ok, dup, JSON.stringify(ask('also fine')))));
    const out = join(dir, 'dup-body.tape');
    const err = await importRecordings(src, out).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: 1, field: 'request.body' } });
    expect((err as Error).message).toMatch(/Duplicate object key at byte 23/);
    expect(readdirSync(dir).filter((f) => f.startsWith('dup-body.tape') || f.includes('dup-body.tape.'))).toEqual([]);
    const report = await importRecordings(src, out, { skipBad: true });
    expect(report.records).toBe(2);
    expect(report.skipped).toEqual([{ where: 'log.entries[1]', reason: expect.stringMatching(/^Duplicate object key at byte 23/) }]);
  });

  it('gives way to a malformed entry after it, which is reported with the count of the bad ones', async () => {
    const h = withBodies(ok, dup, ok, ok);
    delete h.log.entries[2].response;
    h.log.entries[3].response.status = 'x';
    const src = join(dir, 'dup-then-bad.har');
    writeFileSync(src, JSON.stringify(h));
    const err = await importRecordings(src, join(dir, 'dup-then-bad.tape')).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: 2, field: 'response' } });
    expect((err as Error).message).toMatch(/\(1 more bad entry after it\); no tape written\./);
  });

  it('a tape that exists already gives way to a malformed entry too', async () => {
    const h = withBodies(ok, ok);
    delete h.log.entries[1].response;
    const src = join(dir, 'exists-then-bad.har');
    writeFileSync(src, JSON.stringify(h));
    const out = join(dir, 'exists-then-bad.tape');
    writeFileSync(out, 'not a tape');
    await expect(importRecordings(src, out)).rejects.toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: 1 } });
    expect(readFileSync(out, 'utf8')).toBe('not a tape');
  });
});

describe('HAR entries in order', () => {
  it('the same request twice becomes two repeats answered in file order; a base64 content.text is decoded', async () => {
    const h = har() as Json;
    const say = (text: string) => JSON.stringify({ ...answer, choices: [{ ...answer.choices[0], message: { role: 'assistant', content: text } }] });
    h.log.entries = [harEntry('same'), harEntry('other'), harEntry('same')];
    h.log.entries[0].response.content.text = say('first');
    h.log.entries[1].response.content.text = say('unrelated');
    h.log.entries[2].response.content = { size: 1, mimeType: 'application/json', text: Buffer.from(say('second')).toString('base64'), encoding: 'base64' };
    h.log.pages = [{ id: 'page_1' }, { id: 'page_2' }];
    h.log.entries[2].pageref = 'page_2';
    const src = join(dir, 'repeats.har');
    writeFileSync(src, JSON.stringify(h));
    const out = join(dir, 'repeats.tape');
    expect((await importRecordings(src, out)).records).toBe(3);
    const f = createFetch({ tape: out, mode: 'replay' });
    try {
      // On the host the recording names (a replay sends nothing there).
      const client = new OpenAI({ apiKey: 'x', baseURL: 'https://api.openai.com/v1', fetch: f, maxRetries: 0 });
      const req = ask('same') as typeof PLAIN;
      const got = [];
      for (let i = 0; i < 2; i++) got.push((await client.chat.completions.create(req)).choices[0]!.message.content);
      expect(got).toEqual(['first', 'second']);
    } finally {
      await f.close();
    }
  });
});

describe('a HAR body in an encoding other than base64', () => {
  it("is a bad entry naming the field and the encoding (a body read as text would be an answer nobody got); 'utf-8' and '' are text", async () => {
    const gz = Buffer.from(JSON.stringify(answer)).toString('base64');
    for (const [where, edit] of [
      ['response.content.encoding', (h: Json) => (h.log.entries[1].response.content = { size: 10, mimeType: 'application/json', text: gz, encoding: 'gzip' })],
      ['request.postData.encoding', (h: Json) => Object.assign(h.log.entries[2].request.postData, { encoding: 'deflate' })],
    ] as const) {
      const h = har() as Json;
      edit(h);
      const src = join(dir, `encoding-${where}.har`);
      writeFileSync(src, JSON.stringify(h));
      const err = await importRecordings(src, join(dir, `encoding-${where}.tape`)).catch((e: unknown) => e);
      expect(err, where).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_IMPORT_ENTRY');
      expect((err as TapedeckError).details.field).toBe(where);
      expect((err as TapedeckError).message).toMatch(/"(gzip|deflate)"/);
      expect(existsSync(join(dir, `encoding-${where}.tape`))).toBe(false);
    }
    const h = har() as Json;
    h.log.entries[0].response.content.encoding = 'utf-8';
    h.log.entries[1].response.content.encoding = '';
    h.log.entries[2].request.postData.encoding = 'UTF8';
    const src = join(dir, 'encoding-text.har');
    writeFileSync(src, JSON.stringify(h));
    expect((await importRecordings(src, join(dir, 'encoding-text.tape'))).records).toBe(3);
  });
});

describe('tapedeck export --har', () => {
  it('prints HAR 1.2 with the origin given, which tapedeck import reads back to the same answer', async () => {
    const text = execFileSync(process.execPath, [CLI, 'export', target, '--har', '--origin', 'https://api.openai.com'], { encoding: 'utf8' });
    const doc = JSON.parse(text) as Json;
    expect(doc.log.version).toBe('1.2');
    expect(doc.log.entries).toHaveLength(1);
    expect(doc.log.entries[0].request.url).toBe(URL_);
    expect(JSON.parse(doc.log.entries[0].request.postData.text)).toEqual(JSON.parse(JSON.stringify(PLAIN)));
    const file = join(dir, 'exported-cli.har');
    writeFileSync(file, text);
    const out = join(dir, 'exported-cli.tape');
    expect(execFileSync(process.execPath, [CLI, 'import', file, out], { encoding: 'utf8' })).toMatch(/1 record from a HAR/);
    const f = createFetch({ tape: out, mode: 'replay' });
    try {
      // On the host the recording names (a replay sends nothing there).
      const client = new OpenAI({ apiKey: 'x', baseURL: 'https://api.openai.com/v1', fetch: f, maxRetries: 0 });
      expect((await client.chat.completions.create(PLAIN)).choices[0]!.message.content).toBe('kept');
    } finally {
      await f.close();
    }
  });
});

describe('mock-server fixtures', () => {
  it('exact rules are imported and replay; matching rules are listed with why, never guessed', async () => {
    const src = join(dir, 'mixed-fixtures.json');
    const list = [
      mockServer('Name a colour'),
      { httpRequest: { method: 'POST', path: '/v1/chat/completions', body: { type: 'STRING', string: 'colour', subString: true } }, httpResponse: { statusCode: 200, body: answer } },
      { httpRequest: { method: 'POST', path: '/v1/chat/completions', body: { messages: [{ role: 'user', content: 'x' }] } }, httpResponse: { statusCode: 200, body: answer } },
      { httpRequest: { method: 'POST', path: '/v1/.*' }, httpResponse: { statusCode: 200, body: answer } },
    ];
    writeFileSync(src, JSON.stringify(list));
    const out = join(dir, 'mixed.tape');
    const report = await importRecordings(src, out);
    expect(report.format).toBe('mock-server fixture file');
    expect(report.records).toBe(1);
    expect(report.skipped).toEqual([
      { where: '[1]', reason: 'a substring match is not a request' },
      { where: '[2]', reason: expect.stringContaining('partial match') },
      { where: '[3]', reason: expect.stringContaining('is a pattern') },
    ]);
    const f = createFetch({ tape: out, mode: 'replay' });
    try {
      const client = new OpenAI({ apiKey: 'x', baseURL: 'http://127.0.0.1:9/v1', fetch: f, maxRetries: 0 });
      expect((await client.chat.completions.create(ask('Name a colour') as typeof PLAIN)).choices[0]!.message.content).toBe('Blue');
    } finally {
      await f.close();
    }
  });

  it("an LLM mock server's fixture file: every rule listed with its reason, nothing imported", async () => {
    const src = join(dir, 'llm-mock.json');
    writeFileSync(src, JSON.stringify({ fixtures: [{ match: { userMessage: 'weather' }, response: { content: 'Sunny' } }, { match: { toolName: 'get_weather' }, response: { toolCalls: [{ name: 'get_weather', arguments: '{}' }] } }] }));
    const report = await importRecordings(src, join(dir, 'llm-mock.tape'));
    expect(report.records).toBe(0);
    expect(report.skipped.map((s) => s.reason)).toEqual(['a user-message substring match is not a request', 'a tool-name match is not a request']);
  });
});

/** The error an import gives, or undefined. */
const importError = (src: string, out: string, opts: Parameters<typeof importRecordings>[2] = {}) =>
  importRecordings(src, out, opts).then(
    () => undefined,
    (e: unknown) => e as TapedeckError,
  );

/** Runs the command line: its exit status, stdout and stderr. */
function cli(...args: string[]): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('a directory where the tape goes', () => {
  it('is "<dir> is a directory, not a tape file" with a file path that would do, with --force or without, for every input import reads (exit 1); the directory stays as it was', async () => {
    const target = join(dir, 'dirtape');
    mkdirSync(target);
    const said = `${target} is a directory, not a tape file. Give a file path such as ${join(target, 'chat.tape')}.`;
    const harFile = join(dir, 'into-dir.har');
    writeFileSync(harFile, JSON.stringify(har()));
    for (const force of [false, true]) {
      const e = await importError(harFile, target, { force });
      expect(e?.code, e?.message).toBe('E_TAPE_IO');
      expect(e!.message).toBe(said);
    }
    // A tapedeck JSON export and a directory of recordings go other ways to the same target check.
    const tape = join(dir, 'for-export.tape');
    await addRecordings({ tape }, [{ request: { url: URL_, body: ask('exported') }, response: { body: answer } }]);
    const exported = join(dir, 'exported.json');
    writeFileSync(exported, cli('export', tape).stdout);
    const recordings = join(dir, 'recordings-dir');
    mkdirSync(recordings);
    writeFileSync(join(recordings, 'a.json'), JSON.stringify({ request: ask('dir'), response: { text: 'A' } }));
    for (const src of [harFile, exported, recordings]) {
      for (const force of [[], ['--force']]) {
        const r = cli('import', src, target, ...force);
        expect(r.stderr, `${src} ${force.join(' ')}`).toBe(`tapedeck: E_TAPE_IO ${target} is a directory, not a tape file.\nhint: Give a file path such as ${join(target, 'chat.tape')}.\n`);
        expect(r.status).toBe(1);
      }
    }
    expect(readdirSync(target)).toEqual([]);
    expect(readdirSync(dir).filter((n) => n.includes('dirtape'))).toEqual(['dirtape']);
  });
});

describe('a JSON recording that starts with a UTF-8 byte order mark', () => {
  // The HAR format lets a writer put the mark first and has readers ignore it.
  const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

  it('imports as without it (a HAR on one line or pretty-printed, a nock recording) and replays', async () => {
    for (const [name, text] of [
      ['bom.har', JSON.stringify(har())],
      ['bom-pretty.har', JSON.stringify(har(), null, 2)],
      ['bom-nock.json', JSON.stringify(nock(), null, 2)],
    ] as const) {
      const src = join(dir, name);
      writeFileSync(src, Buffer.concat([BOM, Buffer.from(text)]));
      const out = join(dir, `${name}.tape`);
      expect((await importRecordings(src, out)).records, name).toBe(3);
      const f = createFetch({ tape: out, mode: 'replay' });
      try {
        // On the host the recording names (a replay sends nothing there).
        const client = new OpenAI({ apiKey: 'x', baseURL: 'https://api.openai.com/v1', fetch: f, maxRetries: 0 });
        expect((await client.chat.completions.create(ask('b') as typeof PLAIN)).choices[0]!.message.content, name).toBe('Blue');
      } finally {
        await f.close();
      }
    }
  });

  it('cut short is still E_IMPORT_PARSE, at the byte of the file where it ends (the mark counted)', async () => {
    const src = join(dir, 'bom-cut.har');
    const cut = Buffer.concat([BOM, Buffer.from(JSON.stringify(har()).slice(0, 900))]);
    writeFileSync(src, cut);
    const e = await importError(src, join(dir, 'bom-cut.tape'));
    expect(e).toMatchObject({ code: 'E_IMPORT_PARSE', details: { file: src, offset: cut.length } });
    expect(e!.message).toContain('the file ends early: truncated?');
  });
});

describe('a file cut short or empty, whatever its name', () => {
  // A .json file says no format: what a recorder's crash or an interrupted copy leaves of a
  // nock recording or of a HAR saved under another name must still be said as such.
  const cutNock = JSON.stringify(nock(), null, 2).slice(0, 700);
  const cutHar = JSON.stringify(har()).slice(0, 900);

  it('is E_IMPORT_PARSE naming the file, the byte where it ends and --from, from the API, the target untouched', async () => {
    for (const [name, text] of [
      ['cut-nock.json', cutNock],
      ['cut-har.json', cutHar],
    ] as const) {
      const src = join(dir, name);
      writeFileSync(src, text);
      const e = await importError(src, target, { force: true });
      expect(e, name).toBeInstanceOf(TapedeckError);
      expect(e!.code, `${name}: ${e!.message}`).toBe('E_IMPORT_PARSE');
      expect(e!.message).toContain(src);
      expect(e!.message).toContain(`at byte ${Buffer.byteLength(text)}`);
      expect(e!.message).toContain('the file ends early: truncated?');
      expect(e!.details).toMatchObject({ file: src, offset: Buffer.byteLength(text) });
      expect(e!.hint).toContain('--from');
    }
    const empty = join(dir, 'empty.json');
    writeFileSync(empty, '');
    const e = await importError(empty, target, { force: true });
    expect(e).toMatchObject({ code: 'E_IMPORT_PARSE', details: { file: empty } });
    expect(e!.message).toMatch(/empty\.json is not a readable .*: the file is empty; no tape written/);
    // V8 gives no position for an unexpected token: the offset is still said.
    const bad = join(dir, 'bad-token.json');
    writeFileSync(bad, '{"messages": [1, }');
    expect(await importError(bad, target, { force: true })).toMatchObject({ code: 'E_IMPORT_PARSE', details: { offset: 17 } });
    expect(readFileSync(target).equals(targetBytes)).toBe(true);
  });

  it('is E_IMPORT_PARSE on the command line too: one line with the file and the byte, a hint with --from, exit 1, no tape', () => {
    const src = join(dir, 'cli-cut-nock.json');
    writeFileSync(src, cutNock);
    const out = join(dir, 'cli-cut-nock.tape');
    const r = cli('import', src, out);
    expect(r.stderr).toMatch(new RegExp(`^tapedeck: E_IMPORT_PARSE ${src.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} .*at byte ${Buffer.byteLength(cutNock)}.*truncated\\?.*\\nhint: .*--from.*\\n$`));
    expect(r.status).toBe(1);
    expect(existsSync(out)).toBe(false);
  });
});

describe('a source with no entries', () => {
  // What a recorder stopped before any call writes: an empty tape would replay nothing.
  const sources: [string, string, ImportFormat | undefined, RegExp][] = [
    ['none.yaml', 'interactions: []\nversion: 1\n', undefined, /the VCR\.py cassette has no entries \(interactions is empty\)/],
    ['none.har', JSON.stringify({ log: { version: '1.2', creator: { name: 'Playwright', version: '1.65.1' }, pages: [], entries: [] } }), undefined, /the HAR has no entries \(log\.entries is empty\)/],
    ['none-nock.json', '[]', 'nock', /the nock recording has no entries \(its array is empty\)/],
    ['none-fixtures.json', '{"fixtures":[]}', undefined, /the mock-server fixture file has no entries \(fixtures is empty\)/],
  ];

  it('is E_IMPORT_ENTRY saying so, and no tape is written (nor an existing one replaced)', async () => {
    for (const [name, text, from, message] of sources) {
      const src = join(dir, name);
      writeFileSync(src, text);
      const out = join(dir, `${name}.tape`);
      const e = await importError(src, out, from ? { from } : {});
      expect(e, name).toBeInstanceOf(TapedeckError);
      expect(e!.code, `${name}: ${e!.message}`).toBe('E_IMPORT_ENTRY');
      expect(e!.message).toContain(src);
      expect(e!.message).toMatch(message);
      expect(e!.message).toMatch(/no tape written/);
      expect(existsSync(out), name).toBe(false);
      expect(await importError(src, target, { force: true, ...(from ? { from } : {}) }), name).toMatchObject({ code: 'E_IMPORT_ENTRY' });
    }
    expect(readFileSync(target).equals(targetBytes)).toBe(true);
  });

  it('exits non-zero on the command line, writing nothing', () => {
    const out = join(dir, 'cli-none.tape');
    const r = cli('import', join(dir, 'none.yaml'), out);
    expect(r.stderr).toMatch(/^tapedeck: E_IMPORT_ENTRY .*none\.yaml: the VCR\.py cassette has no entries/);
    expect(r.status).toBe(1);
    expect(existsSync(out)).toBe(false);
  });
});

describe('a tape in a directory that does not exist yet', () => {
  it('is written there, the directories made as recording makes them; an import that fails leaves none behind', async () => {
    const src = join(dir, 'to-new-dir.har');
    writeFileSync(src, JSON.stringify(har()));
    const out = join(dir, 'new-dir', 'sub', 'app.tape');
    expect((await importRecordings(src, out)).records).toBe(3);
    expect(existsSync(out)).toBe(true);
    const h = har() as Json;
    delete h.log.entries[1].response;
    const badSrc = join(dir, 'bad-to-new-dir.har');
    writeFileSync(badSrc, JSON.stringify(h));
    expect(await importError(badSrc, join(dir, 'never', 'made', 'app.tape'))).toMatchObject({ code: 'E_IMPORT_ENTRY' });
    expect(existsSync(join(dir, 'never'))).toBe(false);
  });

  it('on the command line, for a recording and a tapedeck JSON export alike', () => {
    const src = join(dir, 'cli-to-new-dir.har');
    writeFileSync(src, JSON.stringify(har()));
    const out = join(dir, 'cli-new', 'a', 'app.tape');
    expect(cli('import', src, out)).toMatchObject({ status: 0, stdout: expect.stringMatching(/^wrote .*cli-new\/a\/app\.tape: 3 records/) });
    const json = join(dir, 'app.tape.json');
    writeFileSync(json, execFileSync(process.execPath, [CLI, 'export', out], { encoding: 'utf8' }));
    const again = join(dir, 'cli-new', 'b', 'app.tape');
    expect(cli('import', json, again)).toMatchObject({ status: 0, stdout: expect.stringMatching(/^wrote .*cli-new\/b\/app\.tape: 3 records/) });
    const file = join(dir, 'a-file');
    writeFileSync(file, '');
    const r = cli('import', src, join(file, 'app.tape'));
    // The path named, never the temporary tape's.
    expect(r.stderr).toMatch(/^tapedeck: E_FILE A part of .*a-file\/app\.tape is not a directory\.\nhint: /);
    expect(r.stderr).not.toContain('.tmp');
  });
});

describe('a tape a writer has open', () => {
  it('is not replaced with force while the writer records to it (E_TAPE_IN_USE naming it); its recordings stay, and once it closes the import replaces the tape', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'open.tape');
    const src = join(dir, 'replacement.har');
    writeFileSync(src, JSON.stringify(har()));
    const f = createFetch({ tape, mode: 'update', onWarning: () => {} });
    try {
      const client = new OpenAI({ apiKey: 'sk-x', baseURL: `${up.url}/v1`, fetch: f, maxRetries: 0 });
      const first = (await client.chat.completions.create(PLAIN)).choices[0]!.message.content;
      expect(existsSync(`${tape}.writers`)).toBe(true);
      const e = await importError(src, tape, { force: true });
      expect(e).toBeInstanceOf(TapedeckError);
      expect(e!.code, e!.message).toBe('E_TAPE_IN_USE');
      expect(e!.message).toContain(`Tape ${tape} is open for recording by a writer (pid ${process.pid} on `);
      expect(e!.message).toMatch(/no tape written/);
      expect(e!.details.writers).toEqual([expect.objectContaining({ pid: process.pid })]);
      // On the command line too.
      const r = cli('import', src, tape, '--force');
      expect(r.stderr).toMatch(/^tapedeck: E_TAPE_IN_USE .*\nhint: Let the run that records to it finish/);
      expect(r.status).toBe(1);
      // The writer goes on; everything it recorded is still on the tape.
      const second = (await client.chat.completions.create({ ...PLAIN, messages: [{ role: 'user', content: 'again' }] })).choices[0]!.message.content;
      await f.close();
      const replay = createFetch({ tape, mode: 'replay' });
      try {
        const c = new OpenAI({ apiKey: 'sk-x', baseURL: 'http://127.0.0.1:9/v1', fetch: replay, maxRetries: 0 });
        expect((await c.chat.completions.create(PLAIN)).choices[0]!.message.content).toBe(first);
        expect((await c.chat.completions.create({ ...PLAIN, messages: [{ role: 'user', content: 'again' }] })).choices[0]!.message.content).toBe(second);
      } finally {
        await replay.close();
      }
    } finally {
      await f.close();
      await up.close();
    }
    expect((await importRecordings(src, tape, { force: true })).records).toBe(3);
  });
});

describe('the command line, its arguments', () => {
  const src = () => {
    const f = join(dir, 'args.har');
    writeFileSync(f, JSON.stringify(har()));
    return f;
  };

  it('a third argument is E_USAGE (exit 2), not ignored; no tape is written', () => {
    const out = join(dir, 'args.tape');
    const r = cli('import', src(), out, 'extra');
    expect(r.stderr).toMatch(/^tapedeck: E_USAGE import takes the input and the tape; "extra" is one argument too many\.\nhint: /);
    expect(r.status).toBe(2);
    expect(existsSync(out)).toBe(false);
  });

  it('--ignore without a value, or followed by another flag, is E_USAGE "--ignore needs a value" (exit 2)', () => {
    const out = join(dir, 'args.tape');
    for (const args of [['--ignore'], ['--ignore', '--force'], ['--ignore=']]) {
      const r = cli('import', src(), out, ...args);
      expect(r.stderr, args.join(' ')).toMatch(/^tapedeck: E_USAGE --ignore needs a value\.\nhint: .*--ignore \w/);
      expect(r.status, args.join(' ')).toBe(2);
      expect(existsSync(out)).toBe(false);
    }
    expect(cli('import', src(), out, '--ignore', 'user', '--force').status).toBe(0);
  });
});

describe('a file whose JSON breaks on control characters', () => {
  it("says where without printing them: V8's quote of the file has them escaped, so no escape sequence reaches the terminal", async () => {
    const file = join(dir, 'control.har');
    // Control characters only: a byte that is no UTF-8 (0xff) is refused before any JSON is read (import-not-utf8.test.ts).
    writeFileSync(file, Buffer.concat([Buffer.from('{"log": '), Buffer.from([0x01, 0x02, 0x7f]), Buffer.from(' garbage \x1b[31mred')]));
    const err = (await importRecordings(file, join(dir, 'control.tape')).catch((e: unknown) => e)) as TapedeckError;
    expect(err).toBeInstanceOf(TapedeckError);
    expect(err.message).toContain('invalid JSON at byte 8');
    expect(err.message).toContain('\\u0001');
    expect(err.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\ufffd]/);
    expect(existsSync(join(dir, 'control.tape'))).toBe(false);
  });
});

describe('text that is no JSON, and nock\'s recorder output as code', () => {
  // nock.recorder.rec() without output_objects prints code (`nock('https://…').post(…)`), and
  // play() then gives those strings; import read neither, and said so as a bare E_JSON that named
  // no file, or as "invalid JSON" with no word of the recorder option that writes what it reads.
  const code = `\nnock('https://api.openai.com:443', {"encodedQueryParams":true})\n  .post('/v1/chat/completions', ${JSON.stringify(ask('a'))})\n  .reply(200, ${JSON.stringify(answer)}, [\n  'content-type',\n  'application/json'\n]);\n`;

  it('the code, as a file of any name or as a JSON array of its strings, from the API and with --from nock: E_IMPORT_FORMAT naming output_objects', async () => {
    const inputs: [string, string, ImportFormat | undefined][] = [
      ['nock-code.txt', code, undefined],
      ['nock-code.js', code, 'nock'],
      ['nock-strings.json', JSON.stringify([code, code]), undefined],
      ['nock-strings-from.json', JSON.stringify([code]), 'nock'],
    ];
    for (const [name, text, from] of inputs) {
      const src = join(dir, name);
      writeFileSync(src, text);
      const e = await importError(src, join(dir, `${name}.tape`), from ? { from } : {});
      expect(e, name).toBeInstanceOf(TapedeckError);
      expect(e!.code, `${name}: ${e!.message}`).toBe('E_IMPORT_FORMAT');
      expect(e!.message).toContain(src);
      expect(e!.message).toMatch(/nock's recorder output as code/);
      expect(e!.hint).toMatch(/output_objects: true/);
      expect(existsSync(join(dir, `${name}.tape`))).toBe(false);
    }
  });

  it('on the command line: one line naming the file, the option in the hint, exit 1', () => {
    const src = join(dir, 'cli-nock-code.txt');
    writeFileSync(src, code);
    const r = cli('import', src, join(dir, 'cli-nock-code.tape'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^tapedeck: E_IMPORT_FORMAT ${src.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is nock's recorder output as code`, 'm'));
    expect(r.stderr).toMatch(/output_objects: true/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('other text that is no JSON, on the command line: E_IMPORT_PARSE naming the file and the byte, not a bare E_JSON', () => {
    const src = join(dir, 'notes.txt');
    writeFileSync(src, 'these are my notes\n');
    const r = cli('import', src, join(dir, 'notes.tape'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^tapedeck: E_IMPORT_PARSE .*notes\.txt is not JSON import reads: .*byte 0/m);
    expect(r.stderr).not.toMatch(/E_JSON/);
  });

  it('a mistake before the last brace is not called truncation', async () => {
    const src = join(dir, 'trailing-comma.json');
    writeFileSync(src, '{"log": {"entries": []},}');
    const e = await importError(src, join(dir, 'trailing-comma.tape'));
    expect(e!.code).toBe('E_IMPORT_PARSE');
    expect(e!.message).toContain('at byte 24');
    expect(e!.message).not.toMatch(/ends early|truncated\?/);
  });
});
