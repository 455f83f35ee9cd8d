// ReplayCache (a DSPy-style cache interface on a tape): mode resolution, the four modes, k-th recordings,
// ignoredArgs, typed values, durability, `await using` and AsyncLocalStorage scopes.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { rejectionOf } from '../helpers.ts';
import { tapeSuite } from './setup.ts';
import { requestKeys } from '../../src/match/matcher.ts';
import { rawPathCounts } from '../../src/match/raw-keys.ts';
import { resolveMode, TAPE_MODES } from '../../src/store/mode.ts';
import { activeReplayCache, ReplayCache, withReplayCache, type ReplayRecord } from '../../src/store/replay-cache.ts';
import { appendRecords, createTape, readTape, scanTape } from '../../src/store/tape-file.ts';
import { CountingTape } from './counting-tape.ts';

const { root, fresh } = tapeSuite('replay');

const req = (text: string, extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [{ role: 'user', content: text }],
  ...extra,
});

const rejection = rejectionOf;

function thrown(f: () => unknown): TapedeckError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(TapedeckError);
    return e as TapedeckError;
  }
  throw new Error('expected a TapedeckError');
}

const values = async (file: string) => (await readTape(file)).records.map((r) => (r.value as ReplayRecord).value);

describe('resolveMode', () => {
  it('takes the option, then TAPEDECK_MODE, then CACHE_MODE, then replay', () => {
    expect(TAPE_MODES).toEqual(['replay', 'record', 'update', 'passthrough', 'once']);
    const env = { TAPEDECK_MODE: 'update', CACHE_MODE: 'record' };
    expect(resolveMode('passthrough', env)).toBe('passthrough');
    expect(resolveMode(undefined, env)).toBe('update');
    expect(resolveMode(undefined, { CACHE_MODE: 'record' })).toBe('record');
    expect(resolveMode(undefined, {})).toBe('replay');
    // Blank counts as unset; case and whitespace do not matter.
    expect(resolveMode(undefined, { TAPEDECK_MODE: '', CACHE_MODE: ' Record ' })).toBe('record');
  });

  it('rejects an invalid value with E_MODE, listing the valid ones and naming the source', () => {
    const fromEnv = thrown(() => resolveMode(undefined, { TAPEDECK_MODE: 'recrod' }));
    expect(fromEnv.code).toBe('E_MODE');
    expect(fromEnv.message).toContain('TAPEDECK_MODE');
    expect(fromEnv.message).toContain('"recrod"');
    for (const m of TAPE_MODES) expect(fromEnv.message).toContain(m);
    expect(fromEnv.details.valid).toEqual([...TAPE_MODES]);

    const fromSeedVar = thrown(() => resolveMode(undefined, { CACHE_MODE: 'write' }));
    expect(fromSeedVar.message).toContain('CACHE_MODE');
    expect(fromSeedVar.details.source).toBe('CACHE_MODE');

    const fromOption = thrown(() => resolveMode('live', { TAPEDECK_MODE: 'record' }));
    expect(fromOption.message).toContain('`mode` option');
    expect(fromOption.details.source).toBe('option');
  });

  it('is what ReplayCache.open uses', async () => {
    vi.stubEnv('TAPEDECK_MODE', 'passthrough');
    const cache = await ReplayCache.open(fresh());
    expect(cache.mode).toBe('passthrough');
    expect(cache.modeSource).toBe('TAPEDECK_MODE');
    vi.stubEnv('TAPEDECK_MODE', 'bogus');
    expect((await rejection(ReplayCache.open(fresh()))).code).toBe('E_MODE');
  });
});

describe('replay', () => {
  // Failed before: "there are no recordings", while verify counts the tape's records.
  it('on a tape of HTTP recordings (createFetch, the proxy), a miss says the tape has none of its kind', async () => {
    const file = fresh();
    const { addRecordings } = await import('../../src/proxy/hand-written.ts');
    const completion = { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] };
    await addRecordings({ tape: file }, [{ request: { url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] } }, response: { body: completion } }]);
    const cache = await ReplayCache.open(file);
    const e = await rejection(cache.get(req('hello')));
    expect(e.code).toBe('E_MISS');
    expect(e.message).toMatch(/^tapedeck miss: the tape has no ReplayCache recordings \(its 1 record is of another kind: createFetch or tapedeck serve HTTP recordings/);
    await cache.close();
  });

  it('never writes and misses with E_MISS naming the path, key, model and command', async () => {
    const file = fresh();
    const cache = await ReplayCache.open(file);
    expect(cache.mode).toBe('replay');
    const e = await rejection(cache.get(req('hello')));
    expect(e.code).toBe('E_MISS');
    const key = cache.cacheKey(req('hello'));
    // One short line: what is missing and how to record; the key and model are in the details.
    expect(e.message).toBe(`tapedeck miss: no tape at ${file}; re-record: TAPEDECK_MODE=record (or ReplayCache mode 'record')`);
    expect(e.hint).toBe("re-record: TAPEDECK_MODE=record (or ReplayCache mode 'record')");
    expect(e.details).toMatchObject({ file, key, model: 'gpt-4o-mini', kind: 'no-recordings' });
    await cache.put(req('hello'), { answer: 'ignored' }); // a no-op in replay
    await cache.close();
    expect(existsSync(file)).toBe(false);
  });

  it('a miss on a recorded tape shows the closest recordings and where they diverge', async () => {
    const file = fresh();
    const conv = (last: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: last }] });
    const rec = await ReplayCache.open(file, { mode: 'record' });
    await rec.put(conv('What is the capital of France?'), 'Paris');
    await rec.put(conv('Name a prime number.'), '7');
    await rec.close();
    const cache = await ReplayCache.open(file);
    expect(await cache.get(conv('Name a prime number.'))).toBe('7');
    const e = await rejection(cache.get(conv('What is the capital of Italy?')));
    expect(e.message.split('\n')).toEqual([
      "tapedeck miss: message 1 (user) text differs from the closest recording; re-record: TAPEDECK_MODE=record (or ReplayCache mode 'record')",
      '  request:   "What is the capital of Italy?"',
      '  recording: "What is the capital of France?"',
    ]);
    const report = e.details.report as string;
    expect(report).toContain('Closest recordings:');
    expect(report).toMatch(/#0: shares 1 leading message, diverges at message 1/);
    expect(report).toContain('#1 [already used]');
    expect((e.details.closest as { index: number }[])[0]!.index).toBe(0);
  });

  it('a miss names the nearest prompt among hundreds recorded with the same system prompt', async () => {
    const file = fresh();
    const conv = (last: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: last }] });
    const rec = await ReplayCache.open(file, { mode: 'record' });
    for (let i = 0; i < 400; i++) await rec.put(conv(`Question ${i}: is ${i} a prime number?`), i % 2 ? 'no' : 'yes');
    await rec.close();
    const cache = await ReplayCache.open(file);
    const e = await rejection(cache.get(conv('Question 377: is 377 a prime number? Explain.')));
    expect((e.details.closest as { index: number }[])[0]!.index).toBe(377);
    expect(e.message.split('\n')[2]).toBe('  recording: "Question 377: is 377 a prime number?"');
  });

  it('misses after the first reuse what it made of every recording: each keyed once, on the raw-keys path, the same diagnosis', async () => {
    const file = fresh();
    const conv = (last: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: last }], temperature: 0 });
    const rec = await ReplayCache.open(file, { mode: 'record' });
    for (let i = 0; i < 300; i++) await rec.put(conv(`Question ${i}: is ${i} é a prime number?`), i % 2 ? 'no' : 'yes');
    await rec.close();
    const cache = await ReplayCache.open(file);
    const keyed = () => rawPathCounts.answered;
    const at0 = keyed();
    const first = await rejection(cache.get(conv('Question 123: is 123 é a prime number? Explain.')));
    expect(keyed() - at0).toBe(300);
    expect((first.details.closest as { index: number }[])[0]!.index).toBe(123);
    const at1 = keyed();
    const second = await rejection(cache.get(conv('Question 250: is 250 é a prime number? Explain.')));
    expect((second.details.closest as { index: number }[])[0]!.index).toBe(250);
    // A recording served in between is shown as used by the next miss.
    expect(await cache.get(conv('Question 123: is 123 é a prime number?'))).toBe('no');
    const third = await rejection(cache.get(conv('Question 123: is 123 é a prime number? Explain.')));
    expect(keyed() - at1).toBe(0);
    expect(third.details.closest).toEqual((first.details.closest as { used: boolean }[]).map((c, k) => (k === 0 ? { ...c, used: true } : c)));
    expect(third.message).toBe(first.message);
  });

  it("the first miss keys each recording from its request's JSON text on the tape (only a request stored as a string is decoded), with the diagnosis the decoded records give", async () => {
    const file = fresh();
    const conv = (last: string, i: number) => ({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief. ✓' }, { role: 'user', content: last }], temperature: i / 10, metadata: { i, nested: [i, { k: null, s: 'tab\there "q"' }] } });
    const rec = await ReplayCache.open(file, { mode: 'record' });
    for (let i = 0; i < 40; i++) await rec.put(conv(`Question ${i}: is ${i} é a prime number?`, i), { answer: i % 2 ? 'no' : 'yes', i });
    // A request given as JSON text is stored as that string: keyed as the decoded value is (its
    // text on the tape is a JSON string, not the request), so it is decoded.
    await rec.put(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'given as text' }] }), 'text');
    await rec.close();
    const run = async (withJson: boolean) => {
      const store = new CountingTape(file, withJson);
      const cache = await ReplayCache.open(store);
      try {
        const miss = await rejection(cache.get(conv('Question 17: is 17 é a prime number? Explain.', 17)));
        const served = await cache.get(conv('Question 3: is 3 é a prime number?', 3));
        return { message: miss.message, closest: miss.details.closest, report: miss.details.report, decoded: store.decoded, texts: store.texts, served };
      } finally {
        await cache.close();
      }
    };
    const [text, decoded] = [await run(true), await run(false)];
    // Reading JSON text: only the request stored as a string and the one served are decoded.
    expect(text.texts).toBe(41);
    expect(text.decoded).toBe(2);
    expect(decoded.decoded).toBe(41);
    expect((text.closest as { index: number }[])[0]!.index).toBe(17);
    expect(text.message).toBe(decoded.message);
    expect(text.closest).toEqual(decoded.closest);
    expect(text.report).toBe(decoded.report);
    expect(text.served).toEqual({ answer: 'no', i: 3 });
    expect(decoded.served).toEqual(text.served);
    // The string request is a recording the diagnosis knows: a miss close to it names it.
    const cache = await ReplayCache.open(new CountingTape(file, true));
    try {
      const near = await rejection(cache.get(JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'given as text!' }] })));
      expect((near.details.closest as { index: number }[])[0]!.index).toBe(40);
    } finally {
      await cache.close();
    }
  });

  it('serves recordings and leaves an existing tape byte for byte untouched', async () => {
    const file = fresh();
    const rec = await ReplayCache.open(file, { mode: 'record' });
    await rec.put(req('q1'), { answer: 'a1' });
    await rec.close();
    const before = readFileSync(file);

    const cache = await ReplayCache.open(file, { mode: 'replay' });
    expect(await cache.get(req('q1'))).toEqual({ answer: 'a1' });
    await cache.put(req('q2'), { answer: 'a2' });
    const e = await rejection(cache.get(req('q2')));
    expect(e.code).toBe('E_MISS');
    // Opened with an explicit mode, the environment cannot switch it: the hint says so.
    expect(e.message).toContain("{ mode: 'record' }");
    await cache.close();
    expect(readFileSync(file).equals(before)).toBe(true);
  });
});

describe('damage', () => {
  it('the last of three recordings damaged: the 3rd get is E_TAPE_DAMAGED, not a miss; a key recorded after the damage is not its', async () => {
    const file = fresh();
    const w = await ReplayCache.open(file, { mode: 'record' });
    for (const text of ['first', 'second', 'third']) await w.put(req('same'), { text });
    await w.close();
    // A byte flipped in the third record's key (its checksum then fails: it is lost).
    const scan = await scanTape(file);
    const bytes = readFileSync(file);
    bytes[scan.frames[2]!.offset + 30]! ^= 0x5a;
    writeFileSync(file, bytes);
    const after = await ReplayCache.open(file, { mode: 'update' });
    await after.put(req('later'), { text: 'later' });
    await after.close();
    const r = await ReplayCache.open(file, { mode: 'replay' });
    try {
      expect(await r.get(req('same'))).toEqual({ text: 'first' });
      expect(await r.get(req('same'))).toEqual({ text: 'second' });
      const err = (await rejection(r.get(req('same')))) as TapedeckError;
      expect(err).toMatchObject({ code: 'E_TAPE_DAMAGED', details: { repeat: 2 } });
      expect(err.message).toContain('3rd recording');
      expect(await r.get(req('later'))).toEqual({ text: 'later' });
      await expect(r.get(req('later'))).rejects.toMatchObject({ code: 'E_MISS' });
    } finally {
      await r.close();
    }
  });
});

describe('miss messages name only what ReplayCache has', () => {
  const recorded = async (requests: unknown[]) => {
    const file = fresh();
    const rec = await ReplayCache.open(file, { mode: 'record' });
    for (const r of requests) await rec.put(r, 'answer');
    await rec.close();
    return file;
  };

  it('a changed prompt: no matching mode (ReplayCache has none) and no looser option; its own way to record', async () => {
    vi.stubEnv('TAPEDECK_MODE', '');
    const file = await recorded([req('What is the capital of France?')]);
    const cache = await ReplayCache.open(file);
    const e = await rejection(cache.get(req('What is the capital of Germany?')));
    for (const text of [e.message, ...(e.details.fixes as string[])]) {
      expect(text).not.toMatch(/'(signature|hybrid|sequential)'|would use it|match:|mode 'hybrid'/);
      expect(text).not.toMatch(/volatileKeys|ignoreArgs|ignoredArgs|tapedeck serve|createFetch/);
    }
    expect(e.message.split('\n')[0]).toBe("tapedeck miss: message 0 (user) text differs from the closest recording; re-record: TAPEDECK_MODE=record (or ReplayCache mode 'record')");
    expect(e.details).toMatchObject({ kind: 'message', difference: 'message 0 (user) text differs from the closest recording' });
    await cache.close();
    vi.unstubAllEnvs();
  });

  it('get() then getRecord() of one request is two calls: the miss says so and how to read one call', async () => {
    const file = await recorded([req('q1')]);
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    expect(await cache.get(req('q1'))).toBe('answer');
    const e = await rejection(cache.getRecord(req('q1')));
    expect(e.code).toBe('E_MISS');
    expect(e.message).toContain('if get() and getRecord() read one call, use getRecord() alone (each is a call)');
    expect((e.details.fixes as string[])[0]).toContain('call getRecord() alone (its value is what get() returns)');
    await cache.close();
    // The documented way: one getRecord(), its value and its record.
    const again = await ReplayCache.open(file, { mode: 'replay' });
    const rec = await again.getRecord(req('q1'));
    expect(rec?.value).toBe('answer');
    expect(rec?.recordedAt).toMatch(/^\d{4}-/);
    await again.close();
  });

  it('opened with an explicit mode: the fix is its mode option, which the environment cannot override', async () => {
    const file = await recorded([req('q1')]);
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    const e = await rejection(cache.get(req('q2')));
    expect(e.message.split('\n')[0]).toBe("tapedeck miss: message 0 (user) text differs from the closest recording; re-record: ReplayCache.open(path, { mode: 'record' })");
    await cache.close();
  });

  it('a volatile-named argument is ignored with ignoredArgs (its option), not ignoreArgs or volatileKeys', async () => {
    const file = await recorded([req('hello', { trace_id: 'run-1' })]);
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    const e = await rejection(cache.get(req('hello', { trace_id: 'run-2' })));
    expect(e.message).toContain('ignoredArgs: ["trace_id"]');
    expect(e.message).not.toMatch(/ignoreArgs|volatileKeys/);
    await cache.close();
    // The option it names does replay the recording.
    const fixed = await ReplayCache.open(file, { mode: 'replay', ignoredArgs: ['trace_id'] });
    expect(await fixed.get(req('hello', { trace_id: 'run-3' }))).toBe('answer');
    await fixed.close();
  });

  it('a volatile message member: ReplayCache has no volatileKeys, so it is not offered', async () => {
    const stamped = (at: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello', sent_at: at }] });
    const file = await recorded([stamped('2026-11-23T10:00:00Z')]);
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    const e = await rejection(cache.get(stamped('2026-11-24T09:30:00Z')));
    expect([e.message, ...((e.details.fixes as string[]) ?? [])].join('\n')).not.toContain('volatileKeys');
    expect(e.message.split('\n')[0]).toMatch(/^tapedeck miss: message 0 \(user\) member "sent_at" differs from the closest recording; re-record: /);
    expect((e.details.fixes as string[])[0]).toContain('leave it out of the requests you pass to get() and put()');
    await cache.close();
  });

  it('every miss says it is a tapedeck miss, gives its fix as its hint once, and names no placeholder to fill in', async () => {
    vi.stubEnv('TAPEDECK_MODE', '');
    const ENV_FIX = "re-record: TAPEDECK_MODE=record (or ReplayCache mode 'record')";
    // An argument whose name and values make the headline too long for one line.
    const long = (v: string) => ({ ...req('hi'), response_guidance_for_the_assistant_in_this_conversation: v.repeat(50) });
    const file = await recorded([req('What is the capital of France?'), long('a')]);
    const misses: { name: string; e: TapedeckError; fix: string }[] = [];
    const miss = async (name: string, fix: string, opts: Parameters<typeof ReplayCache.open>[1], ask: (c: ReplayCache) => Promise<unknown>, at = file) => {
      const cache = await ReplayCache.open(at, opts);
      misses.push({ name, e: await rejection(ask(cache)), fix });
      await cache.close();
    };
    await miss('no tape', ENV_FIX, {}, (c) => c.get(req('hello')), fresh());
    await miss('a changed prompt', ENV_FIX, {}, (c) => c.get(req('What is the capital of Germany?')));
    await miss('the mode given as an option', "re-record: ReplayCache.open(path, { mode: 'record' })", { mode: 'replay' }, (c) => c.get(req('q2')));
    await miss('a record command given', 're-record: TAPEDECK_MODE=record npm test', { mode: 'replay', recordCommand: 'TAPEDECK_MODE=record npm test' }, (c) => c.get(req('q2')));
    // (this fix is long: on a line of its own)
    await miss('asked once more than recorded', `R${ENV_FIX.slice(1)}; or, if get() and getRecord() read one call, use getRecord() alone (each is a call)`, {}, async (c) => {
      await c.get(req('What is the capital of France?'));
      return c.getRecord(req('What is the capital of France?'));
    });
    await miss('a recording the beforeReplay hook skipped', ENV_FIX, { beforeReplay: () => null }, (c) => c.get(req('What is the capital of France?')));
    // Too long for one line: the fix goes on the next, starting with a capital.
    await miss('a difference too long for one line', `R${ENV_FIX.slice(1)}`, {}, (c) => c.get(long('b')));
    for (const { name, e, fix } of misses) {
      expect(e.code, name).toBe('E_MISS');
      expect(e.message.startsWith('tapedeck miss: '), `${name}: ${e.message}`).toBe(true);
      expect(e.hint, name).toBe(fix);
      // Said where the headline says it, not again at the end.
      expect(e.message.split(fix).length - 1, `${name}: ${e.message}`).toBe(1);
      expect(e.message, name).not.toMatch(/<[a-z ]+>/);
      expect(JSON.stringify(e.details), name).not.toMatch(/<your|test command>/);
    }
    expect(misses.find((m) => m.name === 'a difference too long for one line')!.e.message.split('\n')[1]).toBe(`R${ENV_FIX.slice(1)}`);
    vi.unstubAllEnvs();
  });
});

describe('record', () => {
  it('stores every put, serves nothing, at close replaces what it re-recorded and keeps the rest', async () => {
    const file = fresh();
    const first = await ReplayCache.open(file, { mode: 'record' });
    for (const q of ['q1', 'q2', 'q3']) await first.put(req(q), { answer: `old ${q}` });
    await first.close();
    expect(await values(file)).toEqual([{ answer: 'old q1' }, { answer: 'old q2' }, { answer: 'old q3' }]);

    const second = await ReplayCache.open(file, { mode: 'record' });
    // Record calls the live API for everything: a recorded value is not served.
    expect(await second.get(req('q1'))).toBeUndefined();
    await second.put(req('q1'), { answer: 'new q1' });
    await second.put(req('q4'), { answer: 'new q4' });
    const closed = second.close();
    expect(second.close()).toBe(closed); // idempotent
    expect((await closed).replaced).toHaveLength(1);
    // q1's old recording is replaced; q2 and q3, not used in this run, stay.
    expect(await values(file)).toEqual([{ answer: 'old q2' }, { answer: 'old q3' }, { answer: 'new q1' }, { answer: 'new q4' }]);

    const replay = await ReplayCache.open(file, { mode: 'replay' });
    expect(await replay.get(req('q1'))).toEqual({ answer: 'new q1' });
    expect(await replay.get(req('q4'))).toEqual({ answer: 'new q4' });
    expect(await replay.get(req('q2'))).toEqual({ answer: 'old q2' });
    expect((await rejection(replay.get(req('q5')))).code).toBe('E_MISS');
  });

  it('re-recording unchanged interactions leaves the tape byte for byte as it was; a changed one is replaced', async () => {
    const file = fresh();
    const run = async (answers: Record<string, unknown>) => {
      const c = await ReplayCache.open(file, { mode: 'record' });
      for (const [q, a] of Object.entries(answers)) {
        expect(await c.get(req(q))).toBeUndefined();
        await c.put(req(q), a);
      }
      await c.close();
      return readFileSync(file);
    };
    const typed = { at: new Date(Date.UTC(2026, 0, 1)), tags: new Set(['a']), n: 1 };
    const first = await run({ q1: { answer: 1 }, q2: typed, q3: 'three' });
    await new Promise((r) => setTimeout(r, 5)); // a new recordedAt would differ
    const second = await run({ q1: { answer: 1 }, q2: { at: new Date(Date.UTC(2026, 0, 1)), tags: new Set(['a']), n: 1 }, q3: 'three' });
    expect(second.equals(first)).toBe(true);
    const third = await run({ q1: { answer: 1 }, q2: typed, q3: 'THREE' });
    expect(third.equals(first)).toBe(false);
    expect(await values(file)).toEqual([{ answer: 1 }, typed, 'THREE']);
    // The unchanged records kept their bytes: the file starts with the same prefix up to q3.
    const q3At = (await readTape(file)).records[2]!.offset;
    expect(third.subarray(0, q3At).equals(first.subarray(0, q3At))).toBe(true);
  });

  it('keeps the old recording of a request asked for but not re-recorded (the live call failed)', async () => {
    const file = fresh();
    const first = await ReplayCache.open(file, { mode: 'record' });
    await first.put(req('asked'), 'old asked');
    await first.put(req('unused'), 'old unused');
    await first.close();
    const second = await ReplayCache.open(file, { mode: 'record' });
    expect(await second.get(req('asked'))).toBeUndefined();
    await second.close();
    expect(await values(file)).toEqual(['old asked', 'old unused']);
  });

  it('keeps everything with keepAll, and creates the tape and its directory', async () => {
    const file = join(root, 'nested', 'dir', 'keep.tape');
    const a = await ReplayCache.open(file, { mode: 'record' });
    expect(existsSync(file)).toBe(true);
    await a.put(req('q1'), 1);
    await a.close();
    const b = await ReplayCache.open(file, { mode: 'record', keepAll: true });
    await b.put(req('q2'), 2);
    await b.close();
    expect(await values(file)).toEqual([1, 2]);
  });

  it('keeps records another writer appended while it was open', async () => {
    const file = fresh();
    const old = await ReplayCache.open(file, { mode: 'record' });
    await old.put(req('stale'), 'stale');
    await old.close();

    const a = await ReplayCache.open(file, { mode: 'record' });
    const b = await ReplayCache.open(file, { mode: 'update' });
    await a.put(req('from a'), 'a');
    await b.put(req('from b'), 'b');
    await b.close();
    await a.close();
    expect(await values(file)).toEqual(['stale', 'a', 'b']);
  });

  it('leaves records of other kinds alone', async () => {
    const file = fresh();
    await createTape(file);
    await appendRecords(file, [{ kind: 'proxy-exchange', body: 'x' }]);
    const a = await ReplayCache.open(file, { mode: 'record' });
    await a.put(req('q'), 'v');
    await a.close();
    expect((await readTape(file)).records.map((r) => r.value)).toEqual([{ kind: 'proxy-exchange', body: 'x' }, expect.objectContaining({ value: 'v' })]);
  });
});

describe('update', () => {
  it('serves what exists and records what is missing', async () => {
    const file = fresh();
    const rec = await ReplayCache.open(file, { mode: 'record' });
    await rec.put(req('known'), 'recorded');
    await rec.close();

    const cache = await ReplayCache.open(file, { mode: 'update' });
    expect(await cache.get(req('known'))).toBe('recorded');
    expect(await cache.get(req('new'))).toBeUndefined();
    await cache.put(req('new'), 'fresh');
    // The recorded call is consumed: the same request again is the next call, a miss.
    expect(await cache.get(req('new'))).toBeUndefined();
    await cache.close();
    expect(await values(file)).toEqual(['recorded', 'fresh']);

    const replay = await ReplayCache.open(file);
    expect(await replay.get(req('known'))).toBe('recorded');
    expect(await replay.get(req('new'))).toBe('fresh');
  });
});

describe('passthrough', () => {
  it('never reads or writes', async () => {
    const missing = fresh();
    const p = await ReplayCache.open(missing, { mode: 'passthrough' });
    expect(await p.get(req('q'))).toBeUndefined();
    await p.put(req('q'), 'v');
    await p.close();
    expect(existsSync(missing)).toBe(false);

    // An existing tape is not even read: a damaged header would fail any other mode.
    const file = fresh();
    const rec = await ReplayCache.open(file, { mode: 'record' });
    await rec.put(req('q'), 'v');
    await rec.close();
    const before = readFileSync(file);
    const q = await ReplayCache.open(file, { mode: 'passthrough' });
    expect(await q.get(req('q'))).toBeUndefined();
    await q.put(req('q2'), 'v2');
    await q.close();
    expect(readFileSync(file).equals(before)).toBe(true);
  });
});

describe('keys and values', () => {
  it('answers the k-th call of a request with its k-th recording', async () => {
    const file = fresh();
    const rec = await ReplayCache.open(file, { mode: 'record' });
    await rec.put(req('roll a die'), 3);
    await rec.put(req('other'), 'x');
    await rec.put(req('roll a die'), 5);
    await rec.put(req('roll a die'), 1);
    await rec.close();

    const cache = await ReplayCache.open(file);
    expect(await cache.get(req('roll a die'))).toBe(3);
    expect(await cache.get(req('roll a die'))).toBe(5);
    expect(await cache.get(req('other'))).toBe('x');
    expect(await cache.get(req('roll a die'))).toBe(1);
    const e = await rejection(cache.get(req('roll a die')));
    expect(e.message).toContain('recorded 3 times and this is call 4');
  });

  it('leaves ignoredArgs out of the key, per cache and per call', async () => {
    const file = fresh();
    const cache = await ReplayCache.open(file, { mode: 'update' });
    const cold = req('q', { temperature: 0, user: 'u1' });
    const hot = req('q', { temperature: 1, user: 'u1' });
    expect(cache.cacheKey(cold)).not.toBe(cache.cacheKey(hot));
    expect(cache.cacheKey(cold, ['temperature'])).toBe(cache.cacheKey(hot, ['temperature']));
    expect(cache.cacheKey(cold)).toBe(requestKeys(cold).key);

    await cache.put(cold, 'answer', ['temperature']);
    await cache.close();
    const replay = await ReplayCache.open(file);
    expect(await replay.get(hot, ['temperature'])).toBe('answer');

    const withDefault = await ReplayCache.open(file, { ignoredArgs: ['temperature'] });
    expect(withDefault.cacheKey(cold)).toBe(withDefault.cacheKey(hot));
    expect(await withDefault.get(req('q', { temperature: 0.7, user: 'u1' }))).toBe('answer');
    // A per-call list replaces the cache's: temperature counts again.
    expect((await rejection(withDefault.get(hot, []))).code).toBe('E_MISS');
  });

  it('round-trips typed values', async () => {
    const file = fresh();
    const value = {
      at: new Date('2026-02-03T04:05:06.789Z'),
      byId: new Map<unknown, unknown>([
        [1, 'one'],
        ['two', new Set([2, 'II'])],
      ]),
      tags: new Set(['a', 'b']),
      bytes: Uint8Array.of(0, 1, 254, 255),
      floats: Float64Array.of(1.5, -2.25),
      big: 2n ** 70n,
      err: new Error('rate limited'),
      nested: [{ when: new Date(0) }],
    };
    const rec = await ReplayCache.open(file, { mode: 'record' });
    await rec.put(req('typed'), value);
    await rec.close();

    const got = (await (await ReplayCache.open(file)).get(req('typed'))) as typeof value;
    expect(got.at).toBeInstanceOf(Date);
    expect(got.at.toISOString()).toBe('2026-02-03T04:05:06.789Z');
    expect(got.byId).toBeInstanceOf(Map);
    expect(got.byId.get(1)).toBe('one');
    expect(got.byId.get('two')).toEqual(new Set([2, 'II']));
    expect(got.tags).toEqual(new Set(['a', 'b']));
    expect(got.bytes).toBeInstanceOf(Uint8Array);
    expect([...got.bytes]).toEqual([0, 1, 254, 255]);
    expect(got.floats).toBeInstanceOf(Float64Array);
    expect([...got.floats]).toEqual([1.5, -2.25]);
    expect(got.big).toBe(2n ** 70n);
    expect(got.err).toBeInstanceOf(Error);
    expect(got.err.message).toBe('rate limited');
    expect(got.nested[0]!.when).toEqual(new Date(0));
  });

  it('trusts stored keys and computes missing ones on open', async () => {
    const file = fresh();
    await createTape(file);
    const keyed = req('keyed');
    await appendRecords(file, [
      // A stored key is used as is: this request would hash to something else.
      { v: 1, key: 'k-stored', signature: { toolNames: [], messageCount: 1, contextKeys: [] }, request: { not: 'a request' }, value: 'by stored key', recordedAt: 'x' },
      // An older record without a key gets one computed on load.
      { request: keyed, value: 'computed' },
    ]);
    const cache = await ReplayCache.open(file);
    expect(cache.warnings).toEqual([]);
    expect(await cache.get(keyed)).toBe('computed');
    expect(cache.size).toBe(2);
  });
});

describe('lifecycle', () => {
  it('a put is on disk when it resolves, before any close', async () => {
    const file = fresh();
    const cache = await ReplayCache.open(file, { mode: 'record' });
    await cache.put(req('durable'), { answer: 42 });
    // What a kill -9 right now would leave: the file as it is.
    const { records, warnings } = await readTape(file);
    expect(warnings).toEqual([]);
    expect(records).toHaveLength(1);
    const r = records[0]!.value as ReplayRecord;
    expect(r).toMatchObject({ v: 1, key: cache.cacheKey(req('durable')), request: req('durable'), value: { answer: 42 } });
    expect(r.signature).toEqual(requestKeys(req('durable')).signature);
    expect(new Date(r.recordedAt).toISOString()).toBe(r.recordedAt);
    await cache.close();
  });

  it('concurrent puts land in call order', async () => {
    const file = fresh();
    const cache = await ReplayCache.open(file, { mode: 'record' });
    await Promise.all([0, 1, 2, 3, 4].map((i) => cache.put(req('same'), i)));
    await cache.close();
    expect(await values(file)).toEqual([0, 1, 2, 3, 4]);
  });

  it('`await using` closes the cache at scope exit', async () => {
    const file = fresh();
    let outer: ReplayCache;
    {
      await using cache = await ReplayCache.open(file, { mode: 'record' });
      outer = cache;
      await cache.put(req('q'), 'v');
      expect(cache.closed).toBe(false);
    }
    expect(outer.closed).toBe(true);
    expect((await rejection(outer.put(req('q'), 'again'))).code).toBe('E_CLOSED');
    expect(await values(file)).toEqual(['v']);
  });

  it('withReplayCache scopes: parallel scopes each see their own cache', async () => {
    const a = fresh();
    const b = fresh();
    expect(activeReplayCache()).toBeUndefined();
    const tick = () => new Promise((r) => setTimeout(r, 5));
    const run = (file: string, answer: string) =>
      withReplayCache(
        file,
        async (cache) => {
          for (let i = 0; i < 5; i++) {
            await tick();
            expect(activeReplayCache()).toBe(cache);
            expect(activeReplayCache()?.path).toBe(file);
          }
          await activeReplayCache()!.put(req('q'), answer);
          return cache;
        },
        { mode: 'record' },
      );
    const [ca, cb] = await Promise.all([run(a, 'A'), run(b, 'B')]);
    expect(ca).not.toBe(cb);
    expect(ca.closed && cb.closed).toBe(true);
    expect(activeReplayCache()).toBeUndefined();
    expect(await values(a)).toEqual(['A']);
    expect(await values(b)).toEqual(['B']);
  });

  it('withReplayCache does not prune after a failure', async () => {
    const file = fresh();
    await withReplayCache(file, async (c) => c.put(req('kept'), 'old'), { mode: 'record' });
    await expect(
      withReplayCache(
        file,
        async (c) => {
          await c.put(req('new'), 'new');
          throw new Error('live call failed');
        },
        { mode: 'record' },
      ),
    ).rejects.toThrow('live call failed');
    expect(await values(file)).toEqual(['old', 'new']);
  });
});

describe('two ReplayCache writers on one tape, the same requests', () => {
  it('the second, opened after the first acknowledged its puts, removes none of them; repeats replay in acknowledgement order', async () => {
    const file = fresh();
    const first = await ReplayCache.open(file, { mode: 'record' });
    await first.put(req('same'), 'first 1');
    await first.put(req('same'), 'first 2');
    const second = await ReplayCache.open(file, { mode: 'record' });
    await second.put(req('same'), 'second 1');
    await first.close();
    await second.close();
    const r = await ReplayCache.open(file, { mode: 'replay' });
    expect([await r.get(req('same')), await r.get(req('same')), await r.get(req('same'))]).toEqual(['first 1', 'first 2', 'second 1']);
    await r.close();
  });

  it('a put whose record cannot be written rejects, and is never served', async () => {
    const file = fresh();
    const cache = await ReplayCache.open(file, { mode: 'update', lock: { timeoutMs: 100 } });
    const { withTapeLock } = await import('../../src/store/tape-file.ts');
    await withTapeLock(file, async () => {
      await expect(cache.put(req('locked'), 'never stored')).rejects.toMatchObject({ code: 'E_TAPE_LOCKED' });
    });
    expect(await cache.get(req('locked'))).toBeUndefined();
    await cache.close();
    expect((await readTape(file)).records).toHaveLength(0);
  });
});
