// What addRecordings and `tapedeck add` are given: values JSON cannot hold and URLs that are no
// URL are refused as TapedeckErrors naming the recording and the field (a BigInt or a circular
// body let JSON.stringify's TypeError out; "not a url at all" became the route
// `POST /not%20a%20url%20at%20all` and `ftp://x/y` the path `/y`); a file that is no JSON is
// named by byte, line and column with an excerpt, as `tapedeck canonical` names it, and a byte
// order mark first is skipped.
import OpenAI from 'openai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { addRecordings, type WrittenRecording } from '../../src/proxy/hand-written.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { rejectionOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-written-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
let n = 0;
const tapeFor = (name: string) => join(dir, `${name}-${n++}.tape`);

const URL_ = 'https://api.openai.com/v1/chat/completions';
const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] };
const completion = (text: string) => ({ id: 'chatcmpl-hand', object: 'chat.completion', created: 1767225600, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }] });

describe('addRecordings rejects with a TapedeckError only (docs/api.md), naming the field', () => {
  const circular: Record<string, unknown> = { ...ask };
  circular.self = circular;
  const throwing = { ...ask };
  Object.defineProperty(throwing, 'messages', { enumerable: true, get: () => { throw new Error('not readable'); } });
  const cases: [string, unknown, string][] = [
    ['a BigInt in the response body', { request: { url: URL_, body: ask }, response: { body: { n: 1n } } }, 'Hand-written recording #0: `response.body.n` is a BigInt.'],
    ['a BigInt in the request body', { request: { url: URL_, body: { ...ask, seed: 7n } }, response: { body: {} } }, 'Hand-written recording #0: `request.body.seed` is a BigInt.'],
    ['a BigInt in event data', { request: { url: URL_, body: { ...ask, stream: true } }, response: { events: [{ data: { choices: [{ index: 0, delta: { content: 'x' }, n: [1, 2n] }] } }] } }, 'Hand-written recording #0: `response.events[0].data.choices[0].n[1]` is a BigInt.'],
    ['a circular request body', { request: { url: URL_, body: circular }, response: { body: {} } }, 'Hand-written recording #0: `request.body.self` holds itself (a circular reference).'],
    ['a function as the body', { request: { url: URL_, body: () => ask }, response: { body: {} } }, 'Hand-written recording #0: `request.body` is a function, not a JSON value.'],
    ['a member that throws when read', { request: { url: URL_, body: throwing }, response: { body: {} } }, 'Hand-written recording #0: could not be read (not readable).'],
  ];
  for (const [name, rec, message] of cases) {
    it(`${name}: E_RECORDING, nothing written`, async () => {
      const tape = tapeFor('values');
      const e = await addRecordings({ tape }, [rec as WrittenRecording]).then(
        () => undefined,
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(TapedeckError);
      expect((e as TapedeckError).code).toBe('E_RECORDING');
      expect((e as TapedeckError).message.startsWith(message)).toBe(true);
      expect((e as TapedeckError).hint).toMatch(/JSON values/);
      expect(existsSync(tape)).toBe(false);
    });
  }
});

describe('request.url is an absolute http(s) URL or a path from the root', () => {
  const bad: [string, RegExp][] = [
    ['not a url at all', /`request\.url` "not a url at all" is neither a URL nor a path \(a path starts with \/\)\.$/],
    ['ftp://x/y', /`request\.url` "ftp:\/\/x\/y" is not an http or https URL \(its scheme is ftp:\)\.$/],
    ['v1/chat/completions', /is neither a URL nor a path/],
    ['//api.openai.com/v1/chat/completions', /has no scheme: read as a URL it names the host "api\.openai\.com"/],
    ['/\\api.openai.com/v1/chat/completions', /names another host, not a path\.$/],
    ['https://', /`request\.url` "https:\/\/" is not a URL\.$/],
  ];
  for (const [url, message] of bad) {
    it(`refuses ${JSON.stringify(url)}, with the fix`, async () => {
      const tape = tapeFor('url');
      const e = await rejectionOf(addRecordings({ tape }, [{ request: { url, body: ask }, response: { body: completion('x') } }]));
      expect(e.code).toBe('E_RECORDING');
      expect(e.message.slice(0, -(e.hint ?? '').length).trim()).toMatch(message);
      expect(e.hint).toBe('Give the URL the SDK calls, "https://api.openai.com/v1/chat/completions", or just its path from the root, "/v1/chat/completions".');
      expect(existsSync(tape)).toBe(false);
    });
  }

  it('takes a full URL (its origin kept, any case of scheme) and a path (any host), which replay through the OpenAI SDK', async () => {
    const tape = tapeFor('urls');
    await addRecordings({ tape }, [
      { request: { url: 'HTTPS://api.openai.com/v1/chat/completions', body: ask }, response: { body: completion('by URL') } },
      { request: { url: '/v1/chat/completions', body: { ...ask, messages: [{ role: 'user', content: 'by path' }] } }, response: { body: completion('by path') } },
    ]);
    const recs = (await readTape(tape)).records.map((r) => r.value as HttpRecord);
    expect(recs.map((r) => [r.route, r.origin])).toEqual([
      ['POST /v1/chat/completions', 'https://api.openai.com'],
      ['POST /v1/chat/completions', undefined],
    ]);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    const client = new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0 });
    expect((await client.chat.completions.create(ask as OpenAI.ChatCompletionCreateParamsNonStreaming)).choices[0]!.message.content).toBe('by URL');
    const other = new OpenAI({ apiKey: 'replay', fetch: f, maxRetries: 0, baseURL: 'https://llm.internal/v1' });
    expect((await other.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'by path' }] })).choices[0]!.message.content).toBe('by path');
    await f.close();
  });

  it('tapedeck add names the file of a URL that is not one, exit 1', () => {
    const file = join(dir, 'weird-url.json');
    writeFileSync(file, JSON.stringify({ request: { url: 'not a url at all', body: { model: 'm' } }, response: { body: { a: 1 } } }));
    const tape = join(dir, 'weird-url.tape');
    const r = cli('add', tape, file);
    expect(r.stderr).toBe(
      `tapedeck: E_RECORDING Hand-written recording #0 (${file}): \`request.url\` "not a url at all" is neither a URL nor a path (a path starts with /).\n` +
        'hint: Give the URL the SDK calls, "https://api.openai.com/v1/chat/completions", or just its path from the root, "/v1/chat/completions".\n',
    );
    expect(r.status).toBe(1);
    expect(existsSync(tape)).toBe(false);
  });
});

describe('tapedeck add reads JSON as the rest of the CLI does', () => {
  const good = JSON.stringify([{ request: { url: '/v1/chat/completions', body: ask }, response: { body: completion('from a file with a BOM') } }]);

  it('JSON that breaks is named by byte, line and column with an excerpt, as tapedeck canonical names it', () => {
    const file = join(dir, 'bad-json.json');
    writeFileSync(file, '[{"request": {"url": "/v1/chat/completions", "body": {"model": "m", "messages": []}},\n  "response": {"body": {"a": 1},}}]');
    const tape = join(dir, 'bad-json.tape');
    const r = cli('add', tape, file);
    expect(r.stderr).toBe(
      `tapedeck: E_JSON ${file}: Invalid JSON at byte 118 (line 2, column 33): …nse": {"body": {"a": 1},⟪here⟫}}]…: expected a double-quoted object key; nothing was added.\n` +
        'hint: Fix the JSON text; tapedeck accepts strict RFC 8259 JSON only (no comments, trailing commas or NaN). Write the recordings as JSON (docs/hand-written.md).\n',
    );
    expect(r.status).toBe(1);
    expect(cli('canonical', file).stderr).toContain('Invalid JSON at byte 118 (line 2, column 33): …nse": {"body": {"a": 1},⟪here⟫}}]…: expected a double-quoted object key.');
    expect(existsSync(tape)).toBe(false);

    // Bytes that are no UTF-8, and a key given twice (JSON.parse would keep the last without a word).
    const latin1 = join(dir, 'latin1.json');
    writeFileSync(latin1, Buffer.concat([Buffer.from('{"request": {"url": "/x", "body": {"q": "caf'), Buffer.from([0xe9]), Buffer.from('"}}, "response": {"body": {}}}')]));
    expect(cli('add', tape, latin1).stderr).toMatch(/^tapedeck: E_UTF8 \S+latin1\.json: Invalid UTF-8 at byte 44 \(line 1, column 45\): …"\/x", "body": \{"q": "caf⟪here⟫/);
    const twice = join(dir, 'twice.json');
    writeFileSync(twice, '{"request": {"url": "/x"}, "response": {"status": 200, "status": 429}}');
    expect(cli('add', tape, twice).stderr).toMatch(/^tapedeck: E_DUPLICATE_KEY \S+twice\.json: Duplicate object key at byte 55 \(line 1, column 56\)/);
    expect(existsSync(tape)).toBe(false);
  });

  it('a UTF-8 byte order mark first is skipped (it was an invisible "Unexpected token"); past it, places are the file\'s own', async () => {
    const file = join(dir, 'bom.json');
    writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(good)]));
    const tape = join(dir, 'bom.tape');
    const r = cli('add', tape, file);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`added 1 recording to ${tape}\n`);
    const f = createFetch({ tape, mode: 'replay', summary: false });
    expect((await new OpenAI({ apiKey: 'replay', fetch: f }).chat.completions.create(ask as OpenAI.ChatCompletionCreateParamsNonStreaming)).choices[0]!.message.content).toBe('from a file with a BOM');
    await f.close();

    const broken = join(dir, 'bom-broken.json');
    writeFileSync(broken, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"request": ,}')]));
    expect(cli('add', join(dir, 'bom-broken.tape'), broken).stderr).toMatch(/^tapedeck: E_JSON \S+bom-broken\.json: Invalid JSON at byte 15 \(line 1, column 16\): … \{"request": ⟪here⟫,\}…: expected a JSON value/);
  });
});
