// `tapedeck serve --upstream http://host/base?api_key=…` printed the key on its startup line
// (CI logs keep it), though the URL shown was promised to hold no credentials: the user and
// password were dropped, the query was not. Its secret parameters are masked as a recorded
// URL's are; the others stay, so the line still says where requests go.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serve } from './serve-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-serve-secret-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck serve startup line', () => {
  it('shows the upstream without its password nor its secret query parameters', async () => {
    const s = serve(['--upstream', 'http://user:PLANTEDUPW10xyz@127.0.0.1:7149/base?api_key=PLANTEDUPQ11abc&token=PLANTEDUPT12abcdef&v=2', '--tape', join(dir, 'up.tape'), '--mode', 'record', '--port', '0']);
    try {
      await s.url;
      const line = s.stderr().split('\n').find((l) => l.includes('listening on'))!;
      expect(line).not.toContain('PLANTED');
      expect(line).toContain('upstream http://127.0.0.1:7149/base?api_key=%5BREDACTED%5D&token=%5BREDACTED%5D&v=2');
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  });
});
