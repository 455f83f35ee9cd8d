// `tapedeck scan` of a tape whose line endings were converted (LF to CRLF), or of a file that is
// no tape, hinted "drop it with tapedeck prune", in the same output whose error said not to prune
// it (prune refuses both). The hint for a file scan could not read as a tape at all says to
// restore it from version control, and names no prune; damage inside a readable tape keeps the
// prune hint.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { scanCommand } from '../../src/store/scan-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-scan-unreadable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const upstream = (async () => new Response('{"answer":"hello there\\nsecond line"}', { headers: { 'content-type': 'application/json' } })) as typeof fetch;

async function scanOutput(file: string): Promise<{ code: number; out: string }> {
  let out = '';
  const write = (c: string | Uint8Array) => {
    out += typeof c === 'string' ? c : Buffer.from(c).toString('utf8');
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(write as typeof process.stdout.write);
  vi.spyOn(process.stderr, 'write').mockImplementation(write as typeof process.stderr.write);
  const code = await scanCommand([file]);
  vi.restoreAllMocks();
  return { code, out };
}

describe('scan of a file it cannot read as a tape', () => {
  it('a CRLF-converted tape: no prune hint, restore from version control', async () => {
    const tape = join(dir, 'crlf.tape');
    const rec = createFetch({ tape, mode: 'record', fetch: upstream });
    await (await rec('https://api.example.com/v1/x', { method: 'POST', body: '{"q":"one\\ntwo"}' })).text();
    await rec.close();
    writeFileSync(tape, Buffer.from(readFileSync(tape).toString('latin1').replace(/\n/g, '\r\n'), 'latin1'));
    const { code, out } = await scanOutput(tape);
    expect(code).toBe(1);
    expect(out).toContain('unreadable as a tape');
    expect(out).not.toMatch(/hint:[^\n]*prune/);
    expect(out).toMatch(/hint:[^\n]*version control/);
  });

  it('a file that is no tape: no prune hint', async () => {
    const file = join(dir, 'fixture.tape');
    writeFileSync(file, '{"fixture": true}\n');
    const { code, out } = await scanOutput(file);
    expect(code).toBe(1);
    expect(out).not.toMatch(/hint:[^\n]*prune/);
  });
});
