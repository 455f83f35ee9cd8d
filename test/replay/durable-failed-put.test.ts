// A put whose write fails (a full disk) leaves nothing behind in memory: the store keeps serving
// what is on the tape (the previous entry for that query, or nothing), so a replay never answers
// with bytes that are on no disk and vanish at the next restart.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableReplayStore } from '../../src/replay/durable.ts';
import type { ReplayPut } from '../../src/replay/index.ts';
import { canMountTmpfs, fillDisk } from '../full-disk.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-replay-failed-put-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A real full disk: a small tmpfs (mounting needs root; elsewhere this case skips).
const canMount = canMountTmpfs(dir);

const put = (query: string, body: string): ReplayPut => ({ documentId: 'doc-1', query, documentVersion: '1', model: 'gpt-4o', systemPromptVersion: 'v1', selectedIds: ['a'], body });

describe('DurableReplayStore on a full disk', () => {
  it.runIf(canMount)('a rejected put is not served: the older entry for its query stays, a new query stays unknown', async () => {
    const mnt = join(dir, 'full');
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt]);
    try {
      const path = join(mnt, 'replays.tape');
      const store = await DurableReplayStore.open(path, { env: {} });
      const old = await store.put(put('kept', 'old answer\n'));
      fillDisk(mnt);
      const big = 'y'.repeat(8192);
      await expect(store.put(put('kept', big))).rejects.toMatchObject({ code: 'E_TAPE_IO' });
      await expect(store.put(put('new', big))).rejects.toMatchObject({ code: 'E_TAPE_IO' });
      // What memory serves is what the tape holds.
      expect(new TextDecoder().decode(store.get(old.token, 'kept')?.body)).toBe('old answer\n');
      expect(store.get(old.token, 'new')).toBeUndefined();
      expect(store.size).toBe(1);
      await store.close().catch(() => {});
      for (const f of readdirSync(mnt)) if (f.startsWith('fill-')) rmSync(join(mnt, f));
      const again = await DurableReplayStore.open(path, { env: {} });
      expect(new TextDecoder().decode(again.get(old.token, 'kept')?.body)).toBe('old answer\n');
      expect(again.get(old.token, 'new')).toBeUndefined();
      await again.close();
    } finally {
      execFileSync('umount', [mnt]);
    }
  }, 60_000);
});
