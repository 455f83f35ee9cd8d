// A tape on a full disk opened by a writer (update mode) still replays what it holds. The open
// made a new tape's header in a temp file before it looked whether the tape was there, so on a
// full disk it failed (ENOSPC, "write header failed") for a tape that needed nothing written.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { DurableReplayStore } from '../../src/replay/durable.ts';
import { canMountTmpfs, fillDisk } from '../full-disk.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-reopen-full-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A real full disk: a small tmpfs (mounting needs root; elsewhere this case skips).
const canMount = canMountTmpfs(dir);

const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] });
const provider = (async () =>
  new Response(JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }), {
    headers: { 'content-type': 'application/json' },
  })) as typeof fetch;

describe('a tape on a full disk', () => {
  it.runIf(canMount)('opens in update mode and replays its recordings', async () => {
    const mnt = join(dir, 'full');
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt]);
    try {
      const tape = join(mnt, 'chat.tape');
      const replays = join(mnt, 'replays.tape');
      const first = await DurableReplayStore.open(replays, { env: {} });
      const put = await first.put({ documentId: 'doc-1', query: 'q', documentVersion: '1', model: 'gpt-4o', systemPromptVersion: 'v1', selectedIds: ['a'], body: 'kept\n' });
      await first.close();
      const rec = createFetch({ tape, mode: 'record', fetch: provider, summary: false });
      expect((await rec('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(200);
      await rec.close();
      fillDisk(mnt);
      const upd = createFetch({ tape, mode: 'update', fetch: provider, summary: false });
      const r = await upd('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(r.status, await r.clone().text()).toBe(200);
      expect(r.headers.get('x-tapedeck-recorded')).toBeNull();
      expect(((await r.json()) as { id: string }).id).toBe('chatcmpl-1');
      await upd.close();
      // The replay store opens its tape to write (it appends every put): what it holds is served.
      const store = await DurableReplayStore.open(replays, { env: {} });
      expect(new TextDecoder().decode(store.get(put.token, 'q')?.body)).toBe('kept\n');
      await store.close().catch(() => {});
      // A new tape cannot be made there: the disk is full indeed.
      await expect(DurableReplayStore.open(join(mnt, 'new.tape'), { env: {} })).rejects.toMatchObject({ code: 'E_TAPE_IO' });
      for (const f of readdirSync(mnt)) if (f.startsWith('fill-')) rmSync(join(mnt, f));
    } finally {
      execFileSync('umount', [mnt]);
    }
  });
});
