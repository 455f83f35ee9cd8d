// A call the client cancels (`notifications/cancelled`), with the real server-everything and the
// real SDK Client: recorded as cancelled, replayed as such (the client's own cancellation, no
// miss), a replay that does not cancel it gets a miss that says so, and a tape made before
// cancelled calls were recorded misses with a message that names the call, not another tool.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { tapeTransport, type McpMiss, type TapeTransportOptions } from '../../src/mcp/index.ts';
import { openTestTape, type TapeReport } from '../../src/testing/index.ts';
import { readTape } from '../../src/store/index.ts';
import { EVERYTHING, tmp } from './helpers.ts';

const never = () => {
  throw new Error('replay made the live transport');
};
const everything = () => new StdioClientTransport({ command: 'node', args: [EVERYTHING, 'stdio'], stderr: 'ignore' });

const LONG = { name: 'trigger-long-running-operation', arguments: { duration: 2, steps: 4 } };
const CANCEL_AFTER_MS = 300;

interface Outcome {
  /** How the long call ended: its error (code and message), or 'answered'. */
  long: { code?: number; message: string } | 'answered';
  longMs: number;
  echo: unknown;
}

/**
 * The user's session: a slow tool call, cancelled after CANCEL_AFTER_MS unless `cancel` is
 * false, then an echo. `alsoLong` false leaves the slow call out (the session of a tape
 * recorded before it was added, or by a release that did not record cancelled calls).
 */
async function userSession(client: Client, opts: { cancel?: boolean; alsoLong?: boolean; long?: typeof LONG } = {}): Promise<Outcome> {
  let long: Outcome['long'] = 'answered';
  let longMs = 0;
  if (opts.alsoLong !== false) {
    const ac = new AbortController();
    const timer = opts.cancel === false ? undefined : setTimeout(() => ac.abort('user cancelled'), CANCEL_AFTER_MS);
    const t0 = Date.now();
    await client.callTool(opts.long ?? LONG, undefined, { signal: ac.signal }).then(
      () => undefined,
      (e: unknown) => {
        long = { ...(e instanceof McpError ? { code: e.code } : {}), message: String((e as Error).message) };
      },
    );
    longMs = Date.now() - t0;
    clearTimeout(timer);
  }
  const echo = (await client.callTool({ name: 'echo', arguments: { message: 'after cancel' } })).content;
  return { long, longMs, echo };
}

async function run(transport: ReturnType<typeof tapeTransport>, opts?: Parameters<typeof userSession>[1]): Promise<Outcome> {
  const client = new Client({ name: 'agent', version: '1' });
  await client.connect(transport);
  try {
    return await userSession(client, opts);
  } finally {
    await client.close();
  }
}

/** A tape with the user's session recorded live: a cancelled slow call, then echo. */
async function recorded(name: string, extra: Partial<TapeTransportOptions> = {}, long = LONG): Promise<{ dir: string; tape: string; live: Outcome }> {
  const dir = tmp(name);
  const tape = join(dir, 'cancel.tape');
  const live = await run(tapeTransport(everything, { tape, mode: 'record', ...extra }), { long });
  return { dir, tape, live };
}

describe('a call the client cancels', () => {
  it('is recorded as cancelled, and replays as cancelled: the SDK raises its own cancellation, echo replays, no miss', async () => {
    const { dir, tape, live } = await recorded('cancel');
    expect(live.long).toMatchObject({ message: expect.stringContaining('user cancelled') });
    expect(live.echo).toEqual([{ type: 'text', text: 'Echo: after cancel' }]);

    // On the tape: the request, no answer, when it was cancelled.
    const records = (await readTape(tape)).records.map((r) => r.value as { method: string; request: { params?: { name?: string } }; events: { response?: true }[]; cancelled?: { ms: number } });
    const slow = records.filter((r) => r.request.params?.name === LONG.name);
    expect(slow).toHaveLength(1);
    expect(slow[0]!.events.filter((e) => e.response)).toHaveLength(0);
    expect(slow[0]!.cancelled?.ms).toBeGreaterThanOrEqual(CANCEL_AFTER_MS - 50);

    const misses: McpMiss[] = [];
    const t = tapeTransport(never, { tape, mode: 'replay', onMiss: (_r, m) => void misses.push(m) });
    const replayed = await run(t);
    // The client's own cancellation, when it cancelled (not a tapedeck answer at once).
    expect(replayed.long).toEqual(live.long);
    expect(replayed.long).not.toMatchObject({ code: -32050 });
    expect(replayed.longMs).toBeGreaterThanOrEqual(CANCEL_AFTER_MS - 20);
    expect(replayed.echo).toEqual(live.echo);
    expect(misses.map((m) => m.message)).toEqual([]);
    expect((await t.tape).misses).toEqual([]);
    // inspect says the call was cancelled, so its missing answer is not read as a hang.
    const ins = spawnSync(process.execPath, [join(import.meta.dirname, '../../dist/cli.js'), 'inspect', tape], { encoding: 'utf8' });
    expect(ins.stdout).toMatch(/trigger-long-running-operation[^\n]* \(cancelled by the client after \d+ ms\)/);
    expect(ins.stdout.match(/cancelled by the client/g)).toHaveLength(1);
    rmSync(dir, { recursive: true, force: true });
  });

  it('replays through the test tape (tape.mcp()) with no miss, so the test passes', async () => {
    const dir = tmp('cancel-testtape');
    const path = join(dir, 'user-cancels.tape');
    const t1 = openTestTape({ tape: path, mode: 'record', env: {}, test: 'user can cancel a slow tool', recordCommand: 'npm test -- -t cancel' });
    const live = await run(t1.mcp(everything));
    await t1.close();

    const t2 = openTestTape({ tape: path, env: { CI: 'true' }, test: 'user can cancel a slow tool', recordCommand: 'npm test -- -t cancel' });
    expect(t2.mode).toBe('replay');
    const replayed = await run(t2.mcp(never));
    expect(replayed.long).toEqual(live.long);
    expect(replayed.echo).toEqual(live.echo);
    expect(t2.misses).toEqual([]);
    // close() would throw E_MISS for a miss: the test passes.
    const report: TapeReport = await t2.close();
    expect(report.misses).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a replay that does not cancel it gets a miss saying so, once the recorded time and the grace have passed; echo still replays', async () => {
    const { dir, tape } = await recorded('cancel-not');
    const misses: McpMiss[] = [];
    const t = tapeTransport(never, { tape, mode: 'replay', onMiss: (_r, m) => void misses.push(m) });
    const replayed = await run(t, { cancel: false });
    expect(replayed.long).toMatchObject({ code: -32050 });
    const message = (replayed.long as { message: string }).message;
    expect(message).toMatch(/tools\/call trigger-long-running-operation: recorded as cancelled by the client after \d+ ms; this run did not cancel it/);
    expect(message).toContain("re-record: tapeTransport(transport, { tape, mode: 'record' })");
    // The documented wait: the recorded time plus 2000 ms (the default grace).
    expect(replayed.longMs).toBeGreaterThanOrEqual(CANCEL_AFTER_MS + 2000 - 50);
    expect(replayed.echo).toEqual([{ type: 'text', text: 'Echo: after cancel' }]);
    expect(misses).toHaveLength(1);
    expect(misses[0]!.label).toBe('tools/call trigger-long-running-operation');
    rmSync(dir, { recursive: true, force: true });
  });

  it('update mode: a call recorded as cancelled that this run does not cancel goes to the live server and its answer is recorded', async () => {
    const { dir, tape } = await recorded('cancel-update');
    const t = tapeTransport(everything, { tape, mode: 'update', cancelGraceMs: 300 });
    const updated = await run(t, { cancel: false });
    expect(updated.long).toBe('answered');
    // It waited for the cancellation first: recorded time plus the grace, then the server's 2 s.
    expect(updated.longMs).toBeGreaterThanOrEqual(CANCEL_AFTER_MS + 300 + 1500);
    expect((await t.tape).misses).toEqual([]);
    // The cancelled recording stays for the sessions that cancel; the answered one is added.
    const slow = (await readTape(tape)).records.map((r) => r.value as { request: { params?: { name?: string } }; cancelled?: unknown }).filter((r) => r.request.params?.name === LONG.name);
    expect(slow.map((r) => r.cancelled !== undefined).sort()).toEqual([false, true]);
    // The session that does not cancel now replays from the tape, answered.
    const misses: McpMiss[] = [];
    const again = await run(tapeTransport(never, { tape, mode: 'replay', onMiss: (_r, m) => void misses.push(m) }), { cancel: false });
    expect(again.long).toBe('answered');
    expect(misses).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('update mode: a new call after a replayed cancelled one brings the server up to date without waiting for the cancelled call', async () => {
    // A slow call of 30 s: waiting for it would take far longer than starting the server does
    // on a loaded machine, so the bound below tells the two apart.
    const slow = { ...LONG, arguments: { duration: 30, steps: 4 } };
    const { dir, tape } = await recorded('cancel-update-warm', {}, slow);
    const t = tapeTransport(everything, { tape, mode: 'update' });
    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(t);
    const replayed = await userSession(client, { long: slow });
    expect(replayed.long).toMatchObject({ message: expect.stringContaining('user cancelled') });
    // New to the tape: the server starts and is sent what the client sent so far, the slow call
    // sent and cancelled, not waited for.
    const t0 = Date.now();
    const sum = await client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } });
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(JSON.stringify(sum.content)).toContain('5');
    await client.close();
    const m = await t.tape;
    // initialize, initialized, the cancelled call and echo came from the tape.
    expect(m.hits).toBe(4);
    expect(m.misses).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a tape recorded without the cancelled call (earlier releases): the miss names the call and what the tape has, not another tool; re-recording fixes it', async () => {
    const dir = tmp('cancel-old');
    const tape = join(dir, 'cancel.tape');
    // What an earlier release left on the tape for the user's session: initialize, initialized, echo.
    await run(tapeTransport(everything, { tape, mode: 'record' }), { alsoLong: false });

    const misses: McpMiss[] = [];
    const replayed = await run(tapeTransport(never, { tape, mode: 'replay', onMiss: (_r, m) => void misses.push(m) }));
    expect(replayed.long).toMatchObject({ code: -32050 });
    expect(misses).toHaveLength(1);
    expect(misses[0]!.message).toMatch(/^tools\/call trigger-long-running-operation: no recording of trigger-long-running-operation \(tools\/call recorded: echo\); re-record/);
    expect(misses[0]!.report).not.toContain('closest recording');

    // As the message says: recorded again, the cancelled call is on the tape and replays.
    await run(tapeTransport(everything, { tape, mode: 'record' }));
    const after: McpMiss[] = [];
    const fixed = await run(tapeTransport(never, { tape, mode: 'replay', onMiss: (_r, m) => void after.push(m) }));
    expect(fixed.long).toMatchObject({ message: expect.stringContaining('user cancelled') });
    expect(after).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('the closest recording of a miss is a call of the same tool when there is one, even if another tool\'s call differs in fewer values', async () => {
    const dir = tmp('cancel-closest');
    const tape = join(dir, 'closest.tape');
    const session = async (t: ReturnType<typeof tapeTransport>, echoArgs: Record<string, unknown>) => {
      const client = new Client({ name: 'agent', version: '1' });
      await client.connect(t);
      await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } });
      await client.callTool({ name: 'echo', arguments: echoArgs }).catch(() => undefined);
      await client.close();
    };
    await session(tapeTransport(everything, { tape, mode: 'record' }), { message: 'recorded' });
    const misses: McpMiss[] = [];
    // Against get-sum's call it differs in 2 values (name, message), against echo's in 3.
    await session(tapeTransport(never, { tape, mode: 'replay', onMiss: (_r, m) => void misses.push(m) }), { message: 'changed', a: 1, b: 2 });
    expect(misses).toHaveLength(1);
    expect(misses[0]!.message).toMatch(/^tools\/call echo: params\.arguments\.\w+ differs, /);
    expect(misses[0]!.message).not.toContain('params.name');
    expect(misses[0]!.report).toContain('closest recording: tools/call echo,');
    rmSync(dir, { recursive: true, force: true });
  });
});
