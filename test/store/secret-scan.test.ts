// `tapedeck scan`: secrets planted in every place a record holds them (request and answer headers,
// URL query, JSON bodies at depth, text, server-sent events, NDJSON lines, AWS event-stream frames
// and the base64 chunks inside them, ReplayCache values), written to tapes without redaction as
// an older version, a hand-written file or an importer would; the CLI names each one's file,
// record and path and exits 1. A tape recorded through today's recorder, and one with masks,
// scan clean (exit 0).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';
import { secretsInBytes, secretsInValue } from '../../src/store/secret-scan.ts';
import { crc32, FRAME_MAGIC } from '../../src/store/tape-codec.ts';
import { appendFrames, appendRecords, createTape } from '../../src/store/tape-file.ts';
import { recordEveryProvider } from '../drift/provider-answers.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-scan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const scan = (...args: string[]) => spawnSync(process.execPath, [CLI, 'scan', ...args], { cwd: dir, encoding: 'utf8' });
/** One byte of a tape changed, as a bad disk or a careless edit leaves it. */
const damage = (tape: string, at: number) => {
  const b = readFileSync(tape);
  b[at]! ^= 0xff;
  writeFileSync(tape, b);
};
/** The line a finding in damaged bytes gets: the record, where the match starts, the damaged region. */
const damagedFinding = (tape: string, label: string, at: number, region: [number, number], kind: string, secret: string) =>
  `${tape}: ${label} (byte ${at}) damaged bytes ${region[0]}..${region[1]}: ${kind} ${JSON.stringify(secret.slice(0, 4) + '…')} (${secret.length} chars)`;

const enc = new TextEncoder();
const SECRET = {
  openai: 'sk-proj-Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9Pz0X',
  anthropic: 'sk-ant-api03-Mn8Bv7Cx6Zl5Kj4Hg3Fd2Sa1Qp0Oi',
  google: 'AIzaSyD9x8W7v6U5t4S3r2Q1p0O9n8M7l6K5j4I',
  aws: 'AKIAQ7W3E5R7T9Y1U3I5',
  bearer: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0.c2lnbmF0dXJl',
  clientSecret: 'a8F3kQ9zL2mX7vB1nC4tY6wR0pE5',
  groq: 'gsk_P0o9I8u7Y6t5R4e3W2q1A2s3D4f5',
};

const httpRecord = (over: { request?: object; response?: object }) => ({
  v: 1,
  kind: 'http',
  match: 'llm',
  route: 'POST /v1/chat/completions',
  key: '0'.repeat(64),
  trace: '1'.repeat(64),
  request: { method: 'POST', url: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, ...over.request },
  response: { status: 200, headers: { 'content-type': 'application/json' }, body: enc.encode('{"choices":[]}'), ...over.response },
  recordedAt: '2026-01-01T00:00:00.000Z',
  durationMs: 1,
});

const frame = (type: string, payload: unknown) =>
  encodeEventStreamMessage({
    headers: [
      { name: ':event-type', type: 'string', value: type },
      { name: ':message-type', type: 'string', value: 'event' },
    ],
    body: enc.encode(JSON.stringify(payload)),
  });

/** Each planted secret: the record that holds it, and the path the scan must name. */
const PLANTED: { name: string; value: unknown; path: string; kind: string; secret: string }[] = [
  { name: 'request header', value: httpRecord({ request: { headers: { authorization: `Bearer ${SECRET.bearer}` } } }), path: '$.request.headers.authorization', kind: 'bearer token', secret: `Bearer ${SECRET.bearer}` },
  { name: 'request URL query', value: httpRecord({ request: { url: `/v1beta/models/gemini-2.5-flash:generateContent?key=${SECRET.google}` } }), path: '$.request.url', kind: 'key format', secret: SECRET.google },
  { name: 'secret-named member at depth', value: httpRecord({ request: { body: { model: 'gpt-4o', messages: [], metadata: { oauth: { client_secret: SECRET.clientSecret } } } } }), path: '$.request.body.metadata.oauth.client_secret', kind: 'secret member', secret: SECRET.clientSecret },
  { name: 'key pasted into a prompt', value: httpRecord({ request: { body: { model: 'gpt-4o', messages: [{ role: 'user', content: `my key is ${SECRET.openai}, why?` }] } } }), path: '$.request.body.messages[0].content', kind: 'key format', secret: SECRET.openai },
  { name: 'answer header', value: httpRecord({ response: { headers: { 'content-type': 'application/json', 'x-debug-key': SECRET.anthropic } } }), path: '$.response.headers["x-debug-key"]', kind: 'key format', secret: SECRET.anthropic },
  { name: 'JSON answer body', value: httpRecord({ response: { body: enc.encode(JSON.stringify({ choices: [{ message: { content: `use ${SECRET.groq}` } }] })) } }), path: '$.response.body (JSON).choices[0].message.content', kind: 'key format', secret: SECRET.groq },
  {
    name: 'server-sent event',
    value: httpRecord({ response: { headers: { 'content-type': 'text/event-stream' }, body: enc.encode(`data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: {"choices":[{"delta":{"content":"${SECRET.aws}"}}]}\n\ndata: [DONE]\n\n`) } }),
    path: '$.response.body event 2.choices[0].delta.content',
    kind: 'key format',
    secret: SECRET.aws,
  },
  {
    name: 'NDJSON line',
    value: httpRecord({ response: { headers: { 'content-type': 'application/x-ndjson' }, body: enc.encode(`{"message":{"content":"a"},"done":false}\n{"message":{"content":"b"},"api_key":"${SECRET.clientSecret}","done":true}\n`) } }),
    path: '$.response.body line 2.api_key',
    kind: 'secret member',
    secret: SECRET.clientSecret,
  },
  {
    name: 'AWS event-stream frame (base64 chunk)',
    value: httpRecord({
      response: {
        headers: { 'content-type': 'application/vnd.amazon.eventstream' },
        body: Buffer.concat([frame('chunk', { bytes: Buffer.from(JSON.stringify({ type: 'content_block_delta', delta: { type: 'text_delta', text: 'hello' } })).toString('base64') }), frame('chunk', { bytes: Buffer.from(JSON.stringify({ type: 'content_block_delta', delta: { type: 'text_delta', text: SECRET.anthropic } })).toString('base64') })]),
      },
    }),
    path: '$.response.body frame 2.bytes (JSON).delta.text',
    kind: 'key format',
    secret: SECRET.anthropic,
  },
  { name: 'ReplayCache value', value: { v: 1, key: 'k', request: { model: 'gpt-4o' }, value: { note: `token ${SECRET.openai}` }, recordedAt: '2026-01-01T00:00:00.000Z' }, path: '$.value.note', kind: 'key format', secret: SECRET.openai },
];

describe('tapedeck scan', () => {
  it.each(PLANTED)('finds a secret in a $name, naming the file, record and path', async ({ value, path, kind, secret }) => {
    const tape = join(dir, `${path.replace(/[^a-z0-9]+/gi, '-')}.tape`);
    await createTape(tape);
    // A clean record first, so the record number and offset are checked too.
    const { offsets } = await appendRecords(tape, [httpRecord({}), value]);
    const r = scan(tape);
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toBe(`${tape}: record 1 (byte ${offsets[1]}) ${path}: ${kind} ${JSON.stringify(secret.slice(0, 4) + '…')} (${secret.length} chars)\n`);
    // Only the first characters are shown.
    expect(r.stdout + r.stderr).not.toContain(secret.slice(0, 12));
    expect(r.stderr).toContain('possible credential');
    expect(r.stderr).toContain('hint:');
  });

  it('a folder is scanned through; a tape recorded today, and masks, are clean (exit 0)', async () => {
    const clean = join(dir, 'clean');
    mkdirSync(join(clean, 'sub'), { recursive: true });
    await recordEveryProvider(join(clean, 'sub', 'every.tape'));
    const masked = join(clean, 'masked.tape');
    await createTape(masked);
    await appendRecords(masked, [
      httpRecord({ request: { headers: { authorization: '[REDACTED]', 'x-api-key': '[REDACTED:0123456789abcdef]' }, body: { model: 'gpt-4o', messages: [], password: 'changeme', api_key: '[REDACTED]' } } }),
    ]);
    const r = scan(clean);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^No credentials found in 2 tapes \(\d+ records\)\.\n$/);
    expect(r.status).toBe(0);
  });

  it('says where several findings are, and a missing tape or no argument is an error', async () => {
    const many = join(dir, 'many.tape');
    await createTape(many);
    await appendRecords(many, PLANTED.map((p) => p.value));
    const r = scan(many);
    expect(r.status).toBe(1);
    expect(r.stdout.trim().split('\n')).toHaveLength(PLANTED.length);
    expect(scan(join(dir, 'nope.tape')).status).toBe(1);
    expect(scan().status).toBe(2);
  });

  it('judges secret-named members by how random their value looks', () => {
    expect(secretsInValue({ password: 'changeme', api_key: 'none', token: SECRET.clientSecret })).toEqual([]);
    expect(secretsInValue({ password: SECRET.clientSecret }).map((f) => f.kind)).toEqual(['secret member']);
  });

  it('judges the secret-named fields of a form body the same way, whatever its content type', () => {
    // As nock records a form (no content type) and fetch sends one as a string (text/plain).
    const form = `user=ada&password=changeme&client_secret=${SECRET.clientSecret}`;
    for (const body of [form, enc.encode(form)]) {
      const found = secretsInValue({ request: { headers: { 'content-type': 'text/plain' }, body } });
      expect(found.map((f) => [f.path, f.kind])).toEqual([['$.request.body field "client_secret"', 'secret member']]);
      expect(JSON.stringify(found)).not.toContain(SECRET.clientSecret);
    }
    // Masked fields, a form's other fields and prose are not findings.
    expect(secretsInValue({ body: 'client_secret=%5BREDACTED%3Aab12cd34ef56ab78%5D&user=a8F3kQ9zL2mX7vB1nC4tY6wR0pE5' })).toEqual([]);
    expect(secretsInValue({ body: 'Not a form: client_secret=' })).toEqual([]);
  });
});

// A tape with damage is one scan could not fully read: its damaged bytes are searched as they are
// (the key formats; secret-named members need a record's structure), the damage is listed with
// its byte offsets, and the tape is not called clean (exit 1) even when nothing is found. Records
// after the damage keep the numbers they had.
describe('tapedeck scan on a damaged tape', () => {
  // 56 characters: msgpack's length byte before it is `8`, a word character next to `Bearer`.
  const token = `Bearer ${SECRET.openai}abcdefghij`;
  const bearer = { value: httpRecord({ request: { headers: { authorization: token } } }), kind: 'bearer token', secret: token };
  const prompt = PLANTED[3]!;

  it('searches raw bytes for the key formats, a msgpack length byte before a string notwithstanding', () => {
    const found = secretsInBytes(Buffer.concat([Buffer.from([0xd9, token.length]), Buffer.from(token), Buffer.from([0xc4, 0x41]), Buffer.from(SECRET.aws)]));
    expect(token.length).toBe(0x38);
    expect(found).toEqual([
      { offset: 2, kind: 'bearer token', excerpt: `"Bear…" (${token.length} chars)` },
      { offset: 2 + token.length + 2, kind: 'key format', excerpt: `"AKIA…" (${SECRET.aws.length} chars)` },
    ]);
  });

  it("finds a key in a damaged record's bytes, lists the damage and numbers the records after it as before", async () => {
    const tape = join(dir, 'damaged.tape');
    await createTape(tape);
    const { offsets } = await appendRecords(tape, [httpRecord({}), bearer.value, httpRecord({}), prompt.value]);
    // Record 1's CRC changed: the frame is damage, the token in it untouched.
    damage(tape, offsets[1]! + 8);
    const at = readFileSync(tape).indexOf(bearer.secret);
    const r = scan(tape);
    expect(r.status, r.stdout + r.stderr).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toContain(damagedFinding(tape, 'record 1', at, [offsets[1]!, offsets[2]! - 1], bearer.kind, bearer.secret));
    expect(lines).toContain(`${tape}: record 3 (byte ${offsets[3]}) ${prompt.path}: ${prompt.kind} ${JSON.stringify(prompt.secret.slice(0, 4) + '…')} (${prompt.secret.length} chars)`);
    expect(lines.filter((l) => l.startsWith(`${tape}: damaged bytes ${offsets[1]}..${offsets[2]! - 1} (record 1)`))).toHaveLength(1);
    expect(r.stdout).toContain('E_TAPE_CORRUPT');
    expect(r.stdout + r.stderr).not.toContain('No credentials found');
    expect(r.stdout + r.stderr).not.toContain(bearer.secret.slice(0, 12));
    expect(r.stderr).toContain('possible credential');
    expect(r.stderr).toContain(`hint: check what the damage held (tapedeck verify ${tape}), then drop it with tapedeck prune ${tape}`);
  });

  it('is not clean when only the damage was left unread: the damage is listed, exit 1', async () => {
    const tape = join(dir, 'damaged-clean.tape');
    await createTape(tape);
    const { offsets } = await appendRecords(tape, [httpRecord({}), httpRecord({}), httpRecord({})]);
    damage(tape, offsets[1]!); // the frame magic: reading resumes at the next frame
    const r = scan(tape);
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(`${tape}: damaged bytes ${offsets[1]}..${offsets[2]! - 1} (record 1), searched for key formats only: E_TAPE_CORRUPT`);
    expect(r.stdout + r.stderr).not.toContain('No credentials found');
    expect(r.stderr).toMatch(/^tapedeck scan: 1 tape has damage scan could not fully check/m);
    expect(r.stderr).toContain(`tapedeck prune ${tape}`);
  });

  it('searches a record whose checksum holds but which does not decode, and the bytes of a torn tail', async () => {
    const tape = join(dir, 'undecodable.tape');
    await createTape(tape);
    // 0xC1 is no msgpack value: the frame is sound, its payload undecodable, the token in plain text.
    const payload = Buffer.concat([Buffer.from([0xc1]), Buffer.from(`Bearer ${SECRET.bearer}`)]);
    const head = Buffer.alloc(12);
    Buffer.from(FRAME_MAGIC).copy(head);
    head.writeUInt32BE(payload.length, 4);
    head.writeUInt32BE(crc32(payload), 8);
    const first = await appendRecords(tape, [httpRecord({})]);
    const bad = await appendFrames(tape, [Buffer.concat([head, payload])]);
    const after = await appendRecords(tape, [prompt.value]);
    // The last record cut short, as a crash in an append leaves it: its key is still on disk.
    const size = readFileSync(tape).length;
    writeFileSync(tape, readFileSync(tape).subarray(0, size - 20));
    const r = scan(tape);
    expect(r.status, r.stdout + r.stderr).toBe(1);
    const lines = r.stdout.trim().split('\n');
    const bytes = readFileSync(tape);
    expect(first.offsets[0]).toBeLessThan(bad.offsets[0]!);
    expect(lines).toContain(damagedFinding(tape, 'record 1', bytes.indexOf(`Bearer ${SECRET.bearer}`), [bad.offsets[0]!, after.offsets[0]! - 1], 'bearer token', `Bearer ${SECRET.bearer}`));
    expect(lines).toContain(damagedFinding(tape, 'record 2', bytes.indexOf(SECRET.openai), [after.offsets[0]!, bytes.length - 1], 'key format', SECRET.openai));
    expect(lines.filter((l) => l.includes(', searched for key formats only: '))).toHaveLength(2);
    expect(r.stdout).toContain('E_TAPE_TORN_TAIL');
  });

  it('--staged refuses a staged damaged tape holding a key, as the pre-commit hook runs it', async () => {
    const repo = join(dir, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    const tape = join(repo, 'chat.tape');
    await createTape(tape);
    const { offsets } = await appendRecords(tape, [httpRecord({}), bearer.value]);
    damage(tape, offsets[1]! + 8);
    execFileSync('git', ['add', 'chat.tape'], { cwd: repo });
    const r = spawnSync(process.execPath, [CLI, 'scan', '--staged'], { cwd: repo, encoding: 'utf8' });
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toContain(damagedFinding('chat.tape', 'record 1', readFileSync(tape).indexOf(bearer.secret), [offsets[1]!, readFileSync(tape).length - 1], bearer.kind, bearer.secret));
    expect(r.stderr).toContain('tapedeck prune chat.tape');
    expect(r.stderr).toContain('git add');
  });
});
