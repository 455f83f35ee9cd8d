// An uploaded `.env` file (openai.files.create): keys with a known format were masked, but
// `DB_PASSWORD=…` and `AWS_SECRET_ACCESS_KEY=…` reached the tape in clear, and `tapedeck scan`
// passed it. A secret-named variable's value in a file part is now masked as a secret member's
// is (keyed: the same file replays, another password misses), and scan finds such lines on a tape
// written with secrets kept. Through createFetch with the real openai SDK.
import OpenAI, { toFile } from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { envSecrets } from '../../src/store/env-secrets.ts';
import { redactor } from '../../src/store/redact.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-env-upload-'));
let server: Server;
let base = '';
let n = 0;
const PASSWORD = 'Pg7xQ2vLm9Rt4Wz8';
const AWS = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY';
const envFile = (pw: string) => `DB_HOST=db.internal\nDB_PASSWORD=${pw}\nexport AWS_SECRET_ACCESS_KEY="${AWS}"\nLOG_LEVEL=debug\n`;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `file-${n}`, object: 'file', bytes: 120, created_at: 1, filename: '.env', purpose: 'assistants' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const upload = async (f: typeof fetch, pw: string) => {
  const c = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, fetch: f });
  try {
    return (await c.files.create({ file: await toFile(Buffer.from(envFile(pw)), '.env'), purpose: 'assistants' })).id;
  } catch (e) {
    return `ERR ${(e as { status?: number }).status}`;
  }
};

describe('an uploaded .env file', () => {
  it('its secret-named values are masked on the tape; the same file replays, another password misses', async () => {
    const tape = join(dir, 'upload.tape');
    const rec = createFetch({ tape, mode: 'record' });
    let id;
    try {
      id = await upload(rec, PASSWORD);
    } finally {
      await rec.close();
    }
    const bytes = readFileSync(tape);
    expect(bytes.includes(Buffer.from(PASSWORD))).toBe(false);
    expect(bytes.includes(Buffer.from(AWS))).toBe(false);
    expect(bytes.includes(Buffer.from('DB_HOST=db.internal'))).toBe(true);
    expect(secretsInValue((await readTape(tape)).records[0]!.value)).toEqual([]);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await upload(play, PASSWORD)).toBe(id);
      expect(await upload(play, 'Other7xQ2vLm9Rt4W')).toBe('ERR 400');
    } finally {
      await play.close();
    }
  });

  it('scan finds such values on a tape written with secrets kept', async () => {
    const tape = join(dir, 'kept.tape');
    const rec = createFetch({ tape, mode: 'record', redact: { keepSecrets: true } });
    try {
      await upload(rec, PASSWORD);
    } finally {
      await rec.close();
    }
    const found = secretsInValue((await readTape(tape)).records[0]!.value);
    expect(found.map((f) => f.kind)).toEqual(['secret member', 'secret member']);
  });

  it('envSecrets: names as members are judged, quotes and export kept, other lines untouched', () => {
    const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
    expect(envSecrets(envFile(PASSWORD), r)).toBe(`DB_HOST=db.internal\nDB_PASSWORD=${r.mask(PASSWORD)}\nexport AWS_SECRET_ACCESS_KEY="${r.mask(AWS)}"\nLOG_LEVEL=debug\n`);
    expect(envSecrets('x = 1 + 2\nTOKEN_COUNT=5\n', r)).toBe('x = 1 + 2\nTOKEN_COUNT=5\n');
  });
});
