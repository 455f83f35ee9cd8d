// A record of a record version newer than this tapedeck reads (`"v": 9`, as a newer tapedeck
// would write it) is not damage: the JSON import refuses it with E_TAPE_VERSION naming the
// record and the upgrade, `tapedeck verify` lists it as a problem (exit 1), and a replay that
// reaches it answers E_TAPE_VERSION with the upgrade, through the real OpenAI SDK, never
// "damaged" (before: imported silently, verify said ok, replay said the tape was damaged).
// The CLI runs from dist: build first (flock /tmp/build.lock npm run build).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { inRecordOrder } from '../../src/store/record-order.ts';
import { newerRecordVersion } from '../../src/store/record-version.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-record-version-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

const ORIGIN = 'https://api.openai.com';
const ASK = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content }] });

/** A tape recorded by createFetch (two chat calls), and the same tape with the first record's `v` made 9. */
const recorded = join(dir, 'recorded.tape');
const newer = join(dir, 'newer.tape');

beforeAll(async () => {
  const upstream = (async (input: string | URL | Request, init?: RequestInit) => {
    const sent = await new Request(input, init).text();
    const asked = (JSON.parse(sent) as { messages: { content: string }[] }).messages[0]!.content;
    const body = { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `answer to ${asked}` }, finish_reason: 'stop' }] };
    return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const f = createFetch({ tape: recorded, mode: 'record', fetch: upstream, onWarning: () => {} });
  try {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${ORIGIN}/v1`, fetch: f, maxRetries: 0 });
    await client.chat.completions.create(ASK('first'));
    await client.chat.completions.create(ASK('second'));
  } finally {
    await f.close();
  }
  const { header, records } = await readTape(recorded);
  await createTape(newer, { created: header.created, tapedeckVersion: header.tapedeckVersion, salt: header.salt ?? null });
  await appendRecords(newer, records.map((r, i) => inRecordOrder(i === 0 ? { ...(r.value as object), v: 9 } : r.value)));
});

describe('a record of a newer record version', () => {
  it('is told apart from this version and from damage', () => {
    expect(newerRecordVersion({ v: 9, kind: 'http', key: 'k' })).toMatchObject({ kind: 'http', version: 9, reads: [1] });
    expect(newerRecordVersion({ v: 1, kind: 'http' })).toBeUndefined();
    expect(newerRecordVersion({ v: 3, kind: 'mcp' })).toMatchObject({ kind: 'mcp', reads: [1, 2] });
    expect(newerRecordVersion({ v: 2, kind: 'mcp' })).toBeUndefined();
    expect(newerRecordVersion({ v: 2, request: {}, value: {} })).toMatchObject({ kind: 'cache' });
    // Not a newer writer's: another tool's kind, or a version that is no whole number.
    expect(newerRecordVersion({ v: 9, kind: 'someone-else' })).toBeUndefined();
    expect(newerRecordVersion({ v: 1.5, kind: 'http' })).toBeUndefined();
    expect(newerRecordVersion({ v: '9', kind: 'http' })).toBeUndefined();
  });

  it('in a tapedeck JSON export is refused by import with E_TAPE_VERSION naming the record, its version and the upgrade; no tape is written', async () => {
    const text = await exportTapeJSON(newer);
    const out = join(dir, 'imported.tape');
    const e = (await importTapeJSON(text, out).then(
      () => undefined,
      (x: unknown) => x,
    )) as TapedeckError;
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e).toMatchObject({ code: 'E_TAPE_VERSION', path: '$.records[0].v', details: { entry: 0, version: 9 } });
    expect(e.message).toContain('record 0 ($.records[0]) is an HTTP exchange record of record version 9; this tapedeck reads version 1 of it');
    expect(e.hint).toContain('upgrade tapedeck');
    expect(existsSync(out)).toBe(false);

    // The command line names the file too, and exits non-zero.
    const json = join(dir, 'newer.json');
    writeFileSync(json, text);
    const r = cli('import', json, out);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`E_TAPE_VERSION ${json}: Cannot import tape JSON: record 0 ($.records[0]) is an HTTP exchange record of record version 9`);
    expect(r.stderr).toContain('upgrade tapedeck');
    expect(existsSync(out)).toBe(false);
  });

  it('on a tape is a problem `tapedeck verify` lists (exit 1), with the upgrade; inspect marks its row', () => {
    const r = cli('verify', newer);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/E_TAPE_VERSION at byte \d+: record 0 is an HTTP exchange record of record version 9; this tapedeck reads version 1 of it\n/);
    expect(r.stdout).toContain('1 problem(s); the 2 records counted above are intact, 1 of them of a record version newer than this tapedeck reads: upgrade tapedeck to read it (npm install -D llm-tapedeck@latest)');
    expect(r.stdout).not.toMatch(/^ok$/m);
    // The tape it was made from is still ok.
    expect(cli('verify', recorded)).toMatchObject({ status: 0, stdout: expect.stringMatching(/\nok\n$/) });
    expect(cli('inspect', newer).stdout).toContain('[HTTP exchange record of record version 9: upgrade tapedeck to read it]');
  });

  it('answers the call it was recorded for with E_TAPE_VERSION and the upgrade through the OpenAI SDK, not "damaged"; the other record replays', async () => {
    const f = createFetch({ tape: newer, mode: 'replay', onWarning: () => {} });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${ORIGIN}/v1`, fetch: f, maxRetries: 0 });
      expect((await client.chat.completions.create(ASK('second'))).choices[0]!.message.content).toBe('answer to second');
      const e = (await client.chat.completions.create(ASK('first')).then(
        () => undefined,
        (x: unknown) => x,
      )) as InstanceType<typeof OpenAI.APIError>;
      expect(e).toBeInstanceOf(OpenAI.APIError);
      expect(e.status).toBe(400); // no SDK retries it: an upgrade, not a passing failure
      expect(e.headers?.get('x-tapedeck-error')).toBe('E_TAPE_VERSION');
      expect(e.message).toContain('is an HTTP exchange record of record version 9; this tapedeck reads version 1 of it');
      expect(e.message).toContain('upgrade tapedeck');
      expect(e.message).not.toContain('damaged');
    } finally {
      await f.close();
    }
  });

  it('found by the matcher (after a miss made it) answers E_TAPE_VERSION too', async () => {
    const f = createFetch({ tape: newer, mode: 'replay', onWarning: () => {} });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${ORIGIN}/v1`, fetch: f, maxRetries: 0 });
      await expect(client.chat.completions.create(ASK('not recorded'))).rejects.toMatchObject({ status: 400 });
      const e = (await client.chat.completions.create(ASK('first')).then(
        () => undefined,
        (x: unknown) => x,
      )) as InstanceType<typeof OpenAI.APIError>;
      expect(e).toBeInstanceOf(OpenAI.APIError);
      expect(e.headers?.get('x-tapedeck-error')).toBe('E_TAPE_VERSION');
      expect(e.message).toContain('record version 9');
      expect(e.message).not.toContain('damaged');
    } finally {
      await f.close();
    }
  });
});
