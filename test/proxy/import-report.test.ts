// What an import reports: the masked values counted place by place (a header, a query parameter
// (masked percent-encoded in the URL), a form field, each once per record it is in), as
// docs/migrate.md says; the entries skipped with --skip-bad, each line naming its place once;
// and an import with --skip-bad of which no entry imports refused with no tape written.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings } from '../../src/proxy/import.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

const ORIGIN = 'http://127.0.0.1:4555';
const KEY = 'sk-proj-POLLYSECRET1234567890abcdefABCDEF';

/** A Polly.js (fetch adapter, fs persister) entry around the OpenAI SDK. */
const pollyEntry = (method: string, url: string, headers: [string, string][], body: string | undefined, answer: string) => ({
  _id: '6a4cfa3d3b0d1d7e1b3e7b42c1f6a9e2',
  _order: 0,
  cache: {},
  request: {
    bodySize: body?.length ?? 0,
    cookies: [],
    headers: headers.map(([name, value]) => ({ name, value })),
    headersSize: 411,
    httpVersion: 'HTTP/1.1',
    method,
    ...(body === undefined ? {} : { postData: { mimeType: headers.find(([n]) => n === 'content-type')?.[1] ?? 'text/plain', params: [], text: body } }),
    queryString: [...new URL(url).searchParams].map(([name, value]) => ({ name, value })),
    url,
  },
  response: {
    bodySize: answer.length,
    content: { mimeType: 'application/json', size: answer.length, text: answer },
    cookies: [],
    headers: [
      { name: 'connection', value: 'keep-alive' },
      { name: 'content-type', value: 'application/json' },
    ],
    headersSize: 146,
    httpVersion: 'HTTP/1.1',
    redirectURL: '',
    status: 200,
    statusText: 'OK',
  },
  startedDateTime: '2026-11-29T20:57:30.875Z',
  time: 12,
  timings: { blocked: -1, connect: -1, dns: -1, receive: 0, send: 0, ssl: -1, wait: 12 },
});
const pollyHar = (entries: unknown[]) => JSON.stringify({ log: { _recordingName: 'openai-chat', creator: { comment: 'persister:fs', name: 'Polly.JS', version: '6.0.6' }, entries, pages: [], version: '1.2' } }, null, 2);

const sdkHeaders: [string, string][] = [
  ['accept', 'application/json'],
  ['authorization', `Bearer ${KEY}`],
  ['content-type', 'application/json'],
  ['user-agent', 'OpenAI/JS 6.49.0'],
];
const chatAnswer = JSON.stringify({ id: 'chatcmpl-5', object: 'chat.completion', created: 1700000000, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'echo: Hi' }, finish_reason: 'stop' }] });
const chatEntry = (text: string) => pollyEntry('POST', `${ORIGIN}/v1/chat/completions`, sdkHeaders, JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }), chatAnswer);

/** The Polly recording of the trial: three SDK calls with the key, and a GET with two keys in its query and one in a header. */
const pollyTrial = () =>
  pollyHar([
    chatEntry('Hi'),
    chatEntry('Stream please'),
    pollyEntry('POST', `${ORIGIN}/v1/embeddings`, sdkHeaders, JSON.stringify({ model: 'text-embedding-3-small', input: 'hello' }), '{"object":"list","data":[]}'),
    pollyEntry('GET', `${ORIGIN}/v1/models?key=AIzaSyPOLLYQUERYKEY1234567890abcdefgh&api-key=azurekey123456`, [['api-key', 'azure-api-key-secret-value-123456']], undefined, '{"object":"list","data":[{"id":"gpt-4o-mini","object":"model"}]}'),
  ]);

describe('the count of masked values', () => {
  it('counts each masked value once per place: headers, query parameters (percent-encoded in the URL), form fields', async () => {
    const src = join(dir, 'polly.har');
    writeFileSync(src, pollyTrial());
    const report = await importRecordings(src, join(dir, 'polly.tape'), { onWarning: () => {} });
    expect(report.records).toBe(4);
    // Three Authorization headers, the GET's api-key header, its ?key= and its ?api-key=.
    expect(report.masked).toBe(6);

    const form = join(dir, 'form.har');
    writeFileSync(form, pollyHar([pollyEntry('POST', `${ORIGIN}/oauth/token`, [['content-type', 'application/x-www-form-urlencoded']], 'grant_type=client_credentials&client_id=app&client_secret=s3cr3t-value-0123456789', '{"token_type":"bearer"}')]));
    expect((await importRecordings(form, join(dir, 'form.tape'), { onWarning: () => {} })).masked).toBe(1);
  });

  it('one key sent with every request is counted once per request (values masked, not distinct secrets)', async () => {
    const src = join(dir, 'same-key.har');
    writeFileSync(src, pollyHar(Array.from({ length: 5 }, (_, i) => chatEntry(`question ${i}`))));
    expect((await importRecordings(src, join(dir, 'same-key.tape'), { onWarning: () => {} })).masked).toBe(5);
  });

  it('the command line says "N values masked"', () => {
    const src = join(dir, 'polly-cli.har');
    writeFileSync(src, pollyTrial());
    const stdout = execFileSync(process.execPath, [CLI, 'import', src, join(dir, 'polly-cli.tape')], { encoding: 'utf8' });
    expect(stdout).toMatch(/^wrote .*polly-cli\.tape: 4 records from a HAR \(0 streams; 6 values masked\)$/m);
  });

  it('the command line lists a path called with many queries once, with the count of queries', () => {
    const src = join(dir, 'queries.har');
    const models = '{"object":"list","data":[]}';
    writeFileSync(
      src,
      pollyHar([
        ...['a', 'b', 'c'].map((q) => pollyEntry('GET', `${ORIGIN}/v1/models?after=${q}`, [], undefined, models)),
        pollyEntry('GET', `${ORIGIN}/v1/files?purpose=batch`, [], undefined, models),
        chatEntry('Hi'),
      ]),
    );
    const stdout = execFileSync(process.execPath, [CLI, 'import', src, join(dir, 'queries.tape')], { encoding: 'utf8' });
    const rows = stdout.split('\n').filter((l) => l.startsWith('  '));
    expect(rows).toEqual(['      3  http  GET /v1/models (3 queries)', '      1  http  GET /v1/files?purpose=batch', '      1  openai  POST /v1/chat/completions']);
  });
});

// ---- --skip-bad ----

const badStatus = (h: { log: { entries: { response: { status: number } }[] } }, ...at: number[]) => {
  for (const i of at) h.log.entries[i]!.response.status = 0;
  return JSON.stringify(h);
};
const parsed = () => JSON.parse(pollyTrial()) as { log: { entries: { response: { status: number } }[] } };

describe('--skip-bad', () => {
  it('lists a skipped entry by its place once, then what is wrong', async () => {
    const src = join(dir, 'one-bad.har');
    writeFileSync(src, badStatus(parsed(), 1));
    const report = await importRecordings(src, join(dir, 'one-bad.tape'), { skipBad: true, onWarning: () => {} });
    expect(report.records).toBe(3);
    expect(report.skipped).toEqual([{ where: 'log.entries[1].response.status', reason: 'is 0: the request got no response (blocked, aborted or failed)' }]);

    const stdout = execFileSync(process.execPath, [CLI, 'import', src, join(dir, 'one-bad-cli.tape'), '--skip-bad'], { encoding: 'utf8' });
    const lines = stdout.split('\n');
    const at = lines.indexOf('skipped 1 entry:');
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe('  log.entries[1].response.status: is 0: the request got no response (blocked, aborted or failed)');
  });

  it('when no entry imports: an error naming the file and the first bad entry, no tape written, an existing tape kept', async () => {
    const src = join(dir, 'all-bad.har');
    writeFileSync(src, badStatus(parsed(), 0, 1, 2, 3));
    const out = join(dir, 'all-bad.tape');
    const err = await importRecordings(src, out, { skipBad: true, onWarning: () => {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { file: src, entry: 0, field: 'response.status' } });
    expect((err as Error).message).toContain(`${src}: none of its 4 entries imports`);
    expect((err as Error).message).toContain('entry 0 (log.entries[0]), field response.status: is 0');
    expect((err as Error).message).toContain('no tape written');
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir).filter((n) => n.includes('all-bad.tape'))).toEqual([]);

    // With --force over an existing tape: the tape is kept as it was.
    writeFileSync(out, 'not a tape');
    await expect(importRecordings(src, out, { skipBad: true, force: true, onWarning: () => {} })).rejects.toMatchObject({ code: 'E_IMPORT_ENTRY' });
    expect(readFileSync(out, 'utf8')).toBe('not a tape');
    rmSync(out);
  });

  it('when no entry imports because the keyer refuses every body: refused too', async () => {
    const h = JSON.parse(pollyTrial()) as { log: { entries: { request: { postData?: { text: string } } }[] } };
    h.log.entries = h.log.entries.slice(0, 2);
    for (const e of h.log.entries) e.request.postData!.text = '{"model":"gpt-4o-mini","model":"x","messages":[]}';
    const src = join(dir, 'all-refused.har');
    writeFileSync(src, JSON.stringify(h));
    const err = await importRecordings(src, join(dir, 'all-refused.tape'), { skipBad: true, onWarning: () => {} }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_IMPORT_ENTRY', details: { entry: 0, field: 'request.body' } });
    expect((err as Error).message).toMatch(/none of its 2 entries imports.*Duplicate object key/);
    expect(existsSync(join(dir, 'all-refused.tape'))).toBe(false);
  });

  it('the command line: exit 1, the error on stderr, nothing on stdout, no tape', () => {
    const src = join(dir, 'all-bad-cli.har');
    writeFileSync(src, badStatus(parsed(), 0, 1, 2, 3));
    const out = join(dir, 'all-bad-cli.tape');
    let r: { status: number; stdout: string; stderr: string } = { status: 0, stdout: '', stderr: '' };
    try {
      execFileSync(process.execPath, [CLI, 'import', src, out, '--skip-bad'], { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      r = e as typeof r;
    }
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^tapedeck: E_IMPORT_ENTRY .*all-bad-cli\.har: none of its 4 entries imports/m);
    expect(existsSync(out)).toBe(false);
  });
});
