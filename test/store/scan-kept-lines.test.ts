// `tapedeck scan` reported a secret-named `NAME=value` line of a text/plain request body
// (`aws_secret_access_key = …`) and hinted "re-record the tape (today's recorder redacts these)",
// but the recorder masks such lines only in uploaded files: re-recording stored the value again.
// Such a finding is marked as kept by the recorder, and the hint says what removes it.
import { spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const CLI = join(import.meta.dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-scan-kept-'));
const SECRET = 'PLANTEDINI25secretvalueQ7z';
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('scan findings the recorder keeps', () => {
  it('a NAME=value line of a text body: marked, and the hint does not promise re-recording masks it', async () => {
    const tape = join(dir, 'text.tape');
    const rec = createFetch({ tape, mode: 'record' });
    await (await rec(`${base}/v1/ingest`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `config:\n  aws_secret_access_key = ${SECRET}\n` })).text();
    await rec.close();
    const out = spawnSync(process.execPath, [CLI, 'scan', tape], { encoding: 'utf8' });
    expect(out.status).toBe(1);
    expect(out.stdout).toContain('secret member "PLAN…" (26 chars) (a NAME=value or name: value line: kept by the recorder)');
    expect(out.stderr).not.toContain("re-record the tape (today's recorder redacts these)");
    expect(out.stderr).toContain('fix the record');
  });

  it('the same line in an uploaded file is not marked (the recorder masks it there)', () => {
    const multipart = `--b\r\nContent-Disposition: form-data; name="file"; filename=".env"\r\n\r\nAWS_SECRET_ACCESS_KEY=${SECRET}\r\n--b--\r\n`;
    const [f] = secretsInValue({ request: { body: multipart } });
    expect(f).toMatchObject({ kind: 'secret member' });
    expect(f!.kept).toBeUndefined();
    const [g] = secretsInValue({ request: { body: `AWS_SECRET_ACCESS_KEY=${SECRET}\nX=1\n` } });
    expect(g!.kept).toBe(true);
  });
});

// YAML-style lines (`password: …`) were neither masked in an uploaded file nor reported by scan
// in a text body: only `NAME=value` lines were read.
describe('YAML name: value lines', () => {
  const yaml = (pw: string) => `services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: ${pw}\n      - api_key: "${pw}"\n    image: postgres\n`;

  it('a text body: reported, marked as kept by the recorder', () => {
    const found = secretsInValue({ request: { body: yaml(SECRET) } });
    expect(found.map((f) => [f.path, f.kind, f.kept])).toEqual([
      ['$.request.body line 4', 'secret member', true],
      ['$.request.body line 5', 'secret member', true],
    ]);
  });

  it('an uploaded YAML file: masked on disk, the other lines kept, and scan is clean', async () => {
    const tape = join(dir, 'yaml.tape');
    const rec = createFetch({ tape, mode: 'record' });
    const body = `--b\r\nContent-Disposition: form-data; name="file"; filename="compose.yml"\r\nContent-Type: application/yaml\r\n\r\n${yaml(SECRET)}\r\n--b--\r\n`;
    await (await rec(`${base}/v1/files`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body })).text();
    await rec.close();
    const { readFileSync } = await import('node:fs');
    const bytes = readFileSync(tape).toString('latin1');
    expect(bytes).not.toContain(SECRET);
    expect(bytes).toContain('image: postgres');
    const out = spawnSync(process.execPath, [CLI, 'scan', tape], { encoding: 'utf8' });
    expect(out.stdout + out.stderr).not.toContain('secret member');
    expect(out.status).toBe(0);
  });

  it('block scalars, comments, short and plain values are no finding', () => {
    const body = `token: |\n  ${SECRET}x\npassword: # set later\nkey: short\nname: ${SECRET}\n`;
    expect(secretsInValue({ request: { body } }).map((f) => f.path)).toEqual([]);
  });
});
