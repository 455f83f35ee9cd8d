// A record run on Redis killed before it closed: its recording is kept beside the older one it
// was to replace, and replay serves the older one first. On a tape the next reader is warned and
// `tapedeck verify` fails; on Redis nothing said so (replay silent, verify "ok"). Now the
// namespace keeps the note, as `<tape>.writers/` does: the replay and the next writer are told,
// verify exits 1 naming the run, and a record run that closes clears it.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { freshNamespace, redisDescribe, useRedis, useRedisCluster, verifyNamespace } from './setup.ts';

const root = join(import.meta.dirname, '../..');
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream?.close();
});

const body = (text: string) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] });
const ask = async (f: typeof fetch, text = 'hello'): Promise<string> => {
  const r = await f(`${upstream.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(text) });
  return ((await r.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
};

/** Records in a child process (the built package) that is killed (SIGKILL) once it has its answers. */
function killedRun(store: string, mode: 'record' | 'update', texts: string[]): Promise<string> {
  const script = `
    import { createFetch } from ${JSON.stringify(join(root, 'dist/proxy/index.js'))};
    const f = createFetch({ store: ${JSON.stringify(store)}, mode: ${JSON.stringify(mode)} });
    await f.ready;
    let out = '';
    for (const t of ${JSON.stringify(texts)}) {
      const r = await f(${JSON.stringify(`${upstream.url}/v1/chat/completions`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: t }] }) });
      out += (await r.json()).choices[0].message.content;
    }
    process.stdout.write(out);
    process.kill(process.pid, 'SIGKILL');
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve(out) : reject(new Error(`child ended with ${signal ?? code}: ${out}`))));
  });
}


const noted = (ws: string[]) => ws.filter((m) => m.includes('ended without closing'));

redisDescribe('a Redis record run killed before it closed', () => {
  const redis = useRedis();

  it('is named to the replay that serves the older recording, fails verify, and is cleared by a record run that closes', async () => {
    const namespace = freshNamespace('killed');
    const store = `${redis.current.url}/0?namespace=${namespace}`;
    const first = createFetch({ store, mode: 'record' });
    const old = await ask(first);
    await first.close();
    const killed = await killedRun(store, 'record', ['hello']);
    expect(killed).not.toBe(old);

    const warned: string[] = [];
    const replay = createFetch({ store, mode: 'replay', onWarning: (m) => warned.push(m) });
    // The older recording still comes first: what changed is that it is not silent.
    expect(await ask(replay)).toBe(old);
    await replay.close();
    const note = noted(warned)[0];
    expect(note, warned.join('\n')).toContain(`namespace ${namespace}`);
    expect(note).toContain('a record run (pid ');
    expect(note).toContain('replay serves those first');
    expect(note).toContain('TAPEDECK_MODE=record');

    const checked = await verifyNamespace(redis.current.url, namespace);
    expect(checked.code, checked.out).toBe(1);
    expect(checked.out).toContain('TAPEDECK_INTERRUPTED_RUN');
    expect(checked.out).not.toMatch(/^ok$/m);

    // A reader leaves the note: the next replay is told too.
    const again: string[] = [];
    const replay2 = createFetch({ store, mode: 'replay', onWarning: (m) => again.push(m) });
    await ask(replay2);
    await replay2.close();
    expect(noted(again).length).toBe(1);

    // Recording again and closing replaces both: replay serves the new answer, quietly, and verify is ok.
    const record = createFetch({ store, mode: 'record' });
    const fresh = await ask(record);
    await record.close();
    const quiet: string[] = [];
    const last = createFetch({ store, mode: 'replay', onWarning: (m) => quiet.push(m) });
    expect(await ask(last)).toBe(fresh);
    await last.close();
    expect(noted(quiet)).toEqual([]);
    const ok = await verifyNamespace(redis.current.url, namespace);
    expect(ok.code, ok.out).toBe(0);
  }, 60_000);

  it('the next writer (an update run) is told, and takes the note over', async () => {
    const namespace = freshNamespace('killed-update');
    const store = `${redis.current.url}/0?namespace=${namespace}`;
    const first = createFetch({ store, mode: 'record' });
    await ask(first);
    await first.close();
    await killedRun(store, 'record', ['hello']);
    const told: string[] = [];
    const update = createFetch({ store, mode: 'update', onWarning: (m) => told.push(m) });
    await ask(update);
    await update.close();
    expect(noted(told).length, told.join('\n')).toBe(1);
    const after: string[] = [];
    const replay = createFetch({ store, mode: 'replay', onWarning: (m) => after.push(m) });
    await ask(replay);
    await replay.close();
    expect(noted(after)).toEqual([]);
  }, 60_000);

  it('is not named when it left nothing to replace (an update run, or requests the namespace did not hold)', async () => {
    const namespace = freshNamespace('killed-nothing');
    const store = `${redis.current.url}/0?namespace=${namespace}`;
    const first = createFetch({ store, mode: 'record' });
    await ask(first);
    await first.close();
    await killedRun(store, 'update', ['hello', 'new one']);
    await killedRun(store, 'record', ['another new one']);
    const warned: string[] = [];
    const replay = createFetch({ store, mode: 'replay', onWarning: (m) => warned.push(m) });
    await ask(replay);
    await replay.close();
    expect(noted(warned)).toEqual([]);
    const checked = await verifyNamespace(redis.current.url, namespace);
    expect(checked.code, checked.out).toBe(0);
  }, 60_000);
});

redisDescribe('a Redis Cluster record run killed before it closed', () => {
  // The note, the writers and the connection asked about are on the node that holds the namespace.
  const cluster = useRedisCluster();
  it('is named to the replay and fails verify', async () => {
    const namespace = freshNamespace('killed-cluster');
    const store = `${cluster.current.url}?namespace=${namespace}`;
    const first = createFetch({ store, mode: 'record' });
    const old = await ask(first);
    await first.close();
    await killedRun(store, 'record', ['hello']);
    const warned: string[] = [];
    const replay = createFetch({ store, mode: 'replay', onWarning: (m) => warned.push(m) });
    expect(await ask(replay)).toBe(old);
    await replay.close();
    expect(noted(warned).length, warned.join('\n')).toBe(1);
    const checked = await verifyNamespace(cluster.current.url, namespace);
    expect(checked.code, checked.out).toBe(1);
    expect(checked.out).toContain('TAPEDECK_INTERRUPTED_RUN');
  }, 60_000);
});
