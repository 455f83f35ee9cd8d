// A Telegram bot token sits in the URL path (`/bot<bot id>:<35 characters>/sendMessage`), not in
// a header or a query parameter, and no rule looked there: it was stored in clear in the
// request's URL and route, and in any text that repeated the URL, and `tapedeck scan` called the
// tape clean. Here a bot's calls are recorded through createFetch against a loopback server that
// answers as the Bot API does and repeats the URL it was called at: the token reaches neither
// the URL, the route nor the answer on the tape, two bots' tokens stay two recordings that each
// replay, and the scan reports a tape written with the token kept.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';
import { scanCommand } from '../../src/store/scan-cli.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { maskSplitCredentials } from '../../src/store/stream-redact.ts';
import { CREDENTIAL, credentialFrom, mayHoldCredential } from '../../src/store/credential.ts';
import { credentialMatches } from '../../src/store/redact.ts';
import { rng } from '../reference.ts';

const BOT_A = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
const BOT_B = '987654321:AAF_x9-QwErTyUiOpAsDfGhJkLzXcVbNm12';
const SECRET_A = BOT_A.split(':')[1]!;
const SECRET_B = BOT_B.split(':')[1]!;

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-telegram-'));
let server: Server;
let base = '';
let calls = 0;

beforeAll(async () => {
  // The Bot API's answer to sendMessage, with the URL it was called at repeated in the text (a
  // bot that reports its own webhook, a debug echo).
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const m = /^\/bot(\d+):[^/]+\/sendMessage$/.exec(req.url ?? '');
      if (!m) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: false, error_code: 404, description: 'Not Found' }));
        return;
      }
      const sent = JSON.parse(Buffer.concat(chunks).toString()) as { chat_id: number; text: string };
      const n = ++calls;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, result: { message_id: n, from: { id: Number(m[1]), is_bot: true, first_name: 'Deck', username: 'deck_bot' }, chat: { id: sent.chat_id, type: 'private' }, date: 1700000000 + n, text: `${sent.text} (called at https://api.telegram.org${req.url})` } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** Sends a message as each bot; the message ids of the answers, in order. */
async function sendAll(f: typeof fetch): Promise<number[]> {
  const out: number[] = [];
  for (const bot of [BOT_A, BOT_B]) {
    const res = await f(`${base}/bot${bot}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: 42, text: 'hello' }) });
    out.push(((await res.json()) as { result: { message_id: number } }).result.message_id);
  }
  return out;
}

async function scan(...args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return { code: await scanCommand(args), out };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('a Telegram bot token in a URL path', () => {
  const r = redactor({ salt: '00112233445566778899aabbccddeeff' });

  it('is masked in a URL, a path and a webhook URL in JSON, keyed: two tokens two masks', () => {
    const a = r.url(`https://api.telegram.org/bot${BOT_A}/sendMessage`);
    expect(a).toMatch(/^https:\/\/api\.telegram\.org\/bot\[REDACTED:[0-9a-f]{16}\]\/sendMessage$/);
    const path = r.url(`/bot${BOT_A}/getUpdates?offset=3`);
    expect(path).toMatch(/^\/bot\[REDACTED:[0-9a-f]{16}\]\/getUpdates\?offset=3$/);
    expect(r.url(`https://api.telegram.org/bot${BOT_B}/sendMessage`)).not.toBe(a);
    // Idempotent: a stored URL redacted again is unchanged.
    expect(r.url(a)).toBe(a);
    // A webhook's URL holding the token (getWebhookInfo's answer), in JSON text.
    const hook = r.text(JSON.stringify({ ok: true, result: { url: `https://hooks.example.com/tg/bot${BOT_A}`, pending_update_count: 0 } }));
    expect(hook).not.toContain(SECRET_A);
    expect(hook).toMatch(/"url":"https:\/\/hooks\.example\.com\/tg\/bot\[REDACTED:[0-9a-f]{16}\]"/);
    // Numbers and times with a colon are no token.
    for (const s of ['/v1/chat/completions', 'at 1700000000:00 UTC the job ran', '/bot/sendMessage', 'ratio 16:9 https://example.com/bot12/x']) expect(r.text(s)).toBe(s);
  });

  it('bare in prose (pasted into a prompt, a tool result, a log line), its secret part is masked, keyed; the bot id stays', () => {
    const said = r.text(`Here is the bot token: ${BOT_A}. Use it for the webhook.`);
    expect(said).not.toContain(SECRET_A);
    expect(said).toMatch(/^Here is the bot token: 123456789:\[REDACTED:[0-9a-f]{16}\]\. Use it for the webhook\.$/);
    expect(r.text(`token=${BOT_B}`)).not.toBe(r.text(`token=${BOT_A}`).replace('987654321', '123456789'));
    expect(r.text(`"TELEGRAM_TOKEN": "${BOT_B}"`)).not.toContain(SECRET_B);
    // Not a token: the secret part is 34 to 36 characters starting with A, after an id of 6 to 12 digits.
    for (const s of ['12:30 AAAA', `id 12345:${SECRET_A}`, `123456789:${SECRET_A}X1Y`, '123456789:BAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw']) expect(r.text(s)).toBe(s);
    expect(secretsInValue({ messages: [{ content: `bot token ${BOT_A}` }] }).length).toBeGreaterThan(0);
  });

  it('cut across a stream\'s events, is masked across them', () => {
    const events = [
      { kind: '', docs: [{ choices: [{ delta: { content: `use https://api.telegram.org/bot${BOT_A.slice(0, 20)}` } }] }] },
      { kind: '', docs: [{ choices: [{ delta: { content: `${BOT_A.slice(20)}/sendMessage` } }] }] },
    ];
    expect(maskSplitCredentials(events, (v) => r.mask(v)).size).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(SECRET_A.slice(10, 25));
    const joined = events.map((e) => (e.docs[0] as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content).join('');
    expect(joined).toMatch(/^use https:\/\/api\.telegram\.org\/bot\[REDACTED:[0-9a-f]{16}\]\/sendMessage$/);
  });

  it('createFetch: no token reaches the tape, each bot replays its own answer, scan finds a kept one', async () => {
    const tape = join(dir, 'bot.tape');
    const rec = createFetch({ tape, mode: 'record' });
    let recorded: number[];
    try {
      recorded = await sendAll(rec);
    } finally {
      await rec.close();
    }
    expect(new Set(recorded).size).toBe(2);
    const bytes = readFileSync(tape);
    for (const s of [SECRET_A, SECRET_B, SECRET_A.slice(10, 22), SECRET_B.slice(10, 22)]) expect(bytes.includes(Buffer.from(s))).toBe(false);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await sendAll(play)).toEqual(recorded);
      expect((await play.stats()).misses).toBe(0);
    } finally {
      await play.close();
    }
    expect(await scan(tape)).toMatchObject({ code: 0 });

    const kept = join(dir, 'kept.tape');
    const k = createFetch({ tape: kept, mode: 'record', redact: { keepSecrets: true } });
    try {
      await sendAll(k);
    } finally {
      await k.close();
    }
    expect(readFileSync(kept).includes(Buffer.from(SECRET_A))).toBe(true);
    const found = await scan(kept);
    expect(found.code).not.toBe(0);
    expect(found.out).toContain('request.url');
  });

  it('the search shortcuts find what the patterns find from the start, with tokens and their ids', () => {
    const g = rng(71);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(g() * xs.length)]!;
    const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
    const run = (n: number) => Array.from({ length: n }, () => pick([...chars])).join('');
    const digits = (n: number) => Array.from({ length: n }, () => pick([...'0123456789'])).join('');
    let found = 0;
    for (let i = 0; i < 3000; i++) {
      const parts: string[] = [];
      for (let k = 1 + Math.floor(g() * 12); k > 0; k--) {
        parts.push(pick(['', '/bot', 'bot', 'robot', ' ', '=', 'x', 'https://api.telegram.org/bot', '/', ':', '"']));
        if (g() < 0.6) parts.push(`${digits(pick([3, 5, 6, 9, 10, 12, 13, 20]))}:${run(pick([16, 30, 33, 34, 35, 36, 37]))}`);
        parts.push(pick([' ', '/sendMessage', '', '"', '-', '_x', '.']));
      }
      const s = parts.join('');
      const want = [...s.matchAll(new RegExp(CREDENTIAL.source, 'g'))].map((m) => ({ index: m.index, text: m[0] }));
      const from = credentialFrom(s);
      expect(want.filter((m) => from < 0 || m.index < from), s).toEqual([]);
      expect(credentialMatches(s), s).toEqual(want);
      if (want.length > 0) {
        found++;
        expect(mayHoldCredential(s), s).toBe(true);
      }
    }
    expect(found).toBeGreaterThan(300);
  });

  it('scan reports one in a record value', () => {
    expect(secretsInValue({ request: { url: `/bot${BOT_A}/sendMessage` } }).length).toBeGreaterThan(0);
    expect(secretsInValue({ request: { url: r.url(`/bot${BOT_A}/sendMessage`) } })).toEqual([]);
  });
});
