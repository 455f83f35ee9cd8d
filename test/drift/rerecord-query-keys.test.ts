// `tapedeck rerecord` sent a tape's masked query credentials to the live API as they were stored
// (`?key=%5BREDACTED%5D`, a keyed `?token=` mask), with no warning, and GEMINI_API_KEY was never
// used: a Gemini tape keyed by `?key=` could not be re-recorded at all. Gemini's key is now filled
// from GEMINI_API_KEY (or GOOGLE_API_KEY), a masked value nothing fills is warned of before any
// call, and a run with failed calls says it is incomplete under a diff that may say nothing fails.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { liveUrl } from '../../src/drift/rerecord.ts';
import type { HttpRecord } from '../../src/store/records.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rerecord-keys-'));
const KEY = 'AIzaSyLiveKeyForTheTest0123456789abcd';
const seen: string[] = [];
let server: Server;
let base = '';

const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const gemini = { candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1 } };

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? '');
    req.resume();
    req.on('end', () => {
      const ok = (req.url ?? '').includes(`key=${KEY}`);
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ok ? gemini : { error: { message: 'bad key' } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const record = (url: string, route: string, body: unknown, answer: unknown): HttpRecord =>
  ({ v: 1, kind: 'http', match: 'json', route, key: 'k'.repeat(64), request: { method: 'POST', url, headers: { 'content-type': 'application/json' }, body }, response: { status: 200, headers: { 'content-type': 'application/json' }, body: json(answer) }, recordedAt: '2026-01-01T00:00:00.000Z', durationMs: 1 }) as unknown as HttpRecord;

function run(args: string[], env: Record<string, string>): Promise<{ status: number; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GEMINI_API_KEY: '', GOOGLE_API_KEY: '', ...env } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.resume();
    child.on('close', (status) => done({ status: status ?? -1, stderr }));
  });
}

describe('rerecord and masked query credentials', () => {
  it('fills Gemini ?key= from GEMINI_API_KEY; warns of a ?token= nothing fills; says the run is incomplete', async () => {
    const tape = join(dir, 'g.tape');
    await createTape(tape);
    const gUrl = '/v1beta/models/gemini-2.0-flash:generateContent?key=%5BREDACTED%5D';
    // A keyed ?token= is a value only the application had: not sent (rerecord-held.test.ts).
    const kUrl = '/v1/chat/completions?token=%5BREDACTED%3Ab1adb4410143b6a5%5D';
    // A tape made before salts masks it as a credential: sent, and refused.
    const tUrl = '/v1/chat/completions?token=%5BREDACTED%5D';
    await appendRecords(tape, [
      record(gUrl, 'POST /v1beta/models/gemini-2.0-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, gemini),
      record(kUrl, `POST ${kUrl}`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { choices: [] }),
      record(tUrl, `POST ${tUrl}`, { model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { choices: [] }),
    ]);
    const r = await run(['rerecord', 'g.tape', '--upstream', base, '--yes', '--retries', '0'], { GEMINI_API_KEY: KEY });
    expect(r.stderr).toContain('tapedeck rerecord: warning: no credential for ?token= (POST /v1/chat/completions)');
    expect(r.stderr).toContain('Its recording is kept as it is: #1 POST /v1/chat/completions (URL ?token).');
    expect(r.stderr).not.toContain('?key=');
    expect(seen.some((u) => u.endsWith(`:generateContent?key=${KEY}`))).toBe(true);
    expect(seen.filter((u) => u.startsWith('/v1/chat/completions'))).toEqual(['/v1/chat/completions?token=%5BREDACTED%5D']);
    expect(r.stderr).toContain('recorded 1 of 2');
    expect(r.stderr).toContain('tapedeck rerecord: incomplete: 1 of 2 call(s) not recorded (exit 3)');
    expect(r.status).toBe(3);
  });

  it('liveUrl leaves a URL without masks as it is, and a mask nothing fills masked', () => {
    const r = { route: 'POST /v1/x', request: { url: '/v1/x?token=%5BREDACTED%5D&page=2' } } as HttpRecord;
    expect(liveUrl(r, () => undefined)).toBe('/v1/x?token=%5BREDACTED%5D&page=2');
    expect(liveUrl(r, (_route, name) => (name === '?token' ? 'a b' : undefined))).toBe('/v1/x?token=a%20b&page=2');
    expect(liveUrl({ route: 'POST /v1/x', request: { url: '/v1/x?page=2' } } as HttpRecord, () => 'never')).toBe('/v1/x?page=2');
  });

  it('liveUrl reads a name with a malformed escape as written (it threw a URIError: a stack trace from rerecord)', () => {
    const r = { route: 'POST /v1/x', request: { url: '/v1/x?k%zz=%5BREDACTED%5D&api%2Dkey=%5BREDACTED%5D' } } as HttpRecord;
    const asked: string[] = [];
    const url = liveUrl(r, (_route, name) => {
      asked.push(name);
      return name === '?api-key' ? 'K1' : undefined;
    });
    expect(asked).toEqual(['?k%zz', '?api-key']);
    expect(url).toBe('/v1/x?k%zz=%5BREDACTED%5D&api%2Dkey=K1');
  });
});
