// A recording keyed under a newer request key spec than this tapedeck knows (a newer tapedeck
// bumped the spec and wrote it) is intact, but this tapedeck cannot compute its key: it cannot
// check it, and a request it keys under its own spec may not find it. `tapedeck verify` said
// "ok" and exited 0, so a pre-commit hook or CI on an older tapedeck passed tapes it could not
// check. It now counts them as problems (exit 1, as it does records of a newer record version),
// in one line naming the first and the upgrade; `prune` keeps them.
// The tapes are recorded by createFetch through the real OpenAI SDK and by ReplayCache; the
// CLI runs from dist: build first (flock /tmp/build.lock npm run build).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { KEY_SPEC_VERSION } from '../../src/providers/normalize.ts';
import { inRecordOrder } from '../../src/store/record-order.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-verify-newer-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

const NEXT = KEY_SPEC_VERSION + 1;
const recorded = join(dir, 'recorded.tape');
const cache = join(dir, 'cache.tape');

/** A copy of `from` at `to` whose records at `which` carry a key of the next key spec version. */
async function keyedNewer(from: string, to: string, which: (i: number) => boolean): Promise<void> {
  const { header, records } = await readTape(from);
  await createTape(to, { created: header.created, tapedeckVersion: header.tapedeckVersion, salt: header.salt ?? null });
  await appendRecords(to, records.map((r, i) => inRecordOrder(which(i) ? { ...(r.value as object), keyVersion: NEXT } : r.value)));
}

beforeAll(async () => {
  expect(existsSync(bin), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
  // The provider's server: a chat completion answering the prompt.
  const upstream = (async (input: string | URL | Request, init?: RequestInit) => {
    const asked = (JSON.parse(await new Request(input, init).text()) as { messages: { content: string }[] }).messages[0]!.content;
    const body = { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `answer to ${asked}` }, finish_reason: 'stop' }] };
    return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const f = createFetch({ tape: recorded, mode: 'record', fetch: upstream, onWarning: () => {}, summary: false });
  try {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'https://api.openai.com/v1', fetch: f, maxRetries: 0 });
    for (const q of ['first', 'second', 'third']) await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] });
  } finally {
    await f.close();
  }
  const c = await ReplayCache.open(cache, { mode: 'record' });
  await c.put({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cached' }] }, 'A');
  await c.close();
});

describe('tapedeck verify of recordings keyed under a newer key spec', () => {
  it('counts them as problems, names the first and the upgrade, and exits 1 (it said ok)', async () => {
    const tape = join(dir, 'two-newer.tape');
    await keyedNewer(recorded, tape, (i) => i > 0);
    const r = cli('verify', tape);
    expect(r.status).toBe(1);
    expect(r.stdout).not.toMatch(/^ok$/m);
    expect(r.stdout).toMatch(
      new RegExp(
        `\\nE_TAPE_VERSION at byte \\d+: 2 records keyed under a newer request key spec than this tapedeck knows \\(it knows versions 1 to ${KEY_SPEC_VERSION}\\), the first record 1 \\(POST /v1/chat/completions, key spec version ${NEXT}\\): ` +
          `this tapedeck cannot verify their keys, and a replay may not find them; upgrade tapedeck to check them \\(npm install -D llm-tapedeck@latest\\)\\n`,
      ),
    );
    expect(r.stdout).toContain('2 problem(s); the 3 records counted above are intact, 2 of them keyed under a newer request key spec than this tapedeck knows: upgrade tapedeck to verify their keys (npm install -D llm-tapedeck@latest); tapedeck prune keeps them.');
    // The tape it was made from is still ok.
    expect(cli('verify', recorded)).toMatchObject({ status: 0, stdout: expect.stringMatching(/\nok\n$/) });
  });

  it('one record, a ReplayCache record: named as such', async () => {
    const tape = join(dir, 'cache-newer.tape');
    await keyedNewer(cache, tape, () => true);
    const r = cli('verify', tape);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`: 1 record keyed under a newer request key spec than this tapedeck knows (it knows versions 1 to ${KEY_SPEC_VERSION}), record 0 (a ReplayCache record, key spec version ${NEXT}): this tapedeck cannot verify its key, and a replay may not find it;`);
    expect(r.stdout).toContain('1 problem(s); the 1 record counted above is intact, but it is keyed under a newer request key spec than this tapedeck knows: upgrade tapedeck to verify its key (npm install -D llm-tapedeck@latest); tapedeck prune keeps it.');
  });

  it('beside a record of a newer record version: both counted, the upgrade command said once', async () => {
    const tape = join(dir, 'both-newer.tape');
    const { header, records } = await readTape(recorded);
    await createTape(tape, { created: header.created, tapedeckVersion: header.tapedeckVersion, salt: header.salt ?? null });
    await appendRecords(tape, records.map((r, i) => inRecordOrder(i === 0 ? { ...(r.value as object), v: 9 } : i === 2 ? { ...(r.value as object), keyVersion: NEXT } : r.value)));
    const r = cli('verify', tape);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/E_TAPE_VERSION at byte \d+: record 0 is an HTTP exchange record of record version 9/);
    expect(r.stdout).toMatch(/E_TAPE_VERSION at byte \d+: 1 record keyed under a newer request key spec [^\n]+record 2 \(POST \/v1\/chat\/completions/);
    const summary = r.stdout.trimEnd().split('\n').at(-1)!;
    expect(summary).toMatch(/^2 problem\(s\); /);
    expect(summary.split('npm install -D llm-tapedeck@latest')).toHaveLength(2);
    // A current record of a key matched by its bytes is no problem at any version.
    expect(cli('verify', recorded).status).toBe(0);
  });
});
