// A replay whose tape path is mistyped (`tapes/agent.tape` for `tapes/agents.tape`, `tape/` for
// `tapes/`): every request missed with "no tape at <path>; re-record", and following that advice
// records a second tape beside the one meant. The warning at open and each miss now name the
// existing tape one typo away, first (a miss's headline is clipped, a long path would push it
// off); a path with no such neighbour is told as before.
import OpenAI from 'openai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { nearbyTape } from '../../src/store/nearby-tape.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-typo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function missOf(tape: string): Promise<{ message: string; warnings: string }> {
  const warnings: string[] = [];
  const fetch = createFetch({ tape, mode: 'replay', summary: false, onWarning: (m) => warnings.push(m) });
  try {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 });
    const err = (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e)) as { status?: number; message: string };
    expect(err.status).toBe(400);
    return { message: err.message, warnings: warnings.join('\n') };
  } finally {
    await fetch.close();
  }
}

describe('a mistyped tape path in replay', () => {
  const tapes = join(dir, 'tapes');
  mkdirSync(tapes);
  const real = join(tapes, 'agents.tape');
  writeFileSync(real, ''); // only its name is looked at

  it('names the tape one typo away in the file name', async () => {
    const { message, warnings } = await missOf(join(tapes, 'agent.tape'));
    expect(message).toMatch(/^400 tapedeck miss: did you mean tapes\/agents\.tape\? no tape at /);
    expect(warnings).toContain(`did you mean tapes/agents.tape? no tape at ${join(tapes, 'agent.tape')}; every request will be a miss.`);
  });

  it('names the tape under the directory one typo away', async () => {
    const { message } = await missOf(join(dir, 'tape', 'agents.tape'));
    expect(message).toMatch(/^400 tapedeck miss: did you mean tapes\/agents\.tape\? no tape at /);
  });

  // Failed before: two edits on the whole file name reached unrelated short names
  // (`cut.tape` suggested `cc.tape`, or `dup.tape`).
  it('suggests no unrelated short name: one edit for names under five letters, counted without .tape', () => {
    const short = join(dir, 'short');
    mkdirSync(short);
    for (const n of ['cc.tape', 'dup.tape', 'chat.tape']) writeFileSync(join(short, n), '');
    expect(nearbyTape(join(short, 'cut.tape'))).toBeUndefined();
    expect(nearbyTape(join(short, 'cht.tape'))).toBe(join(short, 'chat.tape'));
    expect(nearbyTape(join(short, 'dupe.tape'))).toBe(join(short, 'dup.tape'));
  });

  it('says only "no tape at" when nothing near exists', async () => {
    const { message } = await missOf(join(tapes, 'billing-flow.tape'));
    expect(message).toContain(`no tape at ${join(tapes, 'billing-flow.tape')}`);
    expect(message).not.toContain('did you mean');
    expect(nearbyTape(real)).toBeUndefined();
  });
});
