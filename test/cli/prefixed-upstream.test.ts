// An upstream with a path prefix (an AI gateway: `tapedeck serve --upstream
// https://gateway.ai.cloudflare.com/v1/acct/gw/openai`): the proxy forwards `/v1/chat/completions`
// to the prefix plus that path, and the recording keeps the prefix (`upstreamPath`) beside its
// origin, so `tapedeck rerecord` without --upstream sends the request to the same full URL, and
// the new recording still answers the proxy. Each step through the built CLI, with the OpenAI SDK
// as the client; the fake gateway answers under /prefix only.
import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsFrom } from '../../src/drift/live-credentials.ts';
import type { DriftReport } from '../../src/drift/report.ts';
import { destinationOf } from '../../src/drift/rerecord.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { appendRecords, readTape } from '../../src/store/tape-file.ts';
import { chatRecord, runCli } from './cli-helpers.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-prefix-'));
const env = { ...process.env, TAPEDECK_MODE: '', NO_COLOR: '1', OPENAI_API_KEY: 'sk-live', ANTHROPIC_API_KEY: '' };

/** The CLI, run without blocking this process (the fake gateway answers from here). */
function cli(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return runCli(bin, args, { cwd: dir, env: env });
}

/** A fake OpenAI-compatible gateway: chat answers `<name>` under `under` (and at the root when `root`), 404 elsewhere. */
interface Gateway {
  origin: string;
  calls: { path: string; authorization: string | undefined }[];
  server: Server;
}

function startGateway(name: string, under: string, port = 0, root = false): Promise<Gateway> {
  const gw: Gateway = { origin: '', calls: [], server: undefined as unknown as Server };
  gw.server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '';
      gw.calls.push({ path, authorization: req.headers.authorization });
      if (path !== `${under}/v1/chat/completions` && !(root && path === '/v1/chat/completions')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${path}` } }));
        return;
      }
      const body = { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `from ${name}` }, finish_reason: 'stop' }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  return new Promise((ok) =>
    gw.server.listen(port, '127.0.0.1', () => {
      gw.origin = `http://127.0.0.1:${(gw.server.address() as { port: number }).port}`;
      ok(gw);
    }),
  );
}
const stop = (gw: Gateway | undefined) => new Promise<void>((ok) => (gw ? (gw.server.closeAllConnections(), gw.server.close(() => ok())) : ok()));

/** `tapedeck serve --upstream <upstream>` recording into `tape`; resolves with its URL and a stop (SIGTERM, tape written). */
function serve(tape: string, upstream: string): Promise<{ url: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [bin, 'serve', '--tape', tape, '--mode', 'record', '--upstream', upstream, '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const closed = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr);
      if (m) resolve({ url: m[1]!, stop: () => (child.kill('SIGTERM'), closed) });
    });
    void closed.then(() => reject(new Error(`serve ended early: ${stderr}`)));
  });
}

const question = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Capital of France?' }] };
type Rec = { origin?: string; upstreamPath?: string; route: string; request: { url: string } };
const recordsOf = async (tape: string) => (await readTape(join(dir, tape))).records.map((r) => r.value as Rec);

let first: Gateway;

beforeAll(async () => {
  // The recording: the OpenAI SDK pointed at a real `tapedeck serve` whose upstream has a prefix.
  first = await startGateway('first', '/prefix');
  const proxy = await serve('gw.tape', `${first.origin}/prefix/`);
  try {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create(question);
    expect(answer.choices[0]!.message.content).toBe('from first');
  } finally {
    expect(await proxy.stop()).toBe(0);
  }
  expect(first.calls.map((c) => c.path)).toEqual(['/prefix/v1/chat/completions']);
}, 60_000);
afterAll(async () => {
  await stop(first);
  rmSync(dir, { recursive: true, force: true });
});

describe('a recording made through an upstream with a path prefix', () => {
  it('keeps the prefix beside its origin; its request path and route are what the client sent', async () => {
    const [rec] = await recordsOf('gw.tape');
    expect(rec).toMatchObject({ origin: first.origin, upstreamPath: '/prefix', route: 'POST /v1/chat/completions', request: { url: '/v1/chat/completions' } });
    // Written right after origin, before the containers (docs/tape-format.md, "Field order").
    const keys = Object.keys(rec!);
    expect(keys.indexOf('upstreamPath')).toBe(keys.indexOf('origin') + 1);
  });

  it('rerecord without --upstream sends it to origin + prefix + path, and the new recording replays through the proxy', async () => {
    // A second gateway on the same address, so the new answer is told apart from the first.
    const port = Number(new URL(first.origin).port);
    await stop(first);
    const second = await startGateway('second', '/prefix', port);
    try {
      const r = await cli('rerecord', 'gw.tape', '--yes', '--out', 'gw.new.tape', '--format', 'json');
      expect(r.stderr).toContain(`tapedeck rerecord: 1 request to ${first.origin}/prefix; estimated cost`);
      expect(r.stderr).toContain('recorded 1 of 1 into gw.new.tape');
      expect(second.calls).toEqual([{ path: '/prefix/v1/chat/completions', authorization: 'Bearer sk-live' }]);
      const [rec] = await recordsOf('gw.new.tape');
      expect(rec).toMatchObject({ origin: first.origin, upstreamPath: '/prefix', route: 'POST /v1/chat/completions', request: { url: '/v1/chat/completions' } });
      // Paired with the old recording (same route, key and host): a text change, nothing added or removed.
      const report = JSON.parse(r.stdout) as DriftReport;
      expect(report.summary).toMatchObject({ pairs: 1, added: 0, removed: 0 });
      expect(r.status).toBe(1);
      // The new tape answers the proxy pointed at the same prefixed upstream, offline.
      const proxy = await startProxy({ tape: join(dir, 'gw.new.tape'), mode: 'replay', upstream: `${first.origin}/prefix`, port: 0, onWarning: () => {} });
      try {
        const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
        expect((await client.chat.completions.create(question)).choices[0]!.message.content).toBe('from second');
      } finally {
        await proxy.close();
      }
      expect(second.calls).toHaveLength(1);
    } finally {
      await stop(second);
    }
  });

  it('an older recording without the prefix re-records to its origin and path as before, beside a prefixed one', async () => {
    const port = Number(new URL(first.origin).port);
    const gw = await startGateway('mixed', '/prefix', port, true);
    try {
      writeFileSync(join(dir, 'mixed.tape'), readFileSync(join(dir, 'gw.tape')));
      // A recording of the same host made before prefixes were stored: an origin and a path alone.
      await appendRecords(join(dir, 'mixed.tape'), [{ ...chatRecord(7), origin: first.origin }]);
      const r = await cli('rerecord', 'mixed.tape', '--yes', '--concurrency', '1', '--out', 'mixed.new.tape', '--format', 'json');
      expect(r.stderr).toContain('recorded 2 of 2 into mixed.new.tape');
      expect(gw.calls.map((c) => c.path)).toEqual(['/prefix/v1/chat/completions', '/v1/chat/completions']);
      const recs = await recordsOf('mixed.new.tape');
      expect(recs.map((x) => [x.origin, x.upstreamPath, x.request.url])).toEqual([
        [first.origin, '/prefix', '/v1/chat/completions'],
        [first.origin, undefined, '/v1/chat/completions'],
      ]);
      expect(JSON.parse(r.stdout).summary).toMatchObject({ pairs: 2, added: 0, removed: 0 });
    } finally {
      await stop(gw);
    }
  });

  it('--upstream still overrides, and its own prefix is kept beside the request path', async () => {
    const elsewhere = await startGateway('elsewhere', '/other/base');
    try {
      const r = await cli('rerecord', 'gw.tape', '--yes', '--upstream', `${elsewhere.origin}/other/base/`, '--out', 'gw.other.tape', '--format', 'json');
      expect(r.stderr).toContain('recorded 1 of 1 into gw.other.tape');
      expect(elsewhere.calls.map((c) => c.path)).toEqual(['/other/base/v1/chat/completions']);
      const [rec] = await recordsOf('gw.other.tape');
      expect(rec).toMatchObject({ origin: elsewhere.origin, upstreamPath: '/other/base', route: 'POST /v1/chat/completions', request: { url: '/v1/chat/completions' } });
    } finally {
      await stop(elsewhere);
    }
  });

  it('an upstream written with several trailing slashes: the proxy and rerecord both send to prefix + path, one slash between', async () => {
    // One rule for both (src/store/upstream-prefix.ts): the proxy used to drop one slash and
    // record '/prefix/', sending '/prefix//v1/...', which a gateway routing by path refuses.
    const gw = await startGateway('slashes', '/prefix');
    try {
      const proxy = await serve('slashes.tape', `${gw.origin}/prefix//`);
      try {
        const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
        expect((await client.chat.completions.create(question)).choices[0]!.message.content).toBe('from slashes');
      } finally {
        expect(await proxy.stop()).toBe(0);
      }
      const [rec] = await recordsOf('slashes.tape');
      expect(rec).toMatchObject({ origin: gw.origin, upstreamPath: '/prefix' });
      const r = await cli('rerecord', 'slashes.tape', '--yes', '--out', 'slashes.new.tape', '--format', 'json');
      expect(r.stderr).toContain('recorded 1 of 1 into slashes.new.tape');
      const viaUpstream = await cli('rerecord', 'slashes.tape', '--yes', '--upstream', `${gw.origin}/prefix///`, '--out', 'slashes.up.tape', '--format', 'json');
      expect(viaUpstream.stderr).toContain('recorded 1 of 1 into slashes.up.tape');
      expect(gw.calls.map((c) => c.path)).toEqual(['/prefix/v1/chat/completions', '/prefix/v1/chat/completions', '/prefix/v1/chat/completions']);
      expect((await recordsOf('slashes.up.tape'))[0]).toMatchObject({ origin: gw.origin, upstreamPath: '/prefix' });
    } finally {
      await stop(gw);
    }
  });

  it('export -> import keeps the prefix, byte for byte; inspect shows it after the origin', async () => {
    const ex = await cli('export', 'gw.tape');
    expect(ex.status).toBe(0);
    expect(ex.stdout).toContain('"upstreamPath": "/prefix"');
    writeFileSync(join(dir, 'gw.json'), ex.stdout);
    const im = await cli('import', 'gw.json', 'gw.imported.tape');
    expect(im.status).toBe(0);
    expect(readFileSync(join(dir, 'gw.imported.tape')).equals(readFileSync(join(dir, 'gw.tape')))).toBe(true);
    const ins = await cli('inspect', 'gw.tape');
    const row = ins.stdout.split('\n').find((l) => /^0\t/.test(l))!.split('\t');
    expect(row.at(-1)).toBe(`${first.origin}/prefix`);
  });
});

describe('where a prefixed recording is sent again, and which keys go with it', () => {
  const rec = (origin: string, upstreamPath?: unknown) => ({ ...chatRecord(1), origin, ...(upstreamPath !== undefined ? { upstreamPath } : {}) }) as unknown as HttpRecord;

  it('origin + prefix; --upstream overrides; a prefix that does not start with / is not used (it would name another host)', () => {
    expect(destinationOf(rec('https://gw.example.com', '/prefix'), undefined)).toBe('https://gw.example.com/prefix');
    expect(destinationOf(rec('https://gw.example.com'), undefined)).toBe('https://gw.example.com');
    expect(destinationOf(rec('https://gw.example.com', '/prefix'), 'http://127.0.0.1:8080/other/')).toBe('http://127.0.0.1:8080/other');
    expect(destinationOf(rec('https://api.openai.com', '@evil.example'), undefined)).toBe('https://api.openai.com');
  });

  it("the prefix does not change whose key goes there: a provider's own host only, or this machine", () => {
    const credentials = credentialsFrom({ OPENAI_API_KEY: 'sk-env' }, [], false);
    const to = (origin: string, path: string) => destinationOf(rec(origin, path), undefined)!;
    expect(credentials('POST /v1/chat/completions', 'authorization', to('https://api.openai.com', '/gw'))).toBe('Bearer sk-env');
    expect(credentials('POST /v1/chat/completions', 'authorization', to('https://gateway.ai.cloudflare.com', '/v1/acct/gw/openai'))).toBeUndefined();
    expect(credentials('POST /v1/chat/completions', 'authorization', to('http://127.0.0.1:9', '/prefix'))).toBe('Bearer sk-env');
  });
});
