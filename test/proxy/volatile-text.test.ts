// volatileText through createFetch and `tapedeck serve --volatile-text`: recorded with one date
// in the system prompt, replayed with another.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serveOptions } from '../../src/proxy/cli.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('volatile');
const { dir } = suite;

const ask = (f: typeof fetch, day: string, q = 'What is on?') =>
  f(`${suite.upstream.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: `Today is ${day}.` }, { role: 'user', content: q }] }),
  });

describe('volatileText in createFetch and the proxy', () => {
  it('a recording made on one day replays on the next; a miss shows what was replaced', async () => {
    const tape = join(dir, 'days.tape');
    const volatileText = ['\\d{4}-\\d{2}-\\d{2}'];
    const rec = createFetch({ tape, mode: 'record', volatileText, fetch: globalThis.fetch });
    const recorded = await (await ask(rec, '2026-11-25')).text();
    await rec.close();
    const play = createFetch({ tape, mode: 'replay', volatileText });
    const r = await ask(play, '2026-11-26');
    expect(r.headers.get('x-tapedeck-match')).toBe('exact');
    expect(await r.text()).toBe(recorded);
    const miss = await ask(play, '2026-11-27', 'Another question');
    expect(miss.status).toBe(400);
    expect(((await miss.json()) as { error: { message: string } }).error.message).toContain('volatile text replaced before keying: "2026-11-27" (message 0)');
    await play.close();
    const strict = createFetch({ tape, mode: 'replay' });
    expect((await ask(strict, '2026-11-26')).status).toBe(400);
    await strict.close();
  });

  it('tapedeck serve --volatile-text is repeatable', () => {
    expect(serveOptions(['--tape', 't.tape', '--volatile-text', '\\d+', '--volatile-text', 'x']).volatileText).toEqual(['\\d+', 'x']);
  });
});
