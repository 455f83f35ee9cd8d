// One request recorded for two hosts (an app that falls back from one OpenAI-compatible host to
// another sends both the same path and body): the commands that list or pick recordings tell
// them apart. inspect shows each one's host; rerecord sends each to its own host and keeps the
// host on the new recording, and those that name no host to --hostless-upstream in the same run;
// diff pairs them by host and names the host when there are several.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import type { DriftReport } from '../../src/drift/report.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { chatRecord, runCli } from './cli-helpers.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-hosts-'));

/** The CLI, run without blocking this process (the fake hosts answer from here). */
function cli(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return runCli(bin, args, { cwd: dir, env: { ...process.env, TAPEDECK_MODE: '', NO_COLOR: '1', OPENAI_API_KEY: 'sk-live', ANTHROPIC_API_KEY: '' } });
}

/** A fake OpenAI-compatible host on its own loopback address: it answers `from <name><suffix>`. */
interface Host {
  origin: string;
  calls: { path: string; authorization: string | undefined }[];
  suffix: string;
  server: Server;
}

async function startHost(name: string, address: string, delayMs: number): Promise<Host> {
  const host: Host = { origin: '', calls: [], suffix: '', server: undefined as unknown as Server };
  host.server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      host.calls.push({ path: req.url ?? '', authorization: req.headers.authorization });
      const body = { id: 'c1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `from ${name}${host.suffix}` }, finish_reason: 'stop' }] };
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)), delayMs);
    });
  });
  await new Promise<void>((ok) => host.server.listen(0, address, ok));
  host.origin = `http://${address}:${(host.server.address() as { port: number }).port}`;
  return host;
}

// Two hosts by name (loopback ports are not compared, addresses are); B answers slowly.
let a: Host;
let b: Host;
const question = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Capital of France?' }] };

/** Records the question asked of each host in turn, into `tape`. */
async function record(tape: string, hosts: Host[]): Promise<void> {
  const f = createFetch({ tape, mode: 'record', onWarning: () => {} });
  try {
    for (const h of hosts) {
      const r = await f(`${h.origin}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(question), headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' } });
      await r.text();
    }
  } finally {
    await f.close();
  }
}

const rows = (stdout: string) => stdout.split('\n').filter((l) => /^\d+\t/.test(l)).map((l) => l.split('\t'));
const origins = async (tape: string) => (await readTape(join(dir, tape))).records.map((r) => (r.value as { origin?: string }).origin);

beforeAll(async () => {
  a = await startHost('A', '127.0.0.1', 0);
  b = await startHost('B', '127.0.0.2', 300);
  await record(join(dir, 'both.tape'), [b, a]);
});
afterAll(async () => {
  await Promise.all([a, b].map((h) => new Promise((ok) => h?.server.close(ok))));
  rmSync(dir, { recursive: true, force: true });
});

describe('tapedeck inspect', () => {
  it("shows each recording's host in a last column, origin, and - for one that names none; the columns before keep their places", async () => {
    const tape = join(dir, 'inspect.tape');
    const upstream = (async (input: RequestInfo | URL) => new Response(JSON.stringify({ id: 'x', choices: [{ index: 0, message: { role: 'assistant', content: String(input) }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {} });
    try {
      for (const host of ['https://api.openai.com', 'https://api.groq.com']) {
        await (await f(`${host}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(question), headers: { 'content-type': 'application/json' } })).text();
      }
    } finally {
      await f.close();
    }
    // A recording written before hosts were stored.
    await appendRecords(tape, [chatRecord(7)]);
    const r = await cli('inspect', tape);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]!.split('\t')).toEqual(['#', 'offset', 'bytes', 'key', 'status', 'stream', 'signature', 'model', 'first user message', 'origin']);
    expect(rows(r.stdout).map((c) => [c[4], c[7], c[8], c[9]])).toEqual([
      ['200', 'gpt-4o-mini', 'Capital of France?', 'https://api.openai.com'],
      ['200', 'gpt-4o-mini', 'Capital of France?', 'https://api.groq.com'],
      ['200', 'gpt-4o-mini', 'question 7', '-'],
    ]);
    expect(rows(r.stdout).every((c) => c.length === 10)).toBe(true);
  });
});

describe('tapedeck rerecord', () => {
  it('sends each request to the host it was recorded for, keeps that host on the new recording, and the diff pairs them by host', async () => {
    a.calls.length = 0;
    b.calls.length = 0;
    const r = await cli('rerecord', 'both.tape', '--yes', '--out', 'both.new.tape', '--format', 'json');
    expect(r.stderr).toContain(`tapedeck rerecord: 2 requests to 2 hosts (1 to ${b.origin}, 1 to ${a.origin}); estimated cost`);
    expect(a.calls).toEqual([{ path: '/v1/chat/completions', authorization: 'Bearer sk-live' }]);
    expect(b.calls).toEqual([{ path: '/v1/chat/completions', authorization: 'Bearer sk-live' }]);
    // Each new recording names the host it was sent to (the tapes' orders are diff's test below).
    expect((await origins('both.new.tape')).sort()).toEqual([a.origin, b.origin]);
    const report = JSON.parse(r.stdout) as DriftReport;
    expect(report.summary).toMatchObject({ pairs: 2, added: 0, removed: 0, failing: 0 });
    expect(report.entries.map((e) => [e.primary, e.old?.origin === e.new?.origin]).sort()).toEqual([
      ['identical', true],
      ['identical', true],
    ]);
    expect(r.status).toBe(0);
  });

  it("--only picks one host's recordings by its host", async () => {
    a.calls.length = 0;
    b.calls.length = 0;
    const r = await cli('rerecord', 'both.tape', '--yes', '--only', '127.0.0.2', '--out', 'only-b.tape', '--format', 'json');
    expect(r.stderr).toContain(`tapedeck rerecord: 1 request to ${b.origin}; estimated cost`);
    expect([a.calls.length, b.calls.length]).toEqual([0, 1]);
    // A's recording, not picked, is carried over in its place (docs/drift.md).
    expect(await origins('only-b.tape')).toEqual([b.origin, a.origin]);
    expect(r.status).toBe(0);
  });

  it('--upstream with recordings of two hosts is refused before anything is sent', async () => {
    a.calls.length = 0;
    b.calls.length = 0;
    const r = await cli('rerecord', 'both.tape', '--yes', '--upstream', a.origin, '--out', 'one-host.tape');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^tapedeck: E_ARG The recordings were made for 2 hosts, ${b.origin.replace(/\./g, '\\.')} \\(1\\), ${a.origin.replace(/\./g, '\\.')} \\(1\\): --upstream would send every request to `, 'm'));
    expect(r.stderr).toMatch(/\nhint: Leave --upstream out to send each request to the host it was recorded for, or re-record one host's at a time: --only 127\.0\.0\.2:\d+\n$/);
    expect([a.calls.length, b.calls.length]).toEqual([0, 0]);
  });

  it('recordings that name no host need --upstream, and are then made for its host', async () => {
    const tape = join(dir, 'old.tape');
    await createTape(tape);
    await appendRecords(tape, [chatRecord(1), chatRecord(2)]);
    a.calls.length = 0;
    const bare = await cli('rerecord', 'old.tape', '--yes', '--out', 'old.new.tape');
    expect(bare.status).toBe(2);
    expect(bare.stderr).toMatch(/^tapedeck: E_ARG rerecord needs --upstream: the recordings name no host to send their requests to \(made before tapes stored hosts, or written by hand with a path alone; records #0, #1\)\.\nhint: tapedeck rerecord old\.tape --upstream https:\/\/api\.openai\.com --yes --out old\.new\.tape\n$/);
    expect(a.calls).toEqual([]);
    const r = await cli('rerecord', 'old.tape', '--yes', '--upstream', a.origin, '--out', 'old.new.tape');
    expect(r.stderr).toContain(`tapedeck rerecord: 2 requests to ${a.origin}; estimated cost`);
    expect(a.calls).toHaveLength(2);
    expect(await origins('old.new.tape')).toEqual([a.origin, a.origin]);
  });

  it('--upstream on another host than the recordings were made for says the new ones answer that host only', async () => {
    const r = await cli('rerecord', 'both.tape', '--yes', '--only', '127.0.0.2', '--upstream', a.origin, '--out', 'moved.tape');
    expect(r.stderr).toContain(`tapedeck rerecord: note: the recordings were made for ${b.origin}; the new ones are made for ${a.origin}, where --upstream sends them, and answer requests to that host only`);
    // B's request, now recorded for A in its place; A's own recording carried over.
    expect(await origins('moved.tape')).toEqual([a.origin, a.origin]);
  });
});

describe('tapedeck rerecord --hostless-upstream', () => {
  // A tape that mixes recordings of two hosts (A, B) with two that name none (older or written by
  // hand): the hostless ones go to C, a third host on its own address, under a path prefix.
  let c: Host;
  const mixed = 'mixed.tape';
  /** A recording with no host whose credential the tape holds masked, as redaction leaves it. */
  const hostless = (i: number) => {
    const r = chatRecord(i);
    return { ...r, request: { ...r.request, headers: { ...r.request.headers, authorization: 'Bearer [REDACTED]' } } };
  };
  const reset = () => [a, b, c].forEach((h) => (h.calls.length = 0));
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  beforeAll(async () => {
    c = await startHost('C', '127.0.0.3', 0);
    await record(join(dir, mixed), [b, a]);
    await appendRecords(join(dir, mixed), [hostless(1), hostless(2)]);
  });
  afterAll(() => new Promise((ok) => c?.server.close(ok)));

  it('without it the mixed tape is refused, and the hint names it', async () => {
    reset();
    const r = await cli('rerecord', mixed, '--yes', '--out', 'mixed.none.tape');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^tapedeck: E_ARG rerecord needs --hostless-upstream: 2 of the 4 recordings name no host to send their requests to \(made before tapes stored hosts, or written by hand with a path alone; records #2, #3\)\.\nhint: --hostless-upstream URL sends them there and every other request to the host it was recorded for: tapedeck rerecord mixed\.tape --hostless-upstream https:\/\/api\.openai\.com --yes --out mixed\.none\.tape\n$/);
    expect([a.calls.length, b.calls.length, c.calls.length]).toEqual([0, 0, 0]);
  });

  it('sends the hostless requests to its URL under its prefix, every other to its own host, in one run; the plan says where each group goes', async () => {
    reset();
    const r = await cli('rerecord', mixed, '--yes', '--hostless-upstream', `${c.origin}/gw/`, '--out', 'mixed.new.tape', '--format', 'json');
    expect(r.stderr).toContain(`tapedeck rerecord: 4 requests to 3 hosts (1 to ${b.origin}, 1 to ${a.origin}, 2 hostless to ${c.origin}/gw); estimated cost`);
    expect(r.stderr).toContain('recorded 4 of 4 into mixed.new.tape');
    // Each server saw its own requests only; OPENAI_API_KEY went to each (all three are this
    // machine: the rule for hosts elsewhere is test/drift/rerecord-hostless-keys.test.ts).
    expect(a.calls).toEqual([{ path: '/v1/chat/completions', authorization: 'Bearer sk-live' }]);
    expect(b.calls).toEqual([{ path: '/v1/chat/completions', authorization: 'Bearer sk-live' }]);
    expect(c.calls).toEqual([
      { path: '/gw/v1/chat/completions', authorization: 'Bearer sk-live' },
      { path: '/gw/v1/chat/completions', authorization: 'Bearer sk-live' },
    ]);
    // The new recordings name where they went: A and B as recorded, the hostless ones C under /gw.
    const recs = (await readTape(join(dir, 'mixed.new.tape'))).records.map((x) => x.value as { origin?: string; upstreamPath?: string; request: { url: string; body: { messages: { content: string }[] } } });
    expect(recs.map((x) => [x.request.body.messages[0]!.content, x.origin, x.upstreamPath, x.request.url]).sort()).toEqual([
      ['Capital of France?', a.origin, undefined, '/v1/chat/completions'],
      ['Capital of France?', b.origin, undefined, '/v1/chat/completions'],
      ['question 1', c.origin, '/gw', '/v1/chat/completions'],
      ['question 2', c.origin, '/gw', '/v1/chat/completions'],
    ]);
    expect(r.stderr).not.toContain('no credential');
    // A hostless recording pairs with its new one, now filed for C: nothing added or removed.
    expect((JSON.parse(r.stdout) as DriftReport).summary).toMatchObject({ pairs: 4, added: 0, removed: 0 });
  });

  it('with --upstream it is refused before anything is sent, saying which to keep', async () => {
    reset();
    const r = await cli('rerecord', mixed, '--yes', '--upstream', a.origin, '--hostless-upstream', c.origin, '--out', 'mixed.both.tape');
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(
      'tapedeck: E_ARG --upstream and --hostless-upstream were both given: --upstream sends every request to its URL, --hostless-upstream only those of recordings that name no host.\n' +
        `hint: Keep one: --hostless-upstream ${c.origin} to send every other request to the host it was recorded for, or --upstream ${a.origin} alone to send them all there.\n`,
    );
    expect([a.calls.length, b.calls.length, c.calls.length]).toEqual([0, 0, 0]);
  });

  it('--upstream on the mixed tape of two hosts is refused, and the hint names --hostless-upstream', async () => {
    reset();
    const r = await cli('rerecord', mixed, '--yes', '--upstream', c.origin, '--out', 'mixed.up.tape');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^tapedeck: E_ARG The recordings were made for 2 hosts, ${esc(b.origin)} \\(1\\), ${esc(a.origin)} \\(1\\): --upstream would send every request to `, 'm'));
    expect(r.stderr).toContain(`\nhint: Give it as --hostless-upstream ${c.origin} instead: the 2 recordings that name no host go there, each other to the host it was recorded for.\n`);
    expect([a.calls.length, b.calls.length, c.calls.length]).toEqual([0, 0, 0]);
  });

  it('--only-hostless picks the recordings that name no host, alone or with --only', async () => {
    reset();
    const r = await cli('rerecord', mixed, '--yes', '--only-hostless', '--hostless-upstream', c.origin, '--out', 'mixed.hostless.tape', '--format', 'json');
    expect(r.stderr).toContain(`tapedeck rerecord: 2 requests to ${c.origin}; estimated cost`);
    expect([a.calls.length, b.calls.length, c.calls.length]).toEqual([0, 0, 2]);
    // The hosts' recordings, not picked, are carried over in their places.
    expect(await origins('mixed.hostless.tape')).toEqual([b.origin, a.origin, c.origin, c.origin]);
    // The diff compares what was picked: the hosts' recordings are not "removed".
    expect((JSON.parse(r.stdout) as DriftReport).summary.removed).toBe(0);
    // Picked alone, they may take --upstream, though the tape holds two hosts' recordings too.
    reset();
    const one = await cli('rerecord', mixed, '--yes', '--only-hostless', '--only', 'question 2', '--upstream', c.origin, '--out', 'mixed.q2.tape', '--format', 'json');
    expect(one.stderr).toContain(`tapedeck rerecord: 1 request to ${c.origin}; estimated cost`);
    expect([a.calls.length, b.calls.length, c.calls.length]).toEqual([0, 0, 1]);
    // None picked: said with the flags to check.
    const none = await cli('rerecord', 'both.tape', '--yes', '--only-hostless', '--out', 'none.tape');
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/E_RERECORD_EMPTY \S*both\.tape has no HTTP recordings that name no host to send again\.\nhint: Check --only-hostless, or leave it out/);
  });
});

describe('tapedeck diff', () => {
  it('pairs one request made to two hosts by host, whatever the order of the new tape, and names the host when the tapes hold several', async () => {
    // The new tape: A asked first, and A's answer changed.
    a.suffix = ', again';
    try {
      await record(join(dir, 'changed.tape'), [a, b]);
    } finally {
      a.suffix = '';
    }
    const json = await cli('diff', 'both.tape', 'changed.tape', '--format', 'json');
    const report = JSON.parse(json.stdout) as DriftReport;
    expect(report.entries.map((e) => [e.primary, e.old?.origin, e.new?.origin])).toEqual([
      ['text', a.origin, a.origin],
      ['identical', b.origin, b.origin],
    ]);
    expect(json.status).toBe(1);
    const text = await cli('diff', 'both.tape', 'changed.tape');
    const table = text.stdout.split('\n');
    expect(table.find((l) => l.startsWith('CLASS'))).toMatch(/^CLASS\s+TAPE\s+#\s+ROUTE\s+HOST\s+WHAT CHANGED$/);
    expect(table.find((l) => l.startsWith('text'))).toMatch(new RegExp(`^text\\s+\\S+\\s+0\\s+POST /v1/chat/completions\\s+${a.origin.replace(/\./g, '\\.')}\\s+text \\d+% similar`));
    const md = await cli('diff', 'both.tape', 'changed.tape', '--format', 'markdown');
    expect(md.stdout).toContain(`| POST /v1/chat/completions gpt-4o-mini ${a.origin} |`);
  });

  it('a tape of one host shows no HOST column; a request paired across hosts says the host changed', async () => {
    await record(join(dir, 'a.tape'), [a]);
    await record(join(dir, 'b.tape'), [b]);
    const same = await cli('diff', 'a.tape', 'a.tape');
    expect(same.stdout).not.toContain('HOST');
    const r = await cli('diff', 'a.tape', 'b.tape', '--format', 'json');
    const report = JSON.parse(r.stdout) as DriftReport;
    expect(report.entries.map((e) => [e.status, e.requestChange])).toEqual([['paired', [`host differs: ${b.origin} vs ${a.origin} before`]]]);
  });
});
