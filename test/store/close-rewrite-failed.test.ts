// A record run whose closing rewrite fails (a full disk) leaves its new recordings beside the
// older ones it was to replace. The close error says so; once the process is gone the tape
// still says so: the next replay, verify and scan name the run, as for a killed record run.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { interruptedRecordRuns } from '../../src/store/tape-writers.ts';
import { canMountTmpfs } from '../full-disk.ts';

const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-close-failed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A real full disk: a small tmpfs (mounting needs root; elsewhere this case skips).
const canMount = canMountTmpfs(dir);

const URL_ = 'https://api.openai.com/v1/chat/completions';
const ask = (q: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }) });
/** The provider: a large answer naming `tag`. */
const provider = (tag: string) => (async () => new Response(JSON.stringify({ id: `chatcmpl-${tag}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `${tag} ${'z'.repeat(40_000)}` }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } })) as typeof fetch;

/** In a child process: re-records q0, closes (which fails), prints the close error's code, exits. */
function rerecordInChild(tape: string): Promise<string> {
  const script = `
    import { createFetch } from ${JSON.stringify(join(root, 'dist/proxy/index.js'))};
    const provider = async () => new Response(JSON.stringify({ id: 'chatcmpl-new', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'new ' + 'z'.repeat(40000) }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } });
    const f = createFetch({ tape: ${JSON.stringify(tape)}, mode: 'record', fetch: provider, summary: false, onWarning: () => {} });
    const r = await f(${JSON.stringify(URL_)}, ${JSON.stringify(ask('q0'))});
    await r.text();
    const e = await f.close().then(() => 'closed', (e) => e.code);
    process.stdout.write(String(e));
    process.exit(0);
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', () => resolve(out));
  });
}

describe('a record run whose closing rewrite failed', () => {
  it.runIf(canMount)('is named to the next replay once its process is gone', async () => {
    const mnt = join(dir, 'full');
    mkdirSync(mnt);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mnt]);
    try {
      const tape = join(mnt, 'rr.tape');
      const first = createFetch({ tape, mode: 'record', fetch: provider('old'), summary: false });
      for (let i = 0; i < 5; i++) await (await first(URL_, ask(`q${i}`))).text();
      await first.close();
      // Every block taken, then 12 freed: room for an append, none for a copy of the tape.
      const fills: string[] = [];
      for (let i = 0; ; i++) {
        const f = join(mnt, `fill-${i}`);
        try {
          writeFileSync(f, Buffer.alloc(4096));
          fills.push(f);
        } catch {
          rmSync(f, { force: true });
          break;
        }
      }
      for (const f of fills.slice(-12)) rmSync(f);
      expect(await rerecordInChild(tape)).toBe('E_TAPE_IO');
      for (const f of readdirSync(mnt)) if (f.startsWith('fill-')) rmSync(join(mnt, f));
      expect(await interruptedRecordRuns(tape)).toHaveLength(1);
      const warned: string[] = [];
      const replay = createFetch({ tape, mode: 'replay', summary: false, onWarning: (m) => warned.push(m) });
      await (await replay(URL_, ask('q0'))).text();
      await replay.close();
      expect(warned.filter((m) => m.includes('without closing') || m.includes('could not remove')).length).toBe(1);
    } finally {
      execFileSync('umount', [mnt]);
    }
  }, 60_000);
});
