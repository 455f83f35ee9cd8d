// An AWS secret access key pasted into a prompt beside its access key id, under no name ("my
// creds are AKIA… wJalr…, why does s3 say denied?"), was stored as typed: only the `AKIA…` id
// has a format redaction knew, and `tapedeck scan` did not flag the secret either. A 40-character
// run of the secret's alphabet a short way from an id is now the secret: masked (keyed, as the id
// is) in bodies, answers and streams cut across events, and reported by scan in older tapes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';
import { echoing } from '../../src/store/echo-redact.ts';
import { redactAnswerBody } from '../../src/store/stream-redact.ts';
import { scanCommand } from '../../src/store/scan-cli.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { ALPHABET, UPPER, awsKeys } from './aws-keys.ts';

const SALT = '0123456789abcdef0123456789abcdef';
const r = redactor({ salt: SALT });
const { g, pick, newSecret, newId } = awsKeys(4011);

const ID = newId();
const SECRET = newSecret();
const ID_B = newId('ASIA');
const SECRET_B = newSecret();

const content = (t: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content: t }] });
const stored = (t: string): string => (r.value(content(t)) as ReturnType<typeof content>).messages[0]!.content;
const prompt = (t: string) => ({ v: 1, kind: 'http', request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: content(t) } });

describe('an AWS secret access key beside its id', () => {
  it('is masked in a prompt, keyed as the id is, however the two are written together', () => {
    const forms = [
      `my creds are ${ID} ${SECRET}, why does s3 say denied?`,
      `my creds are\n${ID}\n${SECRET}\nwhy does s3 say denied?`,
      `${ID} / ${SECRET}`,
      `aws_access_key_id=${ID} aws_secret_access_key=${SECRET}`,
      `[default]\naws_access_key_id = ${ID}\naws_secret_access_key = ${SECRET}\nregion = us-east-1`,
      `User name,Access key ID,Secret access key\nbob,${ID},${SECRET}`,
      `secret first: ${SECRET} (id ${ID})`,
      `the JSON: {\n    "AccessKey": {\n        "UserName": "bob",\n        "AccessKeyId": "${ID}",\n        "Status": "Active",\n        "SecretAccessKey": "${SECRET}"\n    }\n}`,
    ];
    for (const t of forms) {
      const out = stored(t);
      // The oracle: the text with each of the two values replaced by its own keyed mask.
      expect(out, t).toBe(t.replace(ID, r.mask(ID)).replace(SECRET, r.mask(SECRET)));
    }
    // Two requests that differ only in the secret stay two requests.
    const other = newSecret();
    expect(stored(`${ID} ${SECRET}`)).not.toBe(stored(`${ID} ${other}`));
  });

  it('is masked for any id and secret, either side of the id, a short way off', () => {
    const gaps = [' ', '\n', ' / ', ', ', '\t', '\n\n', ' and the secret is ', '"\n  "SecretAccessKey": "', `${'.'.repeat(60)} `, ':'];
    for (let i = 0; i < 400; i++) {
      const id = newId(g() < 0.5 ? 'AKIA' : 'ASIA');
      const secret = newSecret();
      const gap = gaps[Math.floor(g() * gaps.length)]!;
      const pair = g() < 0.7 ? `${id}${gap}${secret}` : `${secret}${gap}${id}`;
      const t = `creds: ${pair}. why denied?`;
      const out = stored(t);
      expect(out, t).toBe(t.replace(id, r.mask(id)).replace(secret, r.mask(secret)));
      expect(secretsInValue(prompt(t)).map((f) => f.excerpt).sort(), t).toEqual([`"${id.slice(0, 4)}…" (20 chars)`, `"${secret.slice(0, 4)}…" (40 chars)`].sort());
    }
  });

  it('leaves a 40-character run alone that is no secret, or has no id near it', () => {
    const sha = pick('0123456789abcdef', 40);
    const key = `sk-proj-${pick(ALPHABET.replace(/[/+]/g, ''), 30)}`;
    const cases = [
      // No id anywhere: a base64 run, with another key format in the text.
      [`blob ${SECRET} and key ${key}`, [key]],
      [`just base64: ${SECRET}`, []],
      // Beside an id: a git sha, a UUID, capitals and digits only, a 41- and a 39-character run.
      [`${ID} at commit ${sha}`, [ID]],
      [`${ID} request 123e4567-e89b-12d3-a456-426614174000`, [ID]],
      [`${ID} ${pick(`${UPPER}0123456789`, 40)}`, [ID]],
      [`${ID} ${SECRET}x`, [ID]],
      [`${ID} ${SECRET.slice(1)}`, [ID]],
      // An id far from the run (a paragraph apart).
      [`${ID} ${'lorem ipsum dolor sit amet '.repeat(8)}${SECRET}`, [ID]],
    ] as const;
    for (const [t, masked] of cases) {
      let want: string = t;
      for (const m of masked) want = want.replace(m, r.mask(m));
      expect(stored(t), t).toBe(want);
    }
  });

  it('is masked in a raw JSON body, a line break before it written as an escape', () => {
    const body = JSON.stringify(content(`creds: ${ID}\n${SECRET}\nwhy?`));
    const out = new TextDecoder().decode(r.bytes(new TextEncoder().encode(body), 'text/plain'));
    expect(out).not.toContain(SECRET);
    expect(out).toContain(`\\n${r.mask(SECRET)}\\n`);
  });

  it('is masked in an answer that repeats the secret alone, as the request masked it', () => {
    const req = { headers: { 'content-type': 'application/json' }, url: '/v1/chat/completions', body: new TextEncoder().encode(JSON.stringify(content(`my creds are ${ID} ${SECRET}, why denied?`))) };
    const masks = echoing(r, req);
    expect(masks.text(`The secret ${SECRET} looks fine.`)).toBe(`The secret ${r.mask(SECRET)} looks fine.`);
  });

  it('is masked in a streamed answer cut mid-secret, and with its id in another event', () => {
    for (const pieces of [
      [`Your creds: ${ID} ${SECRET.slice(0, 7)}`, SECRET.slice(7, 25), `${SECRET.slice(25)} are fine.`],
      [`Your id ${ID}`, ` and secret `, `${SECRET} are fine.`],
    ]) {
      const sse = pieces.map((p) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] })}\n\n`).join('') + 'data: [DONE]\n\n';
      const out = new TextDecoder().decode(redactAnswerBody(new TextEncoder().encode(sse), 'text/event-stream', r).body);
      const joined = out
        .split('\n\n')
        .filter((e) => e.startsWith('data: {'))
        .map((e) => (JSON.parse(e.slice(6)) as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content)
        .join('');
      expect(joined, sse).toBe(pieces.join('').replace(ID, r.mask(ID)).replace(SECRET, r.mask(SECRET)));
      for (let i = 0; i + 8 <= SECRET.length; i++) expect(out, sse).not.toContain(SECRET.slice(i, i + 8));
    }
  });

  it('is flagged by scan in a record written before, on one line, on two, and cut across events', () => {
    for (const t of [`my creds are ${ID} ${SECRET}`, `my creds are\n${ID}\n${SECRET}\nwhy?`]) {
      const found = secretsInValue(prompt(t));
      expect(found.map((f) => f.excerpt).sort(), t).toEqual([`"${ID.slice(0, 4)}…" (20 chars)`, `"${SECRET.slice(0, 4)}…" (40 chars)`].sort());
    }
    const sse = [`id ${ID} and`, ` ${SECRET.slice(0, 10)}`, `${SECRET.slice(10)} ok`].map((p) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] })}\n\n`).join('');
    const found = secretsInValue({ v: 1, kind: 'http', request: { method: 'GET', url: '/', headers: {} }, response: { status: 200, headers: { 'content-type': 'text/event-stream' }, body: new TextEncoder().encode(sse) } });
    expect(found.some((f) => f.excerpt === `"${SECRET.slice(0, 4)}…" (40 chars)` && / events 1-3$/.test(f.path))).toBe(true);
  });
});

describe('recorded through createFetch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-aws-pair-'));
  let server: Server;
  let base = '';

  beforeAll(async () => {
    // A chat API that streams back the prompt's words a few characters an event.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const sent = JSON.parse(Buffer.concat(chunks).toString()) as ReturnType<typeof content>;
        const said = `You sent: ${sent.messages[0]!.content}`;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let i = 0; i < said.length; i += 9) res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: said.slice(i, i + 9) } }] })}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((ok) => server.close(ok));
    rmSync(dir, { recursive: true, force: true });
  });

  async function ask(f: typeof fetch, t: string): Promise<string> {
    const res = await f(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(content(t)) });
    return res.text();
  }

  async function scan(tape: string): Promise<{ code: number; out: string }> {
    let out = '';
    const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      return { code: await scanCommand([tape]), out };
    } finally {
      o.mockRestore();
      e.mockRestore();
    }
  }

  it('stores neither secret, replays each pair its own answer, and scan flags an older tape', async () => {
    const prompts = [`my creds are ${ID} ${SECRET}, why does s3 say denied?`, `my creds are ${ID_B}\n${SECRET_B}, why does s3 say denied?`];
    const tape = join(dir, 'chat.tape');
    const rec = createFetch({ tape, mode: 'record' });
    const live: string[] = [];
    try {
      for (const p of prompts) live.push(await ask(rec, p));
    } finally {
      await rec.close();
    }
    const bytes = readFileSync(tape);
    for (const s of [SECRET, SECRET_B]) for (let i = 0; i + 12 <= s.length; i += 4) expect(bytes.includes(Buffer.from(s.slice(i, i + 12)))).toBe(false);
    expect(await scan(tape)).toMatchObject({ code: 0 });

    const play = createFetch({ tape, mode: 'replay' });
    try {
      // In the other order: each prompt gets its own recording.
      const second = await ask(play, prompts[1]!);
      const first = await ask(play, prompts[0]!);
      expect(first).toContain('denied');
      expect(first).not.toBe(second);
      expect((await play.stats()).misses).toBe(0);
    } finally {
      await play.close();
    }

    // A tape recorded before (secrets kept, as an older tapedeck stored them).
    const old = join(dir, 'old.tape');
    const k = createFetch({ tape: old, mode: 'record', redact: { keepSecrets: true } });
    try {
      for (const p of prompts) await ask(k, p);
    } finally {
      await k.close();
    }
    expect(readFileSync(old).includes(Buffer.from(SECRET))).toBe(true);
    const found = await scan(old);
    expect(found.code).not.toBe(0);
    for (const s of [SECRET, SECRET_B]) expect(found.out).toContain(`"${s.slice(0, 4)}…" (40 chars)`);
  });
});
