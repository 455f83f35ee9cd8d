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
    expect(out.stdout).toContain('secret member "PLAN…" (26 chars) (a NAME=value line: kept by the recorder)');
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
