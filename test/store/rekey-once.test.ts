// The line a tape keyed under request key spec version 1 gets when it is opened ("N recording(s)
// keyed under request key spec version 1 are keyed under version 2 ...") is one line per tape, as
// docs/hash-spec.md says. It came at every open of the same tape in a process (a createFetch per
// test file, a ReplayCache per suite), and under the code of whichever opened it. Now a process
// says it once per tape, whoever opens it and however its path is spelt.
import { copyFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('rekey-once');
const FIXTURE = join(import.meta.dirname, '../fixtures/v1-tape');
const LINE = 'keyed under request key spec version 1';

afterEach(() => vi.restoreAllMocks());

/** Every re-key line process.emitWarning was given, with its code. */
function emitted(): { spy: ReturnType<typeof vi.spyOn>; lines: () => { message: string; code: unknown }[] } {
  const spy = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
  const lines = () =>
    spy.mock.calls
      .map((c) => ({ message: String(c[0]), code: (c[1] as { code?: unknown } | undefined)?.code }))
      .filter((w) => w.message.includes(LINE));
  return { spy, lines };
}

describe('the re-key line', () => {
  it('createFetch opened three times on one tape (once by another spelling of its path) says it once', async () => {
    const tape = fresh();
    copyFileSync(join(FIXTURE, 'fetch.tape'), tape);
    const { lines } = emitted();
    for (const path of [tape, relative(process.cwd(), tape), tape]) {
      const f = createFetch({ tape: path, mode: 'replay', summary: false });
      await f.close();
    }
    expect(lines()).toHaveLength(1);
    expect(lines()[0]!.message).toContain(tape);
  });

  it('ReplayCache opened twice says it once', async () => {
    const tape = fresh();
    copyFileSync(join(FIXTURE, 'cache.tape'), tape);
    const { lines } = emitted();
    for (let i = 0; i < 2; i++) {
      const c = await ReplayCache.open(tape, { mode: 'replay' });
      await c.close();
    }
    expect(lines()).toHaveLength(1);
    expect(lines()[0]!.code).toBe('TAPEDECK_REKEY');
  });

  it('a tape ReplayCache and createFetch both open (cache and HTTP records of version 1) gets it once, not once under each code', async () => {
    const tape = fresh();
    const [cacheTape, fetchTape] = [await readTape(join(FIXTURE, 'cache.tape')), await readTape(join(FIXTURE, 'fetch.tape'))];
    await createTape(tape, { created: fetchTape.header.created, tapedeckVersion: fetchTape.header.tapedeckVersion, salt: fetchTape.header.salt ?? null });
    await appendRecords(tape, [...cacheTape.records, ...fetchTape.records].map((r) => r.value));
    const { lines } = emitted();
    const c = await ReplayCache.open(tape, { mode: 'replay' });
    await c.close();
    const f = createFetch({ tape, mode: 'replay', summary: false });
    await f.close();
    expect(lines().map((w) => w.code)).toEqual(['TAPEDECK_REKEY']);
  });

  it('another tape still gets its own line', async () => {
    const [a, b] = [fresh(), fresh()];
    copyFileSync(join(FIXTURE, 'fetch.tape'), a);
    copyFileSync(join(FIXTURE, 'fetch.tape'), b);
    const warnings: string[] = [];
    for (const tape of [a, b, a, b]) {
      const f = createFetch({ tape, mode: 'replay', summary: false, onWarning: (m) => warnings.push(m) });
      await f.close();
    }
    const said = warnings.filter((m) => m.includes(LINE));
    expect(said).toHaveLength(2);
    expect(said[0]).toContain(a);
    expect(said[1]).toContain(b);
  });
});
