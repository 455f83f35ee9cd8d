// Public functions called from plain JavaScript without their options object, or with null or
// another kind of value in its place: they used to throw Node's TypeError ("Cannot read
// properties of undefined (reading 'mode')"), which names neither the function nor what it
// takes. Each now refuses with E_ARG naming the function, what it got, and a call that works.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createMatcher } from '../../src/match/matcher.ts';
import { McpTape } from '../../src/mcp/tape.ts';
import { tapeTransport } from '../../src/mcp/transport.ts';
import { createHandler } from '../../src/proxy/handler.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { DurableReplayStore } from '../../src/replay/durable.ts';
import { ReplayStore } from '../../src/replay/store.ts';
import { ReplayCache, withReplayCache } from '../../src/store/replay-cache.ts';
import { createTape, registerTapeType } from '../../src/store/tape-file.ts';
import { defaultTapePath } from '../../src/testing/names.ts';
import { pruneUnused } from '../../src/testing/run-report.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { formatTree } from '../../src/tree/format.ts';
import { loadTree } from '../../src/tree/load.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-options-object-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The error a call throws (synchronously or as a rejection), or undefined. */
async function thrown(f: () => unknown): Promise<unknown> {
  try {
    await f();
    return undefined;
  } catch (e) {
    return e;
  }
}

// Called as plain JavaScript would: the casts stand for a caller the compiler does not check.
const call = (f: unknown, ...args: unknown[]): unknown => (f as (...a: unknown[]) => unknown)(...args);
const make = (C: unknown, ...args: unknown[]): unknown => new (C as new (...a: unknown[]) => unknown)(...args);

describe('a missing or wrong options object is E_ARG naming the function', () => {
  const tape = join(dir, 'a.tape');
  const cases: [string, string, () => unknown][] = [
    ['createHandler()', 'createHandler', () => call(createHandler)],
    ['createHandler(null)', 'createHandler', () => call(createHandler, null)],
    ['startProxy()', 'startProxy', () => call(startProxy)],
    ["startProxy('app.tape')", 'startProxy', () => call(startProxy, 'app.tape')],
    ['createMatcher()', 'createMatcher', () => call(createMatcher)],
    ['createMatcher([])', 'createMatcher', () => call(createMatcher, [])],
    ['ReplayCache.open(tape, null)', 'ReplayCache.open', () => ReplayCache.open(tape, null as never)],
    ["ReplayCache.open(tape, 'record')", 'ReplayCache.open', () => ReplayCache.open(tape, 'record' as never)],
    ['withReplayCache(tape, 5)', 'withReplayCache', () => call(withReplayCache, tape, 5)],
    ['openTestTape()', 'openTestTape', () => call(openTestTape)],
    ['openTestTape(null)', 'openTestTape', () => call(openTestTape, null)],
    ['tapeTransport(inner)', 'tapeTransport', () => call(tapeTransport, undefined)],
    ['McpTape.open()', 'McpTape.open', () => call(McpTape.open.bind(McpTape))],
    ['new McpTape()', 'McpTape', () => make(McpTape)],
    ['defaultTapePath()', 'defaultTapePath', () => call(defaultTapePath)],
    ['pruneUnused()', 'pruneUnused', () => call(pruneUnused)],
    ['pruneUnused(summary, null)', 'pruneUnused', () => call(pruneUnused, { tapes: [] }, null)],
    ['registerTapeType(null)', 'registerTapeType', () => call(registerTapeType, null)],
    ['createTape()', 'createTape', () => call(createTape)],
    ['createTape(tape, null)', 'createTape', () => call(createTape, join(dir, 'c.tape'), null)],
    ['formatTree(null)', 'formatTree', () => call(formatTree, null)],
    ['formatTree(tree, null)', 'formatTree', () => call(formatTree, { nodes: new Map() }, null)],
    ['new ReplayStore(null)', 'ReplayStore', () => make(ReplayStore, null)],
    ['DurableReplayStore.open(tape, null)', 'DurableReplayStore.open', () => DurableReplayStore.open(join(dir, 'r.tape'), null as never)],
    ['loadTree(tape, null)', 'loadTree', () => loadTree(tape, null as never)],
  ];
  for (const [label, where, f] of cases) {
    it(label, async () => {
      const e = await thrown(f);
      expect(e, label).toBeInstanceOf(TapedeckError);
      expect((e as TapedeckError).code).toBe('E_ARG');
      expect((e as TapedeckError).message).toContain(where);
      expect((e as TapedeckError).message).toMatch(/takes /);
      expect((e as TapedeckError).hint).toBeTruthy();
    });
  }

  it('names what it got in place of the options', async () => {
    const e = (await thrown(() => call(createHandler, null))) as TapedeckError;
    expect(e.message.startsWith('createHandler takes an options object; got null.')).toBe(true);
    const a = (await thrown(() => call(startProxy, []))) as TapedeckError;
    expect(a.message.startsWith('startProxy takes an options object; got an array.')).toBe(true);
    const u = (await thrown(() => call(openTestTape))) as TapedeckError;
    expect(u.message.startsWith('openTestTape takes an options object; got undefined.')).toBe(true);
  });

  it('opens nothing before it refuses', async () => {
    const t = join(dir, 'never.tape');
    await thrown(() => ReplayCache.open(t, null as never));
    await thrown(() => withReplayCache(t, 5 as never, { mode: 'record' }));
    expect(existsSync(t)).toBe(false);
  });
});
