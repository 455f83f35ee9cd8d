// `tapedeck export --har` of a tape holding an HTTP exchange written by a newer tapedeck (a newer
// record version) left it out, exit 0, calling it "not HTTP exchanges (ReplayCache values, MCP
// sessions)": a recording lost on the way through HAR with no failing exit code. It is now said
// as the version to upgrade for (E_TAPE_VERSION, naming the record), with exit 1.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportTapeHar } from '../../src/store/export-har.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-har-newer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function tape(): Promise<{ file: string; offset: number }> {
  const file = join(dir, 'v9.tape');
  rmSync(file, { force: true });
  await createTape(file, { salt: null });
  await appendRecords(file, [chatRecord(1), { ...chatRecord(2), v: 9 }, { v: 1, request: { q: 1 }, value: 'cached' }]);
  const { records } = await readTape(file);
  return { file, offset: records[1]!.offset };
}

describe('export --har and a newer tapedeck\'s HTTP record', () => {
  it('reports it as a version to upgrade for, not as a record with no HAR form', async () => {
    const { file, offset } = await tape();
    const r = await exportTapeHar(file);
    expect(r.entries).toBe(1);
    expect(r.skipped).toBe(1);
    expect(r.newer).toEqual([{ record: 1, offset, version: 9 }]);
  });

  it('the CLI says E_TAPE_VERSION with the upgrade and exits 1', async () => {
    const { file, offset } = await tape();
    const c = spawnSync(process.execPath, [CLI, 'export', '--har', file], { encoding: 'utf8' });
    expect(c.status).toBe(1);
    expect(c.stderr).toContain('E_TAPE_VERSION');
    expect(c.stderr).toContain(`byte ${offset}`);
    expect(c.stderr).toMatch(/upgrade tapedeck/);
    expect(c.stderr).toContain('1 record is not an HTTP exchange');
    expect(JSON.parse(c.stdout).log.entries).toHaveLength(1);
  });
});
