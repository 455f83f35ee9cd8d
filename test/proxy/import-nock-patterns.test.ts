// nock definitions a user edited into matching rules: a `path`, `scope` or `body` written as a
// regular expression literal (as `nock(/api\.openai\.com/).post(/\/v1\/chat.*/)` spells it in
// code) is a rule, not the request that was sent, and is a bad entry naming it. A pattern path
// once imported as a recording on a host taken from it (`/\/v1\/...` resolved as `//v1/...`,
// host "v1"), and a pattern body was called invalid JSON. A path starting with `//` stays on the
// scope's origin.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';
import { readNock } from '../../src/store/import/nock.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-nock-patterns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const answer = { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Blue' }, finish_reason: 'stop' }] };
const def = (over: Record<string, unknown> = {}) => ({
  scope: 'https://api.openai.com:443',
  method: 'POST',
  path: '/v1/chat/completions',
  body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
  status: 200,
  response: answer,
  rawHeaders: { 'content-type': 'application/json' },
  ...over,
});

async function importError(defs: unknown[], name: string): Promise<TapedeckError> {
  const src = join(dir, `${name}.json`);
  writeFileSync(src, JSON.stringify(defs));
  const err = await importRecordings(src, join(dir, `${name}.tape`), { from: 'nock' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TapedeckError);
  return err as TapedeckError;
}

describe('a nock definition written as a matching rule', () => {
  it('a regular-expression path is a bad entry naming the entry, the field and the fix, not a recording on host "v1"', async () => {
    const e = await importError([def(), def({ path: '/\\/v1\\/chat.*/' })], 'regex-path');
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.message).toMatch(/entry 1 \(\[1\]\), field path: .*regular expression/);
    expect(e.message).toMatch(/the path the request was sent to/);
    expect(e.message).toMatch(/no tape written/);
  });

  it('a regular-expression scope says it is a pattern, not an origin', async () => {
    const e = await importError([def({ scope: '/api\\.openai\\.com/' })], 'regex-scope');
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.message).toMatch(/entry 0 \(\[0\]\), field scope: .*regular expression/);
  });

  it('a regular-expression body is named as a pattern, not as invalid JSON', async () => {
    const e = await importError([def({ body: '/.*hello.*/' })], 'regex-body');
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.message).toMatch(/entry 0 \(\[0\]\), field body: .*regular expression.*write the body that was sent/);
  });

  it('--skip-bad keeps the recorded definitions and lists the pattern', async () => {
    const src = join(dir, 'skip.json');
    writeFileSync(src, JSON.stringify([def(), def({ path: '/\\/v1\\/chat.*/i' })]));
    const report = await importRecordings(src, join(dir, 'skip.tape'), { from: 'nock', skipBad: true });
    expect(report.records).toBe(1);
    expect(report.skipped.map((s) => s.reason)).toEqual([expect.stringMatching(/regular expression/)]);
  });
});

describe('a path starting with //', () => {
  it("stays on the scope's origin (not a host named by the path)", () => {
    const read = readNock(JSON.stringify([def({ path: '//v1/chat/completions' })]), 'dbl.json');
    expect([...read.exchanges].map((x) => x.request.url)).toEqual(['https://api.openai.com//v1/chat/completions']);
  });
});

describe('a recorded path that merely ends in /', () => {
  it('imports as the path it is (parentheses, a query, no pattern)', () => {
    const paths = ['/odata/Items(1)/', '/v1/files?purpose=a/', '/v1/models/'];
    const read = readNock(JSON.stringify(paths.map((path) => def({ path }))), 'slash.json');
    expect([...read.exchanges].map((x) => x.request.url)).toEqual(paths.map((p) => `https://api.openai.com${p}`));
    expect(read.bad).toEqual([]);
  });
});

describe('a definition without its `response`', () => {
  // nock's recorder always writes `response` ("" for an empty answer): one without it was
  // edited, and once imported as an empty 200 that an SDK read as an empty completion.
  it('is a bad entry naming the field and the fix, not an empty answer', async () => {
    const { response: _gone, ...noResponse } = def();
    const e = await importError([def(), noResponse], 'no-response');
    expect(e.code).toBe('E_IMPORT_ENTRY');
    expect(e.message).toMatch(/entry 1 \(\[1\]\), field response: is missing/);
    expect(e.message).toMatch(/"response": ""/);
  });

  it('an answer that has no body (204, 304, HEAD) needs none', () => {
    const defs = [
      { ...def({ status: 204, method: 'DELETE', path: '/v1/files/f1' }), response: undefined },
      { ...def({ status: 200, method: 'HEAD', path: '/v1/models' }), response: undefined },
      { ...def({ status: 304, method: 'GET', path: '/v1/models' }), response: undefined },
    ].map((d) => JSON.parse(JSON.stringify(d)) as Record<string, unknown>);
    expect(defs.every((d) => !('response' in d))).toBe(true);
    const read = readNock(JSON.stringify(defs), 'empty.json');
    expect([...read.exchanges].map((x) => [x.response.status, x.response.body.length])).toEqual([
      [204, 0],
      [200, 0],
      [304, 0],
    ]);
    expect(read.bad).toEqual([]);
  });
});
