// `tapedeck serve` prints one line per miss (onMiss): what differs and how to fix it. A miss whose
// difference and fix do not fit on one line of the client's message has its fix on a second
// line; the log line must still carry it (CI output is where whoever runs the proxy reads it).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-miss-line-'));
let up: Server;
let upstream: string;
let refuseKey = false;

beforeAll(async () => {
  // Answers any request with a small JSON body; refuses the key once asked to (an update-mode run without a real key).
  up = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (refuseKey) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided: replay.', type: 'invalid_request_error', code: 'invalid_api_key' } }));
        return;
      }
      const gemini = (req.url ?? '').includes(':generateContent');
      const body = gemini
        ? { candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP', index: 0 }], modelVersion: 'gemini-2.0-flash' }
        : (req.url ?? '').startsWith('/v1/messages')
          ? { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-3-5-haiku-latest', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }
          : (req.url ?? '').startsWith('/v1/chat/completions')
            ? { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }
            : { ok: true };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => up.listen(0, '127.0.0.1', r));
  upstream = `http://127.0.0.1:${(up.address() as AddressInfo).port}`;
});
afterAll(async () => {
  up.closeAllConnections();
  await new Promise((r) => up.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const S = 'Zq9XvB7kLm2Np4Rt6Wy8';
const json = { 'content-type': 'application/json' };
const form = { 'content-type': 'application/x-www-form-urlencoded' };
const chat = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'once prompt' }] });
const gemini = (text: string) => JSON.stringify({ contents: [{ role: 'user', parts: [{ text }] }] });
const claude = JSON.stringify({ model: 'claude-3-5-haiku-latest', max_tokens: 50, messages: [{ role: 'user', content: 'beta q' }] });

type Call = [path: string, init: RequestInit];
const recorded: Call[] = [
  ['/v1beta/models/gemini-2.0-flash:generateContent', { method: 'POST', headers: { ...json, 'x-goog-api-key': 'x' }, body: gemini('hello gemini') }],
  ['/v1/chat/completions', { method: 'POST', headers: json, body: chat }],
  ['/v1/messages?beta=true', { method: 'POST', headers: { ...json, 'x-api-key': 'sk-ant-x', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14' }, body: claude }],
  [`/v1/search?token=TOKA${S}`, { method: 'GET' }],
  ['/echo', { method: 'POST', headers: json, body: JSON.stringify({ password: `PWA${S}`, q: 1 }) }],
  ['/echo', { method: 'POST', headers: form, body: `client_secret=CSA${S}&q=1` }],
];
const missed: Call[] = [
  ['/v1beta/models/gemini-1.5-flash:generateContent', { method: 'POST', headers: { ...json, 'x-goog-api-key': 'x' }, body: gemini('hello gemini') }],
  ['/v1/chat/completions', { method: 'POST', headers: json, body: chat }],
  ['/v1/chat/completions', { method: 'POST', headers: json, body: chat }],
  ['/v1/messages?beta=true', { method: 'POST', headers: { ...json, 'x-api-key': 'sk-ant-x', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'token-efficient-tools-2025-02-19' }, body: claude }],
  [`/v1/search?token=TOKB${S}`, { method: 'GET' }],
  ['/echo', { method: 'POST', headers: json, body: JSON.stringify({ password: `PWB${S}`, q: 1 }) }],
  ['/echo', { method: 'POST', headers: form, body: `client_secret=CSB${S}&q=1` }],
];

describe("tapedeck serve's line for a miss", () => {
  it('says how to fix it for every kind of miss, as the first line of the client message does', async () => {
    const tape = join(dir, 'misses.tape');
    const rec = await startProxy({ upstream, tape, mode: 'record', port: 0, onWarning: () => {} });
    try {
      for (const [path, init] of recorded) expect((await fetch(rec.url + path, init)).status).toBe(200);
    } finally {
      await rec.close();
    }
    const lines: string[] = [];
    const play = await startProxy({ upstream, tape, mode: 'replay', strictOrder: true, port: 0, onWarning: () => {}, onMiss: (m) => lines.push(m) });
    const statuses: number[] = [];
    try {
      for (const [path, init] of missed) statuses.push((await fetch(play.url + path, init)).status);
    } finally {
      await play.close();
    }
    // The first chat call is answered; the second is past its one recording (strict order).
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(lines).toHaveLength(missed.length - 1);
    for (const line of lines) {
      expect(line).not.toContain('\n');
      expect(line).toMatch(/; re-record: restart tapedeck serve with --mode record/);
    }
    expect(lines.join('\n')).not.toContain(S);
  });

  it('in update mode, says why the request could not be recorded', async () => {
    const tape = join(dir, 'update.tape');
    const body = (text: string) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });
    const rec = await startProxy({ upstream, tape, mode: 'record', port: 0, onWarning: () => {} });
    try {
      expect((await fetch(`${rec.url}/v1/chat/completions`, { method: 'POST', headers: json, body: body('hello there, how are you today?') })).status).toBe(200);
    } finally {
      await rec.close();
    }
    refuseKey = true;
    const lines: string[] = [];
    const upd = await startProxy({ upstream, tape, mode: 'update', port: 0, onWarning: () => {}, onMiss: (m) => lines.push(m) });
    try {
      const r = await fetch(`${upd.url}/v1/chat/completions`, { method: 'POST', headers: json, body: body('hello there, how are you tomorrow?') });
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(await r.text()).toContain('the upstream refused the API key');
    } finally {
      await upd.close();
      refuseKey = false;
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    expect(lines[0]).toMatch(/; recording it needs the network and a real API key: the upstream refused the API key/);
  });
});
