// Errors whose text said nothing useful about a wrong argument: "[object Object]" is not valid
// JSON (importTapeJSON given a parsed document), "Invalid Redis URL [object Object]" (RedisBackend
// given an options object), "Tape undefined: read failed ... Check permissions and free disk
// space" (readTape without a path), "Cannot read recordings directory undefined" (the same of
// loadRecordingsDir), and "peek is not possible any more" for a closed cache reached through
// the AI SDK middleware, whose peek the user never called. Each now names what it takes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { loadRecordingsDir } from '../../src/match/recordings.ts';
import { RedisBackend } from '../../src/store/backends/redis-backend.ts';
import { importTapeJSON } from '../../src/store/export.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-arg-texts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const caught = async (f: () => unknown): Promise<TapedeckError> => {
  try {
    await f();
  } catch (e) {
    return e as TapedeckError;
  }
  throw new Error('no error');
};

it('importTapeJSON given a parsed document', async () => {
  const e = await caught(() => importTapeJSON({ header: {}, records: [] } as never, join(dir, 'x.tape')));
  expect(e.code).toBe('E_ARG');
  expect(e.message).toContain('importTapeJSON takes the JSON text of an export (a string); got object');
  expect(e.message).not.toContain('[object Object]');
});

it('RedisBackend given an options object', async () => {
  const e = await caught(() => new RedisBackend({ url: 'redis://127.0.0.1:6379' } as never));
  expect(e.code).toBe('E_ARG');
  expect(e.message).toContain('RedisBackend takes a Redis URL string; got object');
});

it('readTape and loadRecordingsDir without a path', async () => {
  for (const e of [await caught(() => readTape(undefined as never)), await caught(() => loadRecordingsDir(undefined as never))]) {
    expect(e.code).toBe('E_ARG');
    expect(e.message).toMatch(/takes the path of .*; got undefined/);
    expect(`${e.message} ${e.hint}`).not.toMatch(/permissions|record first/);
  }
});

it('a closed cache says it is closed, not which of its methods was called', async () => {
  const c = await ReplayCache.open(join(dir, 'c.tape'), { mode: 'record' });
  await c.close();
  const e = await caught(() => c.peek({ model: 'm', messages: [{ role: 'user', content: 'q' }] }));
  expect(e.code).toBe('E_CLOSED');
  expect(e.message).toContain('is closed: it serves and records nothing any more');
  expect(e.message).not.toContain('peek');
});
