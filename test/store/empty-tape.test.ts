// A run that records nothing leaves no tape behind: a tape a writer made at open and never
// appended to is removed as it closes, unless another writer has it open or it holds a record.
// A writer that loaded the tape before it was removed still records into it.
import { existsSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { TapeBackend } from '../../src/store/backends/tape.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { readTape, scanTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-empty-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chat = (text: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }) });
const answer = (async () => new Response('{"id":"c1","choices":[]}', { headers: { 'content-type': 'application/json' } })) as typeof fetch;
const down = (async () => {
  throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
}) as typeof fetch;

describe('a tape made for a run that recorded nothing', () => {
  it('createFetch in update mode with the API down: no file after close', async () => {
    const tape = join(dir, 'down.tape');
    const f = createFetch({ tape, mode: 'update', fetch: down, summary: false });
    const res = await f('https://api.openai.com/v1/chat/completions', chat('Hi'));
    expect(res.status).toBe(400);
    await f.close();
    expect(existsSync(tape)).toBe(false);
    expect(existsSync(`${tape}.writers`)).toBe(false);
  });

  it('a ReplayCache in record mode that was given nothing: no file after close', async () => {
    const tape = join(dir, 'cache.tape');
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    await cache.close();
    expect(existsSync(tape)).toBe(false);
  });

  it('a run that recorded keeps its tape; one that found the tape there keeps it, even empty', async () => {
    const tape = join(dir, 'kept.tape');
    const f = createFetch({ tape, mode: 'record', fetch: answer, summary: false });
    await (await f('https://api.openai.com/v1/chat/completions', chat('Hi'))).text();
    await f.close();
    expect((await readTape(tape)).records).toHaveLength(1);

    const empty = join(dir, 'there.tape');
    const a = new TapeBackend(empty);
    await a.load({ create: true });
    await a.append([], { durable: true });
    await a.close();
    expect(existsSync(empty)).toBe(true);
    const b = createFetch({ tape: empty, mode: 'update', fetch: down, summary: false });
    await (await b('https://api.openai.com/v1/chat/completions', chat('Hi'))).text();
    await b.close();
    expect(existsSync(empty)).toBe(true);
  });

  it('is kept while another writer has it open, and that writer records into it', async () => {
    const tape = join(dir, 'shared.tape');
    const kind = { mode: 'update' as const };
    const first = createFetch({ tape, ...kind, fetch: down, summary: false });
    await first.ready;
    const second = createFetch({ tape, ...kind, fetch: answer, summary: false });
    await second.ready;
    await first.close();
    expect(existsSync(tape)).toBe(true);
    await (await second('https://api.openai.com/v1/chat/completions', chat('Hi'))).text();
    await second.close();
    expect((await readTape(tape)).records).toHaveLength(1);
  });

  it('a writer that loaded it before it was removed makes it again, with the same salt, and appends', async () => {
    const tape = join(dir, 'again.tape');
    const b = new TapeBackend(tape);
    await b.load({ create: true });
    const salt = (await scanTape(tape)).header.salt;
    expect(typeof salt).toBe('string');
    unlinkSync(tape);
    await b.append([{ kind: 'note', key: 'k' }], { durable: true });
    await b.close();
    const again = await scanTape(tape);
    expect(again.header.salt).toBe(salt);
    expect(again.frames).toHaveLength(1);
  });
});

