// A `timeout` fault holds the request until the client's own timeout fires. Through createFetch
// the held request kept nothing alive: a client timing out with AbortSignal.timeout (the AI
// SDK's usual way, an unref'd timer) never got its TimeoutError, since Node ended the process
// first (exit code 13, "unsettled top-level await"; under node:test, "cancelledByParent"). The
// held request now keeps the process up as a real open socket does. Run in a child process,
// where nothing else keeps Node alive, on the built package as a user's script imports it.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatText, recordTape, tempDir } from './record.ts';

const tmp = tempDir('timeout-holds');
const tape = join(tmp.dir, 'chat.tape');
const root = join(import.meta.dirname, '..', '..');
beforeAll(async () => {
  const up = await recordTape(tape, async (c) => {
    await chatText(c, 'hello');
  });
  await up.close();
});
afterAll(() => tmp.remove());

describe('a timeout fault through createFetch', () => {
  it("keeps the process alive until the client's AbortSignal.timeout fires", () => {
    const script = `
      import { createFetch } from 'llm-tapedeck/fetch';
      const f = createFetch({ tape: ${JSON.stringify(tape)}, mode: 'replay', chaos: { faults: { timeout: 1 }, seed: 3 }, summary: false, onWarning: () => {} });
      try {
        await f('http://127.0.0.1:9/v1/chat/completions', {
          method: 'POST', headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
          signal: AbortSignal.timeout(300),
        });
        console.log('answered');
      } catch (e) {
        console.log('caught ' + e.name);
      } finally {
        await f.close();
      }`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect({ status: r.status, out: r.stdout.trim() }, r.stderr).toEqual({ status: 0, out: 'caught TimeoutError' });
  });
});
