// An upstream answer with valid HTTP framing but a body that is not what its content type says
// (invalid JSON, invalid UTF-8) is recorded byte for byte, with a warning at record time, and
// `tapedeck inspect` marks it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-malformed-answer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '../../dist/cli.js');

const bodies: Record<string, Buffer> = {
  '/v1/bad-json': Buffer.from('{"choices": [ {"message": '),
  '/v1/bad-utf8': Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  '/v1/good': Buffer.from('{"ok":true}'),
};

it('records such answers byte for byte, warns when recording them, and inspect marks them', async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = bodies[req.url ?? ''] ?? Buffer.from('{}');
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
      res.end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const up = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const tape = join(dir, 'malformed.tape');
  const warnings: string[] = [];
  const rec = createFetch({ tape, mode: 'record', onWarning: (m) => warnings.push(m) });
  for (const path of Object.keys(bodies)) {
    const res = await rec(`${up}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q: path }) });
    expect(Buffer.from(await res.arrayBuffer()).equals(bodies[path]!)).toBe(true);
  }
  await rec.close();
  await new Promise<void>((r) => server.close(() => r()));
  expect(warnings.filter((w) => /is not valid JSON although its content type says JSON/.test(w))).toHaveLength(1);
  expect(warnings.filter((w) => /is not valid UTF-8 although its content type says JSON/.test(w))).toHaveLength(1);
  expect(warnings.join('\n')).not.toContain('/v1/good');
  const play = createFetch({ tape, mode: 'replay' });
  // On the host they were recorded for (a loopback host's port is not compared).
  for (const path of Object.keys(bodies)) {
    const res = await play(`http://127.0.0.1:9${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q: path }) });
    expect(Buffer.from(await res.arrayBuffer()).equals(bodies[path]!), path).toBe(true);
  }
  await play.close();
  const out = execFileSync(process.execPath, [CLI, 'inspect', tape], { encoding: 'utf8' }).trim().split('\n').slice(1);
  // The mark ends the first-user-message column (8); the host (origin) follows it.
  expect(out.map((l) => (l.split('\t')[8]!.match(/\[answer ([^\]]+)\]$/) ?? [])[1] ?? null)).toEqual(['not valid JSON', 'not valid UTF-8', null]);
});
