// The replay stores and the tree loader took misspelt option names without a word, as the other
// entry points no longer do: `new ReplayStore({ maxEntires: 5 })` kept 1024 entries,
// `resolveReplayConfig({ enable: false })` left replay on, and `DurableReplayStore.open(path,
// { redcat: { fields: ['ssn'] } })` wrote the very field it was asked to mask to the tape. Each now
// refuses an unknown name with E_ARG and the nearest known one, before anything is opened.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createHandler } from '../../src/proxy/handler.ts';
import { resolveReplayConfig } from '../../src/replay/config.ts';
import { DurableReplayStore } from '../../src/replay/durable.ts';
import { ReplayStore } from '../../src/replay/store.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { loadTree } from '../../src/tree/load.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-misspelt-replay-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function thrown(f: () => unknown): Promise<TapedeckError> {
  try {
    await f();
  } catch (e) {
    return e as TapedeckError;
  }
  throw new Error('expected an error, got none');
}

const SSN = '078-05-1120';
const put = { documentId: 'd', documentVersion: '1', model: 'm', systemPromptVersion: 'v1', selectedIds: ['a'], query: 'q', body: JSON.stringify({ ssn: SSN }), contentType: 'application/json' };

describe('misspelt option names', () => {
  it('new ReplayStore refuses maxEntires and names maxEntries', async () => {
    const e = await thrown(() => new ReplayStore({ maxEntires: 1 } as never));
    expect(e).toBeInstanceOf(TapedeckError);
    expect(e.code).toBe('E_ARG');
    expect(e.message.startsWith('Unknown ReplayStore option "maxEntires".')).toBe(true);
    expect(e.hint).toContain('Did you mean maxEntries?');
  });

  it('resolveReplayConfig refuses enable and names enabled (replay stayed on)', async () => {
    const e = await thrown(() => resolveReplayConfig({ enable: false } as never, {}));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('"enable"');
    expect(e.hint).toContain('Did you mean enabled?');
  });

  it('the right names still work', () => {
    let t = 5;
    const s = new ReplayStore({ enabled: true, maxEntries: 1, ttlMs: 0, now: () => t++, env: {} });
    expect(s.config.maxEntries).toBe(1);
    expect(resolveReplayConfig({ enabled: false }, {}).enabled).toBe(false);
  });

  it('DurableReplayStore.open refuses redcat before the tape is made, so the field never reaches disk', async () => {
    const p = join(dir, 'redcat.tape');
    const e = await thrown(() => DurableReplayStore.open(p, { redcat: { fields: ['ssn'] } } as never));
    expect(e.code).toBe('E_ARG');
    expect(e.message.startsWith('Unknown DurableReplayStore.open option "redcat".')).toBe(true);
    expect(e.hint).toContain('Did you mean redact?');
    expect(existsSync(p)).toBe(false);
    // Spelt right, the same rule masks the field.
    const s = await DurableReplayStore.open(p, { redact: { fields: ['ssn'] } });
    await s.put(put);
    await s.close();
    expect(readFileSync(p).includes(SSN)).toBe(false);
  });

  it('DurableReplayStore.open refuses a misspelt ReplayStore option under its own name', async () => {
    const e = await thrown(() => DurableReplayStore.open(join(dir, 'max.tape'), { maxEntires: 5 } as never));
    expect(e.message.startsWith('Unknown DurableReplayStore.open option "maxEntires".')).toBe(true);
    expect(e.hint).toContain('Did you mean maxEntries?');
  });

  it('loadTree refuses keepValue and names keepValues', async () => {
    const p = join(dir, 'tree.tape');
    const c = await ReplayCache.open(p, { mode: 'record' });
    await c.put({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, 'hello');
    await c.close();
    const e = await thrown(() => loadTree(p, { keepValue: false } as never));
    expect(e.code).toBe('E_ARG');
    expect(e.message.startsWith('Unknown loadTree option "keepValue".')).toBe(true);
    expect(e.hint).toContain('Did you mean keepValues?');
    expect((await loadTree(p, { keepValues: false })).records).toBe(1);
  });

  it("createHandler's replay takes a replay store, not its settings", async () => {
    const e = await thrown(() => createHandler({ tape: join(dir, 'h.tape'), mode: 'replay', replay: { enable: false } as never }));
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain('replay');
    expect(e.hint).toContain('new ReplayStore');
  });
});
