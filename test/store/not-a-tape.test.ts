// A tape path holding a `tapedeck export` JSON file, or a Git LFS pointer (a clone without
// `git lfs pull`), was "not a readable tape: wrong magic bytes ... restore it from version
// control or re-record it": the wrong fix for both (version control gives back the same
// pointer). Each is now said as what it is, with its own fix.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-not-a-tape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<TapedeckError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TapedeckError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

const LFS = 'version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n';

describe('a tape path that holds no tape', () => {
  it('a Git LFS pointer: says so, and git lfs pull', async () => {
    const file = join(dir, 'lfs.tape');
    writeFileSync(file, LFS);
    for (const e of [await refusal(readTape(file)), await refusal(ReplayCache.open(file, { mode: 'replay' }))]) {
      expect(e.code).toBe('E_TAPE_CORRUPT');
      expect(e.message).toContain('Git LFS pointer');
      expect(e.hint).toContain('git lfs pull');
      expect(e.hint).not.toContain('restore it from version control');
    }
  });

  it('JSON text (a tapedeck export): says so, and how to import it', async () => {
    const file = join(dir, 'chat.tape.json');
    writeFileSync(file, JSON.stringify({ tapedeck: 1, header: {}, records: [] }, null, 2));
    const e = await refusal(readTape(file));
    expect(e.code).toBe('E_TAPE_CORRUPT');
    expect(e.message).toContain('JSON text');
    expect(e.hint).toContain(`tapedeck import ${file}`);
  });

  it('other bytes are still a damaged header', async () => {
    const file = join(dir, 'junk.tape');
    writeFileSync(file, Buffer.alloc(64, 7));
    const e = await refusal(readTape(file));
    expect(e.code).toBe('E_TAPE_CORRUPT');
    expect(e.message).toContain('wrong magic bytes');
  });
});
