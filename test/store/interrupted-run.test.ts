// A record run that ends without closing its tape (killed after its client got the answer):
// its recording is kept, but the older recording of the same request it was to replace at
// close is too, and replay serves that one first. Nothing said so: the old answer came back
// silently. Now whoever opens the tape next (replay, or a writer) is told, with the fix.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { WebSocket } from 'ws';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-interrupted-'));
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = async (f: typeof fetch, base: string): Promise<string> => {
  const r = await f(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }) });
  return ((await r.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
};

/** Records one answer in a child process that is killed (SIGKILL) once it has the answer. */
function killedRecordRun(tape: string, base: string): Promise<string> {
  const script = `
    import { createFetch } from ${JSON.stringify(join(root, 'dist/proxy/index.js'))};
    const f = createFetch({ tape: ${JSON.stringify(tape)}, mode: 'record' });
    const r = await f(${JSON.stringify(`${base}/v1/chat/completions`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }) });
    process.stdout.write((await r.json()).choices[0].message.content);
    process.kill(process.pid, 'SIGKILL');
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve(out) : reject(new Error(`child ended with ${signal ?? _code}: ${out}`))));
  });
}

describe('a record run that ended without closing its tape', () => {
  it('is named, with its fix, to the replay that serves the older recording, and to the next writer', async () => {
    const tape = join(dir, 'chat.tape');
    const first = createFetch({ tape, mode: 'record' });
    const old = await ask(first, upstream.url);
    await first.close();
    const killed = await killedRecordRun(tape, upstream.url);
    expect(killed).not.toBe(old);
    expect(readdirSync(`${tape}.writers`).length).toBe(1);

    const warned: string[] = [];
    const replay = createFetch({ tape, mode: 'replay', onWarning: (m) => warned.push(m) });
    // The older recording comes first, as before: what changed is that it is not silent.
    expect(await ask(replay, upstream.url)).toBe(old);
    await replay.close();
    const note = warned.find((m) => m.includes('ended without closing'));
    expect(note, warned.join('\n')).toContain(`${tape}: a record run (pid `);
    expect(note).toContain('replay serves those first');
    expect(note).toContain('TAPEDECK_MODE=record');
    // A reader leaves the registration where it is.
    expect(readdirSync(`${tape}.writers`).length).toBe(1);

    // The next writer is told too, and removes the ended writer's registration.
    const writerWarned: string[] = [];
    const update = createFetch({ tape, mode: 'update', onWarning: (m) => writerWarned.push(m) });
    await ask(update, upstream.url);
    await update.close();
    expect(writerWarned.some((m) => m.includes('ended without closing'))).toBe(true);
    expect(existsSync(`${tape}.writers`)).toBe(false);

    // Recording again and closing replaces both: replay then serves the new answer, and says nothing.
    const again = createFetch({ tape, mode: 'record' });
    const fresh = await ask(again, upstream.url);
    await again.close();
    const quiet: string[] = [];
    const last = createFetch({ tape, mode: 'replay', onWarning: (m) => quiet.push(m) });
    expect(await ask(last, upstream.url)).toBe(fresh);
    await last.close();
    expect(quiet.filter((m) => m.includes('ended without closing'))).toEqual([]);
  });

  // The fix the docs give, deleting the tape to record it again, was still warned about: the
  // ended run's registration outlived the tape it recorded to.
  it('is not named once its tape was deleted: the run recording the tape anew is not warned, and removes the registration', async () => {
    const tape = join(dir, 'deleted.tape');
    await killedRecordRun(tape, upstream.url);
    expect(readdirSync(`${tape}.writers`).length).toBe(1);
    rmSync(tape);
    const warned: string[] = [];
    const fresh = createFetch({ tape, mode: 'record', onWarning: (m) => warned.push(m) });
    await ask(fresh, upstream.url);
    await fresh.close();
    expect(warned.filter((m) => m.includes('ended without closing'))).toEqual([]);
    expect(existsSync(`${tape}.writers`)).toBe(false);
  });

  it('an update run that ended without closing is not named: it replaced nothing', async () => {
    const tape = join(dir, 'update.tape');
    const first = createFetch({ tape, mode: 'record' });
    await ask(first, upstream.url);
    await first.close();
    const script = `
      import { createFetch } from ${JSON.stringify(join(root, 'dist/proxy/index.js'))};
      const f = createFetch({ tape: ${JSON.stringify(tape)}, mode: 'update' });
      await f.ready;
      process.kill(process.pid, 'SIGKILL');
    `;
    await new Promise<void>((resolve) => spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' }).on('exit', () => resolve()));
    expect(readdirSync(`${tape}.writers`).length).toBe(1);
    const warned: string[] = [];
    const replay = createFetch({ tape, mode: 'replay', onWarning: (m) => warned.push(m) });
    await ask(replay, upstream.url);
    await replay.close();
    expect(warned.filter((m) => m.includes('ended without closing'))).toEqual([]);
  });

  it('one process that held the tape twice (its HTTP recordings and its realtime sessions, as tapedeck serve does) is named once', async () => {
    const tape = join(dir, 'twice.tape');
    const first = createFetch({ tape, mode: 'record' });
    await ask(first, upstream.url);
    await first.close();
    // Two record registrations of one killed process, as a `serve --mode record` leaves them.
    const script = `
      import { createFetch } from ${JSON.stringify(join(root, 'dist/proxy/index.js'))};
      const a = createFetch({ tape: ${JSON.stringify(tape)}, mode: 'record' });
      const b = createFetch({ tape: ${JSON.stringify(tape)}, mode: 'record' });
      // Each re-records the request the tape holds (a run that recorded nothing left nothing stale).
      for (const f of [a, b]) {
        const r = await f(process.env.TAPEDECK_TEST_UPSTREAM + '/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }) });
        await r.text();
      }
      process.kill(process.pid, 'SIGKILL');
    `;
    await new Promise<void>((resolve) => spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit', env: { ...process.env, TAPEDECK_TEST_UPSTREAM: upstream.url } }).on('exit', () => resolve()));
    expect(readdirSync(`${tape}.writers`).length).toBe(2);
    const warned: string[] = [];
    const replay = createFetch({ tape, mode: 'replay', onWarning: (m) => warned.push(m) });
    await ask(replay, upstream.url);
    await replay.close();
    const notes = warned.filter((m) => m.includes('ended without closing'));
    expect(notes, warned.join('\n')).toHaveLength(1);
    expect(notes[0]).toMatch(/\(pid \d+, runs \S+, \S+\)/);
  });

  it('a proxy tells it once, though its realtime sessions open the same tape after its HTTP recordings', async () => {
    const tape = join(dir, 'proxy.tape');
    const first = createFetch({ tape, mode: 'record' });
    await ask(first, upstream.url);
    await first.close();
    await killedRecordRun(tape, upstream.url);
    const warned: string[] = [];
    const proxy = await startProxy({ tape, mode: 'replay', port: 0, onWarning: (m) => warned.push(m) });
    try {
      // A realtime connect opens the tape for sessions (none recorded: a miss, then a close).
      const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, ['realtime']);
      await new Promise((resolve) => {
        ws.once('close', resolve);
        ws.once('error', resolve);
      });
    } finally {
      await proxy.close();
    }
    const notes = warned.filter((m) => m.includes('ended without closing'));
    expect(notes, warned.join('\n')).toHaveLength(1);
  });

  // The note lives beside the tape (<tape>.writers/, which tapedeck init has git ignore): a tape
  // committed after a Ctrl-C'd record run replayed the old answers in every clone and in CI, and
  // verify and the pre-commit hook (scan --staged) both passed it.
  it('fails tapedeck verify, tapedeck scan and the pre-commit hook (scan --staged), naming the run and the fix', async () => {
    const repo = join(dir, 'repo');
    mkdirSync(join(repo, 'tapes'), { recursive: true });
    const tape = join(repo, 'tapes', 'chat.tape');
    const first = createFetch({ tape, mode: 'record' });
    await ask(first, upstream.url);
    await first.close();
    const cli = (args: string[], cwd = repo) => spawnSync(process.execPath, [join(root, 'dist/cli.js'), ...args], { cwd, encoding: 'utf8' });
    expect(cli(['verify', tape]).status).toBe(0);
    await killedRecordRun(tape, upstream.url);

    const v = cli(['verify', tape]);
    expect(v.status, v.stdout + v.stderr).toBe(1);
    expect(v.stdout).toContain('TAPEDECK_INTERRUPTED_RUN');
    expect(v.stdout).toContain('ended without closing the tape');
    expect(v.stdout).toContain('1 problem(s): the 2 records are intact, but replay serves the recordings the run was to replace first.');

    const s = cli(['scan', 'tapes']);
    expect(s.status, s.stdout + s.stderr).toBe(1);
    expect(s.stderr).toContain('ended without closing the tape');
    expect(s.stderr).toContain('hint: record again and let the run close before committing');

    const git = (args: string[]) => spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
    git(['init', '-q']);
    git(['add', 'tapes/chat.tape']);
    // Run from a subfolder, as a user might: git names staged files from the top of the tree.
    const staged = cli(['scan', '--staged'], join(repo, 'tapes'));
    expect(staged.status, staged.stdout + staged.stderr).toBe(1);
    expect(staged.stderr).toContain('tapes/chat.tape: a record run (pid ');
    expect(staged.stderr).toContain('then git add the tape again');

    // Recording again and closing: every check passes.
    const again = createFetch({ tape, mode: 'record' });
    await ask(again, upstream.url);
    await again.close();
    expect(cli(['verify', tape]).status).toBe(0);
    expect(cli(['scan', 'tapes']).status).toBe(0);
  });
});
