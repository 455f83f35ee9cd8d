// `tapedeck rerecord --hostless-upstream URL` names where the recordings with no host go, and a key
// from the environment may follow those requests there: it counts as --upstream for them and for
// no other. A recording made for another host that speaks the same API (api.groq.com) still gets
// no OPENAI_API_KEY, even when the user named that very host for the hostless ones. Hosts off this
// machine cannot be served from a test, so the command runs in this process, its recorder a
// createFetch (as the command line wires it) whose network is a function that notes each call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { rerecordCommand } from '../../src/drift/cli.ts';
import { credentialsFrom } from '../../src/drift/live-credentials.ts';
import { destinationOf, upstreamFor, type Recorder } from '../../src/drift/rerecord.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { createFetch, fetchUnder } from '../../src/proxy/fetch.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { chatRecord } from '../cli/cli-helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-hostless-keys-'));
const tape = join(dir, 'mixed.tape');
const ENV = { OPENAI_API_KEY: 'sk-env' };

/** What the live API was sent: the URL and the authorization header, per call. */
let sent: { url: string; authorization: string | null }[] = [];
const live = (async (input: RequestInfo | URL, init?: RequestInit) => {
  const req = new Request(input, init);
  sent.push({ url: req.url, authorization: req.headers.get('authorization') });
  const body = { id: 'c1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `from ${new URL(req.url).host}` }, finish_reason: 'stop' }] };
  return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
}) as typeof fetch;

/** The recorder the command line hands rerecordCommand, over `live`. */
const recorder = (out: string): Recorder => {
  const rec = createFetch({ tape: out, mode: 'record', fetch: live, onWarning: () => {}, summary: false });
  return { fetch: (url, init, upstreamPath) => (upstreamPath ? fetchUnder(rec, url, init, upstreamPath) : rec(url, init)), close: () => rec.close() };
};

/** Runs the command on `tape` (by default the mixed one) with OPENAI_API_KEY set: its exit code and stderr. */
async function run(...args: string[]): Promise<{ code: number; stderr: string }> {
  return runOn(tape, ...args);
}

async function runOn(tape: string, ...args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
  try {
    const code = await rerecordCommand([tape, '--yes', '--force', '--concurrency', '1', ...args], recorder, ENV);
    return { code, stderr };
  } finally {
    vi.restoreAllMocks();
  }
}

const question = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Capital of France?' }] };

beforeAll(async () => {
  // Recordings for OpenAI and for Groq (an OpenAI-compatible host), their keys masked as
  // redaction leaves them, then one written before hosts were stored.
  const f = createFetch({ tape, mode: 'record', fetch: live, onWarning: () => {}, summary: false });
  try {
    for (const host of ['https://api.openai.com', 'https://api.groq.com']) {
      await (await f(`${host}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(question), headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' } })).text();
    }
  } finally {
    await f.close();
    sent = [];
  }
  const old = chatRecord(1);
  await appendRecords(tape, [{ ...old, request: { ...old.request, headers: { ...old.request.headers, authorization: 'Bearer [REDACTED]' } } }]);
});
afterEach(() => {
  sent = [];
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rerecord --hostless-upstream and keys from the environment', () => {
  it("sends the key with the hostless request to the URL named for it and to the provider's own host, not to another host", async () => {
    const out = join(dir, 'gw.tape');
    const r = await run('--hostless-upstream', 'https://gw.example/openai', '--out', out);
    expect(r.stderr).toContain('tapedeck rerecord: 3 requests to 3 hosts (1 to https://api.openai.com, 1 to https://api.groq.com, 1 hostless to https://gw.example/openai); estimated cost');
    expect(sent).toEqual([
      { url: 'https://api.openai.com/v1/chat/completions', authorization: 'Bearer sk-env' },
      { url: 'https://api.groq.com/v1/chat/completions', authorization: null },
      { url: 'https://gw.example/openai/v1/chat/completions', authorization: 'Bearer sk-env' },
    ]);
    // Said before any call, with the host it concerns.
    expect(r.stderr).toMatch(/no credential for authorization \(POST \/v1\/chat\/completions on https:\/\/api\.groq\.com\)/);
    expect(r.stderr).not.toContain('on https://gw.example');
    // The new hostless recording is made for the host it was sent to, under its path.
    const recs = (await readTape(out)).records.map((x) => x.value as { origin?: string; upstreamPath?: string });
    expect(recs.map((x) => [x.origin, x.upstreamPath])).toEqual([
      ['https://api.openai.com', undefined],
      ['https://api.groq.com', undefined],
      ['https://gw.example', '/openai'],
    ]);
    // All recorded (3 would say not); the hand-written answer changed, so the diff fails (1).
    expect(r.code).toBe(1);
  });

  it("naming a host for the hostless requests sends the key with those only, not with that host's own recordings", async () => {
    const r = await run('--hostless-upstream', 'https://api.groq.com', '--out', join(dir, 'groq.tape'));
    expect(sent).toEqual([
      { url: 'https://api.openai.com/v1/chat/completions', authorization: 'Bearer sk-env' },
      { url: 'https://api.groq.com/v1/chat/completions', authorization: null },
      { url: 'https://api.groq.com/v1/chat/completions', authorization: 'Bearer sk-env' },
    ]);
    expect(r.stderr).toContain('1 hostless to https://api.groq.com');
  });

  it('--upstream still sends it with every request (the user named where all go)', async () => {
    await run('--only', 'api.groq.com', '--upstream', 'https://api.groq.com', '--out', join(dir, 'up.tape'));
    expect(sent).toEqual([{ url: 'https://api.groq.com/v1/chat/completions', authorization: 'Bearer sk-env' }]);
  });

  it('--upstream on a tape of one host and hostless recordings moves the host too, and the note names --hostless-upstream', async () => {
    const one = join(dir, 'one-host.tape');
    await createTape(one);
    await appendRecords(one, [{ ...chatRecord(1), origin: 'https://api.openai.com' }, chatRecord(2)]);
    const r = await runOn(one, '--upstream', 'https://gw.example', '--out', join(dir, 'one-host.new.tape'));
    expect(r.stderr).toContain('tapedeck rerecord: note: the recordings were made for https://api.openai.com; the new ones are made for https://gw.example, where --upstream sends them, and answer requests to that host only (docs/matching.md, "Hosts"); --hostless-upstream instead of --upstream sends only the 1 that names no host there.\n');
    expect(sent.map((x) => x.url)).toEqual(['https://gw.example/v1/chat/completions', 'https://gw.example/v1/chat/completions']);
    sent = [];
    await runOn(one, '--hostless-upstream', 'https://gw.example', '--out', join(dir, 'one-host.new.tape'));
    expect(sent.map((x) => x.url)).toEqual(['https://api.openai.com/v1/chat/completions', 'https://gw.example/v1/chat/completions']);
  });
});

describe('upstreamFor and credentials, one call at a time', () => {
  const rec = (origin?: string) => ({ ...chatRecord(1), ...(origin ? { origin } : {}) }) as unknown as HttpRecord;
  const chat = 'POST /v1/chat/completions';

  it('the hostless upstream is named for a recording with no origin only; --upstream for every one', () => {
    const named = { hostlessUpstream: 'https://gw.example/openai/' };
    expect(upstreamFor(rec(), named)).toBe('https://gw.example/openai/');
    expect(upstreamFor(rec('https://api.groq.com'), named)).toBeUndefined();
    expect(destinationOf(rec(), upstreamFor(rec(), named))).toBe('https://gw.example/openai');
    expect(upstreamFor(rec('https://api.groq.com'), { upstream: 'http://127.0.0.1:8080' })).toBe('http://127.0.0.1:8080');
  });

  it('a key goes where the call says the user named, and nowhere else it would not go anyway', () => {
    const c = credentialsFrom(ENV, [], false);
    expect(c(chat, 'authorization', 'https://gw.example/openai', true)).toBe('Bearer sk-env');
    expect(c(chat, 'authorization', 'https://gw.example/openai', false)).toBeUndefined();
    expect(c(chat, 'authorization', 'https://gw.example/openai')).toBeUndefined();
    expect(c(chat, 'authorization', 'https://api.openai.com', false)).toBe('Bearer sk-env');
  });
});
