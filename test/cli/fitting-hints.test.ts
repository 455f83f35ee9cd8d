// Hints that named the wrong fix: serve that cannot listen on an address not this machine's said
// "Stop what listens there" (the hint of a port in use); an import read as the wrong --from format
// said "give the format with --from" without the formats it takes; and rerecord's failed calls
// said "Check --upstream" of a run that sent each call to its recorded host, with no --upstream.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { runCli } from './cli-helpers.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-hints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const env = { ...process.env, TAPEDECK_MODE: '', NO_COLOR: '1', OPENAI_API_KEY: '' };
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env, timeout: 30_000 });

describe('serve that cannot listen: the hint fits why', () => {
  it('an address that is not this machine: another address with --host, not "stop what listens there"', () => {
    // TEST-NET-1 (RFC 5737): never a local address.
    const r = cli('serve', '--tape', 'never.tape', '--host', '192.0.2.1', '--port', '0');
    expect(r.stderr).toContain('E_LISTEN 192.0.2.1 is not an address of this machine');
    expect(r.stderr).toMatch(/\nhint: Give another address with --host: one of this machine's .*127\.0\.0\.1.*0\.0\.0\.0/);
    expect(r.stderr).not.toContain('Stop what listens there');
    expect(r.status).toBe(1);
  });

  it('a port in use: stop what listens there, or another port (as before)', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await runCli(bin, ['serve', '--tape', 'never.tape', '--port', String(port)], { cwd: dir, env });
      expect(r.stderr).toContain(`E_LISTEN Port ${port} on 127.0.0.1 is in use`);
      expect(r.stderr).toContain('hint: Stop what listens there, or give another port with --port (--port 0 takes any free one)');
    } finally {
      blocker.close();
    }
  });
});

describe('import read as the wrong format', () => {
  it('--from nock on a HAR: the formats --from takes, and that without --from the format is detected', () => {
    writeFileSync(join(dir, 'session.json'), JSON.stringify({ log: { version: '1.2', entries: [] } }));
    const r = cli('import', 'session.json', 'out.tape', '--from', 'nock');
    expect(r.stderr).toMatch(/^tapedeck: E_IMPORT_PARSE session\.json is not a readable nock recording/);
    expect(r.stderr).toContain('give the format it is in with --from har|vcr|nock|fixtures|talkback (--from nock read it as nock; without --from the format is detected).');
    expect(r.status).toBe(1);
  });
});

describe('rerecord whose calls cannot reach their host', () => {
  it('names rerecord\'s own flags, not "check --upstream" of a run without one; exit 3', async () => {
    // A port that was just free: nothing listens there.
    const dead = await new Promise<number>((done) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => done(port));
      });
    });
    const answer = async () => new Response(JSON.stringify({ id: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } });
    const f = createFetch({ tape: join(dir, 'dead.tape'), mode: 'record', fetch: answer as typeof fetch, onWarning: () => {} });
    try {
      await (await f(`http://127.0.0.1:${dead}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }) })).text();
    } finally {
      await f.close();
    }
    const r = await runCli(bin, ['rerecord', 'dead.tape', '--yes', '--out', 'dead.new.tape'], { cwd: dir, env });
    expect(r.stderr).toMatch(/record #0 not recorded: HTTP 502 from tapedeck, not the API: E_UPSTREAM [^\n]*ECONNREFUSED/);
    expect(r.stderr).toContain('Check that this host is up and reachable from here, or send the calls to another: tapedeck rerecord --upstream URL');
    expect(r.stderr).not.toContain('Check --upstream');
    expect(r.status).toBe(3);
  });
});
