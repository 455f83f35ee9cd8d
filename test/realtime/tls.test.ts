// `tapedeck serve --tls`: HTTP routes work over HTTPS too (a chat completion from the real
// OpenAI SDK in a child process that trusts the CA through NODE_EXTRA_CA_CERTS, recorded and
// replayed); `--tls-cert`/`--tls-key` serve the user's own certificate; the TLS flags without
// --tls, or a certificate without its key, are usage errors that say what to do.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { CLI, serve } from '../proxy/serve-cli.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A chat completion from the openai package in a child process, trusting `caFile` (async: the fake upstream runs in this process). */
function chat(url: string, caFile: string): Promise<{ status: number | null; out: string; err: string }> {
  const script = `import OpenAI from 'openai';
const c = new OpenAI({ apiKey: 'sk-test-tls-0123456789abcdefghij', baseURL: process.argv[1] + '/v1' });
const r = await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'over tls' }] });
console.log(r.choices[0].message.content);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, url], { cwd: join(import.meta.dirname, '../..'), env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile } });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve) => child.once('close', (status) => resolve({ status, out: out.trim(), err })));
}

describe('tapedeck serve --tls', () => {
  it('serves the HTTP routes over HTTPS: the OpenAI SDK records and replays through it, trusting the CA by NODE_EXTRA_CA_CERTS', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'chat.tape');
    const caFile = join(dir, 'ca.pem');
    const rec = serve(['--upstream', up.url, '--tape', tape, '--mode', 'record', '--port', '0', '--tls', '--tls-ca', caFile]);
    let live: string;
    try {
      const url = await rec.url;
      expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const r = await chat(url, caFile);
      expect(r.err).toBe('');
      live = r.out;
      expect(live.length).toBeGreaterThan(0);
    } finally {
      rec.child.kill('SIGTERM');
      await rec.exited;
      await up.close();
    }
    expect(up.calls).toHaveLength(1);
    const play = serve(['--tape', tape, '--port', '0', '--tls', '--tls-ca', caFile]);
    try {
      expect((await chat(await play.url, caFile)).out).toBe(live);
    } finally {
      play.child.kill('SIGTERM');
      await play.exited;
    }
  });

  it('--tls-cert and --tls-key serve your own certificate', async () => {
    const own = await makeLocalCertificate();
    writeFileSync(join(dir, 'cert.pem'), own.cert);
    writeFileSync(join(dir, 'key.pem'), own.key);
    const srv = serve(['--tape', join(dir, 'none.tape'), '--port', '0', '--tls', '--tls-cert', join(dir, 'cert.pem'), '--tls-key', join(dir, 'key.pem')]);
    try {
      const url = new URL(await srv.url);
      const body = await new Promise<string>((resolve, reject) => {
        const req = request({ host: url.hostname, port: url.port, path: '/__tapedeck/health', ca: own.ca }, (res) => {
          let b = '';
          res.on('data', (c) => (b += c));
          res.on('end', () => resolve(b));
        });
        req.on('error', reject);
        req.end();
      });
      expect(JSON.parse(body)).toMatchObject({ status: 'ok' });
    } finally {
      srv.child.kill('SIGTERM');
      await srv.exited;
    }
  });

  it('the TLS flags without --tls, and a certificate without its key, are usage errors with the fix', () => {
    const a = spawnSync(process.execPath, [CLI, 'serve', '--tape', 'x.tape', '--tls-ca', 'ca.pem'], { encoding: 'utf8' });
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/--tls-ca needs --tls/);
    const b = spawnSync(process.execPath, [CLI, 'serve', '--tape', 'x.tape', '--tls', '--tls-cert', 'c.pem'], { encoding: 'utf8' });
    expect(b.status).not.toBe(0);
    expect(b.stderr).toMatch(/--tls-cert and --tls-key go together/);
    expect(b.stderr).not.toMatch(/\n\s+at /);
  });
});
