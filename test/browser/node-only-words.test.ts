// Words and checks only Node's entry points need stay out of the page's bundle (package.json
// "browser" swaps in the stand-ins: deck-options, refused, prune-guard, miss-fixes), and Node
// keeps them whole. A page still gets a TapedeckError with the same code where it can reach one.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { refuseChaos } from '../../src/chaos/refused.ts';
import { TapedeckError } from '../../src/errors.ts';
import { Deck } from '../../src/proxy/deck.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const root = join(import.meta.dirname, '../..');
const bundle = () => build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });

/** The error `f` throws (or 'accepted'). */
function thrown(f: () => unknown): TapedeckError | 'accepted' {
  try {
    f();
  } catch (e) {
    return e as TapedeckError;
  }
  return 'accepted';
}

// The phrases of each moved piece, as Node says them.
const NODE_WORDS = [
  "Use 'fail' (the default: 503 E_RECORD_FAILED",
  "Use 'bytes' (the default) or 'route'.",
  'tapedeck serve --tape FILE',
  'with --chaos-live (option chaos: { live: true }',
  'ReplayCache keys whole messages',
  'unused recording(s) from',
  'could not prune unused realtime sessions',
  'asked for again without getting a new answer recorded',
];

describe("the page's bundle leaves out what only Node's entry points say", () => {
  it('takes the stand-ins, and none of their words is in it', async () => {
    const out = await bundle();
    const inputs = Object.keys(out.metafile.inputs);
    for (const m of ['proxy/deck-options', 'chaos/refused', 'proxy/prune-guard', 'match/miss-fixes']) {
      expect(inputs).toContain(`dist/${m}.browser.js`);
      expect(inputs).not.toContain(`dist/${m}.js`);
    }
    const text = out.outputFiles[0]!.text;
    for (const w of NODE_WORDS) expect(text.includes(w), w).toBe(false);
  });

  it('Node keeps every one of them', async () => {
    const hint = (o: object) => {
      const e = thrown(() => Deck.check(o));
      return e === 'accepted' ? e : { code: e.code, message: e.message, hint: e.details.hint };
    };
    expect(hint({ tape: 'a.tape', mode: 'replay', onRecordFailure: 'retry' })).toEqual({ code: 'E_ARG', message: expect.stringMatching(/^Invalid onRecordFailure "retry"\./), hint: expect.stringContaining(NODE_WORDS[0]!) });
    expect(hint({ tape: 'a.tape', mode: 'replay', bodyMatch: 'text' })).toEqual({ code: 'E_ARG', message: expect.stringMatching(/^Invalid bodyMatch "text"\./), hint: NODE_WORDS[1] });
    expect(hint({ mode: 'replay' })).toEqual({ code: 'E_ARG', message: expect.stringMatching(/^Mode replay needs a tape path or a store\./), hint: expect.stringContaining(NODE_WORDS[2]!) });
    // A mistyped Redis URL is still refused where the fetch is made.
    expect(thrown(() => createFetch({ store: 'redis://host:notaport/0', mode: 'replay' }))).toMatchObject({ code: 'E_ARG', message: expect.stringContaining('Invalid Redis URL') });
    expect(hint({ tape: 'a.tape', mode: 'record', bodyMatch: 'route', onRecordFailure: 'serve' })).toBe('accepted');
    const refused = thrown(() => refuseChaos('record', false, '--chaos'));
    expect(refused).toMatchObject({ code: 'E_CHAOS_MODE', message: expect.stringContaining('is refused in record mode'), details: { mode: 'record', hint: expect.stringContaining(NODE_WORDS[3]!) } });
    expect(thrown(() => refuseChaos('replay', false, '--chaos'))).toBe('accepted');
  });

  it("Node's ReplayCache miss on a volatile message member says to leave it out", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-node-words-'));
    try {
      const file = join(dir, 'cache.tape');
      const rec = await ReplayCache.open(file, { mode: 'record' });
      // A member the request key keeps, whose name says it changes on every call.
      const ask = (nonce: string) => ({ messages: [{ role: 'user', content: 'Hi', nonce }] });
      await rec.put(ask('n-a1b2c3'), { text: 'Hello' });
      await rec.close();
      const replay = await ReplayCache.open(file, { mode: 'replay' });
      const miss = await replay.get(ask('n-z9y8x7')).then(
        () => undefined,
        (e: unknown) => e as TapedeckError,
      );
      await replay.close();
      expect(miss).toBeInstanceOf(TapedeckError);
      expect(miss!.code).toBe('E_MISS');
      expect((miss!.details.fixes as string[]).some((f) => f.includes(NODE_WORDS[4]!))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("Node's pruneUnused says what it removed", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-node-words-'));
    try {
      const tape = join(dir, 'app.tape');
      const live = (async () => Response.json({ id: 'c1', choices: [] })) as typeof fetch;
      const call = (f: typeof fetch, content: string) => f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content }] }) });
      const first = createFetch({ tape, mode: 'record', summary: false, fetch: live });
      await call(first, 'one');
      await call(first, 'two');
      await first.close();
      const warnings: string[] = [];
      const second = createFetch({ tape, mode: 'record', pruneUnused: true, summary: false, fetch: live, onWarning: (m) => warnings.push(m) });
      await call(second, 'one');
      await second.close();
      expect(warnings.filter((w) => w.includes(NODE_WORDS[5]!))).toHaveLength(1);
      expect(readFileSync(tape).length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a page still gets the same codes', () => {
  it('a chaos header in passthrough mode is refused with E_CHAOS_MODE, as in Node', async () => {
    const out = await bundle();
    type Entry = { createReplayFetch: (o: object) => ((u: string, i?: RequestInit) => Promise<Response>) & { close(): Promise<void> } };
    const page = (await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0]!.text).toString('base64')}`)) as Entry;
    const node = (await import('../../src/browser/index.ts')) as unknown as Entry;
    const tape = { name: 'mem', format: 'json' as const, header: { formatVersion: 1, created: 'x', tapedeckVersion: 'y' }, records: [], warnings: [] };
    let upstream = 0;
    const live = (async () => (upstream++, Response.json({ ok: true }))) as typeof fetch;
    for (const entry of [page, node]) {
      const f = entry.createReplayFetch({ tape, mode: 'passthrough', fetch: live });
      const res = await f('https://api.openai.com/v1/models', { headers: { 'x-tapedeck-chaos': '429' } });
      const body = (await res.json()) as { error: { code?: string; type?: string; message: string } };
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(body)).toContain('E_CHAOS_MODE');
      await f.close();
    }
    expect(upstream).toBe(0);
  });
});
