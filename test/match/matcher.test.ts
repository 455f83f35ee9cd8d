// The matcher's four modes, used-once semantics, repeats in recorded order, JSON recordings directories
// (v1 and v2, context keys on both sides) and misses that explain themselves.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TapedeckError } from '../../src/index.ts';
import { createMatcher, loadRecordingsDir, requestKeys, type Recording, type RequestKeys } from '../../src/match/index.ts';
import { errorOf } from '../helpers.ts';
import { canonicalize } from '../../src/core/index.ts';
import { RequestTexts } from '../../src/match/request-texts.ts';

const recordingsDir = join(import.meta.dirname, '../fixtures/recordings-dir');

function req(text: string, tools: string[] = ['search'], context: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: text },
    ],
    tools: tools.map((name) => ({ name, description: `tool ${name}` })),
    context,
    ...extra,
  };
}
const rec = (request: unknown, answer: string): Recording => ({ request, response: { text: answer } });

function missOf(f: () => unknown): TapedeckError {
  const e = errorOf(f);
  expect(e.code).toBe('E_MISS');
  return e;
}

describe('exact mode', () => {
  it('repeated identical requests get the recordings of that key in recorded order, each once', () => {
    const m = createMatcher({ mode: 'exact', recordings: [rec(req('a'), 'first'), rec(req('b'), 'other'), rec(req('a'), 'second')] });
    expect(m.match(req('a')).recording.response).toEqual({ text: 'first' });
    expect(m.match(req('a')).recording.response).toEqual({ text: 'second' });
    const miss = missOf(() => m.match(req('a')));
    expect(miss.message).toContain('already used');
    expect(miss.message).toContain('allowRepeats');
    expect(m.unused().map((r) => r.response)).toEqual([{ text: 'other' }]);
  });

  it('allowRepeats serves the recordings in order, then keeps serving the last', () => {
    const m = createMatcher({ mode: 'exact', allowRepeats: true, recordings: [rec(req('a'), '1'), rec(req('a'), '2')] });
    expect(['1', '2', '2', '2'].map(() => (m.match(req('a')).recording.response as { text: string }).text)).toEqual(['1', '2', '2', '2']);
  });

  it('the key ignores key order and formatting, and sees content changes', () => {
    const m = createMatcher({ mode: 'exact', recordings: [rec(req('hello'), 'x')] });
    const reordered = JSON.parse(JSON.stringify({ context: {}, tools: req('hello').tools, messages: req('hello').messages }));
    expect(m.match(reordered).matchedBy).toBe('exact');
    expect(missOf(() => createMatcher({ mode: 'exact', recordings: [rec(req('hello'), 'x')] }).match(req('hello!'))).code).toBe('E_MISS');
  });
});

describe('signature mode (strict)', () => {
  it('matches on tool names, message count and context keys, not on text', () => {
    const m = createMatcher({ mode: 'signature', recordings: [rec(req('recorded text', ['b', 'a'], { x: 1, y: 2 }), 'r')] });
    const r = m.match(req('different text', ['a', 'b'], { y: 'other', x: 'values' }));
    expect(r.matchedBy).toBe('signature');
    expect(r.warnings).toEqual([]);
  });

  it("context keys come from the same place on both sides (a recorder that stored the real context keys)", () => {
    const recordings = loadRecordingsDir(recordingsDir);
    const m = createMatcher({ mode: 'signature', recordings });
    const request = structuredClone(recordings[0]!.request) as { context: Record<string, unknown>; messages: { content: string }[] };
    request.messages[0]!.content = 'Reworded prompt at node start.';
    request.context = { currentNode: 'start', visitedNodes: [] };
    expect(m.match(request).recording.source).toBe('001-start-pathA.json');
  });

  it('a recorded conversation replayed with its tools renamed from pathA/pathB to fastPath/slowPath', () => {
    const m = createMatcher({ mode: 'signature', recordings: loadRecordingsDir(recordingsDir), source: 'test/fixtures/recordings-dir' });
    const request = {
      messages: [{ role: 'user', content: 'You are at node start. Choose the next transition.' }],
      tools: [
        { name: 'transition_to_fastPath', description: 'Go to fastPath' },
        { name: 'transition_to_slowPath', description: 'Go to slowPath' },
      ],
      context: { currentNode: 'start', visitedNodes: ['start'] },
    };
    const e = missOf(() => m.match(request));
    // The message is the headline; the full report is in the details.
    // Too long for one line with the fix: the fix goes on the second.
    expect(e.message.split('\n')).toEqual(['tools differ from the closest recording: +transition_to_fastPath +transition_to_slowPath -transition_to_pathA (and 1 more)', 'Re-record the recordings']);
    const report = e.details.report as string;
    expect(report).toContain('No recording matches this request (mode signature; 2 recordings from test/fixtures/recordings-dir, 2 unused)');
    expect(report).toContain('tools [transition_to_fastPath, transition_to_slowPath]');
    expect(report).toContain('#0 (001-start-pathA.json)');
    expect(report).toContain('added [transition_to_fastPath, transition_to_slowPath], removed [transition_to_pathA, transition_to_pathB]');
    expect(report).toMatch(/re-record/i);
    expect(report).toContain('#0 (001-start-pathA.json): the same 1 message');
    expect(report).not.toContain('ignoreArgs'); // a changed tool set is never "volatile"
    const closest = (e.details.closest as { index: number; toolsAdded: string[] }[])[0]!;
    expect(closest.index).toBe(0);
    expect(closest.toolsAdded).toEqual(['transition_to_fastPath', 'transition_to_slowPath']);
  });
});

describe('sequential mode (legacy)', () => {
  it('serves recordings in recorded order regardless of content, each once', () => {
    const m = createMatcher({ mode: 'sequential', recordings: [rec(req('a'), '1'), rec(req('b'), '2')] });
    expect(m.match(req('zzz')).index).toBe(0);
    expect(m.match(req('a')).index).toBe(1);
    expect(missOf(() => m.match(req('a'))).details.report).toContain('Already used: [#0, #1]');
  });
});

describe('hybrid mode (default)', () => {
  it('exact first, then signature with a warning, then sequential with a warning', () => {
    const recordings = [rec(req('a'), 'exact-a'), rec(req('b', ['search', 'fetch']), 'sig'), rec(req('c', ['other']), 'seq')];
    const m = createMatcher({ recordings });
    expect(m.mode).toBe('hybrid');
    const r1 = m.match(req('a'));
    expect([r1.matchedBy, r1.warnings]).toEqual(['exact', []]);
    const r2 = m.match(req('changed', ['fetch', 'search']));
    expect(r2.matchedBy).toBe('signature');
    expect(r2.index).toBe(1);
    expect(r2.warnings[0]).toMatch(/matched recording #1 by signature/);
    const r3 = m.match(req('anything', ['nope']));
    expect(r3.matchedBy).toBe('sequential');
    expect(r3.index).toBe(2);
    expect(r3.warnings[0]).toMatch(/fell back to the next recording in order, #2/);
    expect(missOf(() => m.match(req('a'))).details.report).toContain('Already used: [#0, #1, #2]');
    expect(m.unused()).toEqual([]);
  });

  it('a used exact recording is not served twice through the signature route', () => {
    const m = createMatcher({ recordings: [rec(req('a'), '1')] });
    m.match(req('a'));
    expect(() => m.match(req('a'))).toThrow(TapedeckError);
  });
});

describe('directories of JSON recordings', () => {
  it('loads v1 and v2 files in name order, computing v1 signatures', () => {
    const recs = loadRecordingsDir(recordingsDir);
    expect(recs.map((r) => r.source)).toEqual(['001-start-pathA.json', '002-pathA-done.json']);
    const m = createMatcher({ recordings: recs });
    expect(m.keys()[1]!.signature).toEqual({ toolNames: [], messageCount: 1, contextKeys: ['currentNode', 'visitedNodes'] });
    expect(m.keys()[0]!.signature).toEqual(recs[0]!.signature);
  });

  it('skips bad files with a warning naming the file (and the byte offset), keeps the good ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rec-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'a.json'), JSON.stringify(rec(req('a'), '1')));
    writeFileSync(join(dir, 'b.json'), '{"request": {"messages": [}');
    writeFileSync(join(dir, 'c.json'), JSON.stringify({ response: {} }));
    writeFileSync(join(dir, 'd.json'), JSON.stringify({ ...rec(req('d'), '4'), signature: { toolNames: ['wrong'], messageCount: 9, contextKeys: [] } }));
    writeFileSync(join(dir, 'notes.txt'), 'not a recording');
    const warnings: string[] = [];
    const recs = loadRecordingsDir(dir, { onWarning: (w) => warnings.push(w) });
    expect(recs.map((r) => r.source)).toEqual(['a.json', 'd.json']);
    expect(warnings[0]).toContain('b.json');
    expect(warnings[0]).toContain('byte 26');
    expect(warnings[1]).toContain('c.json');
    expect(warnings[2]).toContain('d.json');
    expect(warnings[2]).toContain('disagrees');
  });

  it('a missing directory is a clear error', () => {
    expect(() => loadRecordingsDir('/nonexistent/recordings')).toThrow(expect.objectContaining({ code: 'E_RECORDINGS_DIR' }));
  });
});

describe('misses that explain themselves', () => {
  const conv = (texts: string[]) => ({ messages: texts.map((t, i) => ({ role: i % 2 ? 'assistant' : 'user', content: t })), tools: [], context: {} });

  it('among recordings that share as many messages, ranks by shared words, then shape (stream), tools and model', () => {
    const chat = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }], ...extra });
    const fn = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } });
    const closestOf = (recordings: Recording[], request: unknown) => (missOf(() => createMatcher({ mode: 'exact', recordings }).match(request)).details.closest as { index: number }[]).map((c) => c.index);
    // Recorded first and unrelated, "Hi" must not win on its index.
    const story = [rec(chat('Hi'), '0'), rec(chat('Tell me a story'), '1'), rec(chat('Tell me a story', { stream: true }), '2')];
    expect(closestOf(story, chat('Tell me a story about a dragon', { stream: true }))).toEqual([2, 1, 0]);
    expect(closestOf(story, chat('Tell me a story about a dragon'))).toEqual([1, 2, 0]);
    // No words in common: the shape decides, then the tools, then the model.
    expect(closestOf(story, chat('Write a poem', { stream: true }))[0]).toBe(2);
    const shaped = [rec(chat('Hi', { tools: [fn('a')] }), '0'), rec(chat('Hi', { model: 'gpt-4o' }), '1'), rec(chat('Hi'), '2')];
    expect(closestOf(shaped, chat('Hello'))).toEqual([2, 1, 0]);
    const e = missOf(() => createMatcher({ mode: 'exact', recordings: story }).match(chat('Tell me a story about a dragon', { stream: true })));
    expect(e.details.difference).toBe('message 0 (user) text differs from the closest recording');
  });

  /** Question i of one system prompt's questions (they all tie on their first message). */
  const ask = (i: number, extra = '') => ({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'You answer arithmetic questions.' },
      { role: 'user', content: `Question number ${i}: what is ${i} squared, and is it even?${extra}` },
    ],
  });

  it('finds the nearest prompt among hundreds that share the leading messages, wherever it was recorded', () => {
    // One system prompt for every test: 600 recordings tie on it, more than the full comparison
    // takes, so a cut in tape order would leave out the recording of the edited prompt.
    const recordings = Array.from({ length: 600 }, (_, i) => rec(ask(i), String(i)));
    const m = createMatcher({ mode: 'exact', recordings, memo: 0 });
    for (const target of [450, 3, 599]) {
      for (const request of [ask(target, ' Be brief.'), new TextEncoder().encode(JSON.stringify(ask(target, ' Be brief.'), null, 2))]) {
        const e = missOf(() => m.match(request));
        const closest = e.details.closest as { index: number; sharedMessages: number }[];
        expect(closest[0]).toMatchObject({ index: target, sharedMessages: 1 });
        expect(e.message.split('\n')[2]).toMatch(new RegExp(`^  recording: .*what is ${target} squared, and is it even\\?"$`));
      }
    }
  });

  it('ranks the tied recordings of later misses by texts kept from the first, made again only for a replaced request', () => {
    // 400 recordings tie on one system prompt, more than the full comparison takes, so each miss
    // ranks all of them by their canonical text. The last one reads a member through a getter
    // (every walk of its request reads it), and is far from every request below, so only that
    // ranking reads it after the matcher is made.
    let reads = 0;
    const recordings = Array.from({ length: 400 }, (_, i) => rec(ask(i), String(i)));
    const counted = { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'You answer arithmetic questions.' }, { role: 'user', content: 'Unrelated.' }] };
    Object.defineProperty(counted, 'temperature', { enumerable: true, get: () => (reads++, 0) });
    recordings.push(rec(counted, 'counted'));
    const m = createMatcher({ mode: 'exact', recordings, memo: 0 });
    const closestAfter = (target: number) => (missOf(() => m.match(ask(target, ' Be brief.'))).details.closest as { index: number }[])[0]!.index;
    expect(closestAfter(17)).toBe(17);
    const afterFirst = reads;
    expect(afterFirst).toBeGreaterThan(0);
    expect(closestAfter(250)).toBe(250);
    expect(closestAfter(399)).toBe(399);
    expect(reads).toBe(afterFirst);
    // A recording whose request is replaced in place is ranked by its new text.
    recordings[399] = rec(ask(399, ' Be brief.'), 'replaced');
    expect(closestAfter(399)).toBe(399);
    recordings[0] = rec(ask(399, ' Be brief!'), 'replaced 0');
    const e = missOf(() => m.match(ask(399, ' Be brief?')));
    expect((e.details.closest as { index: number }[]).slice(0, 2).map((c) => c.index).sort((a, b) => a - b)).toEqual([0, 399]);
  });

  it('recordings given as JSON text or bytes key as their objects do, and a request of the same bytes takes their digests unkeyed', () => {
    const objects = Array.from({ length: 40 }, (_, i) => ({ model: 'gpt-4o', messages: [{ role: 'user', content: `q ${i} é ✓` }], temperature: i / 10, ...(i % 3 ? {} : { tools: [{ type: 'function', function: { name: `t${i}`, parameters: { type: 'object' } } }] }) }));
    const texts = objects.map((o, i) => (i % 7 === 0 ? JSON.stringify(o, null, 1) : JSON.stringify(o)));
    const forms = [objects, texts, texts.map((t) => Buffer.from(t)), texts.map((t) => new Uint8Array(Buffer.from(t)))];
    const matchers = forms.map((form) => createMatcher({ mode: 'exact', recordings: form.map((r, i) => rec(r, String(i))) }));
    for (const m of matchers.slice(1)) expect(m.keys()).toEqual(matchers[0]!.keys());
    // The recorded bytes again (as an SDK sends them): the recording's digests, none computed.
    for (const m of matchers.slice(1)) {
      expect(m.match(Buffer.from(texts[12]!)).recording.response).toEqual({ text: '12' });
      expect(m.stats()).toEqual({ memoHits: 1, fingerprintHits: 0, computed: 0 });
    }
    // A text that is not JSON is the reference's error, with the recording's number.
    const bad = errorOf(() => createMatcher({ mode: 'exact', recordings: [rec(texts[0], '0'), rec('{"model":', '1')] }));
    expect(bad.message).toMatch(/^Recording #1: /);
    // The error's hint is said once, after the message with its recording's number in front.
    expect(bad.hint).toBeTruthy();
    expect(bad.message.split(bad.hint!).length - 1).toBe(1);
  });

  it('RequestTexts: the canonical JSON of each request, past the first size of its buffer and for recordings appended later', () => {
    const recordings: Recording[] = Array.from({ length: 1500 }, (_, i) => rec({ messages: [{ role: 'user', content: `é✓ ${i} ${'x'.repeat(i % 300)}` }], z: i, a: [i] }, String(i)));
    const texts = new RequestTexts(recordings);
    const want = (i: number) => Buffer.from(canonicalize(recordings[i]!.request)).toString('hex');
    for (let i = recordings.length - 1; i >= 0; i -= 7) expect(Buffer.from(texts.get(i)!).toString('hex')).toBe(want(i));
    for (let i = 0; i < recordings.length; i++) expect(Buffer.from(texts.get(i)!).toString('hex')).toBe(want(i));
    recordings.push(rec({ messages: [{ role: 'user', content: 'appended' }] }, 'late'), rec({ messages: [{ role: 'user', content: Number.NaN }] }, 'not JSON'));
    expect(Buffer.from(texts.get(1500)!).toString('hex')).toBe(want(1500));
    expect(texts.get(1501)).toBeUndefined();
    expect(texts.get(5000)).toBeUndefined();
    // Past its limit it keeps no more text, and gives each one made anew.
    let reads = 0;
    const counted = { messages: [{ role: 'user', content: 'counted' }] };
    Object.defineProperty(counted, 'n', { enumerable: true, get: () => (reads++, 1) });
    const few = [...recordings.slice(0, 20), rec(counted, 'counted')];
    // Room for the first 20 texts exactly: the counted one is past the limit.
    const small = new RequestTexts(few, few.slice(0, 20).reduce((n, r) => n + canonicalize(r.request).length, 0));
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < few.length - 1; i++) expect(Buffer.from(small.get(i)!).toString('hex')).toBe(want(i));
      expect(Buffer.from(small.get(20)!).toString('hex')).toBe(Buffer.from(canonicalize(counted)).toString('hex'));
    }
    // Read by both gets of the counted request (past the limit) and by the check here.
    expect(reads).toBe(4);
  });

  it('RequestTexts: texts kept across many chunks, given as objects, JSON text or bytes, stay what they were', () => {
    const many = Array.from({ length: 6000 }, (_, i) => ({ messages: [{ role: 'user', content: `${i} ${'é✓x'.repeat(i % 150)}` }], k: i }));
    const forms: unknown[][] = [many, many.map((r) => JSON.stringify(r)), many.map((r) => Buffer.from(JSON.stringify(r)))];
    const want = many.map((r) => Buffer.from(canonicalize(r)).toString('hex'));
    expect(want.reduce((n, h) => n + h.length / 2, 0)).toBeGreaterThan(2.5 * (1 << 20));
    for (const form of forms) {
      const texts = new RequestTexts(form.map((r, i) => rec(r, String(i))));
      for (let i = 0; i < form.length; i++) expect(Buffer.from(texts.get(i)!).toString('hex')).toBe(want[i]);
      // Read again after all were made: each kept text is still its own.
      for (let i = form.length - 1; i >= 0; i -= 13) expect(Buffer.from(texts.get(i)!).toString('hex')).toBe(want[i]);
    }
  });

  it('ranks recordings by the longest shared prefix and shows where they diverge', () => {
    const recordings = [rec(conv(['x', 'y', 'z']), '0'), rec(conv(['a', 'b', 'c', 'd']), '1'), rec(conv(['a', 'q']), '2')];
    const m = createMatcher({ mode: 'exact', recordings });
    const e = missOf(() => m.match(conv(['a', 'b', 'CHANGED', 'd'])));
    const closest = e.details.closest as { index: number; divergesAt: number; requestExcerpt: string; recordingExcerpt: string }[];
    expect(closest.map((c) => c.index)).toEqual([1, 2, 0]);
    expect(closest[0]!.divergesAt).toBe(2);
    expect(closest[0]!.requestExcerpt).toContain('CHANGED');
    expect(closest[0]!.recordingExcerpt).toContain('"c"');
    expect(e.details.report).toContain('#1: shares 2 leading messages, diverges at message 2');
    expect(e.message.split('\n')).toEqual([
      'message 2 (user) text differs from the closest recording; re-record the recordings',
      '  request:   "CHANGED"',
      '  recording: "c"',
    ]);
  });

  it('long messages are excerpted around the first difference', () => {
    const long = 'lorem ipsum '.repeat(200);
    const m = createMatcher({ mode: 'exact', recordings: [rec(conv([long + 'END-A']), '0')] });
    const e = missOf(() => m.match(conv([long + 'END-B'])));
    const c = (e.details.closest as { requestExcerpt: string; recordingExcerpt: string }[])[0]!;
    expect(c.requestExcerpt).toContain('END-B');
    expect(c.recordingExcerpt).toContain('END-A');
    expect(c.requestExcerpt.length).toBeLessThan(130);
  });

  it('a deciding argument that differs is a change to re-record, never something to ignore', () => {
    const a = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 };
    const b = { ...a, max_tokens: 200 };
    const e = missOf(() => createMatcher({ mode: 'exact', recordings: [rec(a, '0')] }).match(b));
    expect(e.message).not.toContain('ignoreArgs');
    expect(e.details.report).not.toContain('ignoreArgs');
    expect(e.message).toBe('argument max_tokens differs: 200 vs 100 in the closest recording; re-record the recordings');
  });

  it('a sampling temperature against a recording at 0 is said as sampling, not as absent (only 0 is keyed)', () => {
    const a = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0 };
    for (const b of [{ ...a, temperature: 0.8 }, { model: a.model, messages: a.messages }]) {
      const e = missOf(() => createMatcher({ mode: 'exact', recordings: [rec(a, '0')] }).match(b));
      expect(e.message).not.toContain('(absent)');
      expect(e.message).toMatch(/^argument temperature differs: sampling \(not 0\) vs 0 in the closest recording/);
    }
    // And the other way round: the request at 0, the recording sampled.
    const e = missOf(() => createMatcher({ mode: 'exact', recordings: [rec({ ...a, temperature: 0.7 }, '0')] }).match(a));
    expect(e.message).toMatch(/^argument temperature differs: 0 vs sampling \(not 0\) in the closest recording/);
  });

  it('suggests ignoreArgs when only a volatile-named argument differs, and ignoreArgs then matches', () => {
    const a = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], trace_id: 'abc' };
    const b = { ...a, trace_id: 'xyz' };
    const e = missOf(() => createMatcher({ mode: 'exact', recordings: [rec(a, '0')] }).match(b));
    expect(e.message).toMatch(/ignoreArgs: \["trace_id"\]/);
    expect(e.message).not.toMatch(/mode|signature|hybrid/);
    expect(createMatcher({ mode: 'exact', ignoreArgs: ['trace_id'], recordings: [rec(a, '0')] }).match(b).matchedBy).toBe('exact');
    // A volatile-named argument beside a changed prompt is no longer the one difference.
    const c = { ...b, messages: [{ role: 'user', content: 'hello' }] };
    expect(missOf(() => createMatcher({ mode: 'exact', recordings: [rec(a, '0')] }).match(c)).message).not.toContain('ignoreArgs');
  });

  it('never needs volatileKeys for message timestamps: they are not in the key', () => {
    const a = { messages: [{ role: 'user', content: 'hi', timestamp: '2025-01-01' }], tools: [], context: {} };
    const b = { messages: [{ role: 'user', content: 'hi', timestamp: '2026-11-22' }], tools: [], context: {} };
    expect(createMatcher({ mode: 'exact', recordings: [rec(a, '0')] }).match(b).matchedBy).toBe('exact');
  });

  it('suggests volatileKeys when a message differs in one non-content field, and volatileKeys then matches', () => {
    const a = { messages: [{ role: 'user', content: 'hi', meta: { trace: 'abc' } }], tools: [], context: {} };
    const b = { messages: [{ role: 'user', content: 'hi', meta: { trace: 'xyz' } }], tools: [], context: {} };
    const e = missOf(() => createMatcher({ mode: 'exact', recordings: [rec(a, '0')] }).match(b));
    expect(e.message).toContain('volatileKeys: ["trace"]');
    expect(createMatcher({ mode: 'exact', volatileKeys: ['trace'], recordings: [rec(a, '0')] }).match(b).matchedBy).toBe('exact');
  });

  it('never offers a looser mode for a changed prompt, even when a recording has the same signature', () => {
    // A question about Germany must not be answered with the recording about France.
    const m = createMatcher({ mode: 'exact', recordings: [rec(req('What is the capital of France?'), 'Paris')] });
    const e = missOf(() => m.match(req('What is the capital of Germany?')));
    for (const text of [e.message, ...(e.details.fixes as string[])]) {
      expect(text).not.toMatch(/'(signature|hybrid|sequential)'|would use it/);
      expect(text).not.toMatch(/volatileKeys|ignoreArgs/);
    }
    expect(e.message.split('\n')[0]).toBe('message 1 (user) text differs from the closest recording; re-record the recordings');
    // The report describes the request's signature, but proposes no mode.
    expect(e.details.report).not.toMatch(/'(signature|hybrid|sequential)'|would use it/);
    expect(e.message).toContain('Germany');
    expect(e.message).toContain('France');
  });

  it('changed tool call arguments are content: no volatileKeys for the argument name', () => {
    const call = (city: string) => ({
      model: 'gpt-4o',
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city }) } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    const e = missOf(() => createMatcher({ mode: 'exact', recordings: [rec(call('Paris'), '0')] }).match(call('Berlin')));
    expect(e.message).not.toContain('volatileKeys');
    expect(e.details.fixes).not.toEqual(expect.arrayContaining([expect.stringContaining('volatileKeys')]));
    expect(e.message.split('\n')[0]).toBe('message 1 (assistant) tool call arguments differ from the closest recording; re-record the recordings');
  });

  it('names the recordCommand it was given, and an entry point its own fix', () => {
    const m = createMatcher({ mode: 'exact', recordings: [rec(req('a'), '0')], recordCommand: 'npm run record' });
    expect(missOf(() => m.match(req('b'))).message.split('\n')[0]).toMatch(/; re-record: npm run record$/);
    const viaProxy = createMatcher({ mode: 'exact', recordings: [rec(req('a'), '0')], entry: { kind: 'proxy' } });
    expect(missOf(() => viaProxy.match(req('b'))).message.split('\n')[0]).toMatch(/; re-record: restart tapedeck serve with --mode record$/);
  });

  it('a recording used up: says so, and names allowRepeats (the same request, not a looser match)', () => {
    const m = createMatcher({ mode: 'exact', recordings: [rec(req('a'), '0')] });
    m.match(req('a'));
    const e = missOf(() => m.match(req('a')));
    expect(e.message).toBe('the one recording of this request is already used; re-record the recordings, or allowRepeats: true');
    expect(e.details.kind).toBe('used-up');
  });

  it('context keys that differ are named when nothing else does', () => {
    const m = createMatcher({ mode: 'signature', recordings: [rec(req('a', [], { node: 'start' }), '0')] });
    const e = missOf(() => m.match(req('a', [], { node: 'start', visited: [] })));
    expect(e.message).toBe('context keys differ from the closest recording: +visited; re-record the recordings');
  });

  it('an empty recording set says so', () => {
    const e = missOf(() => createMatcher({ recordings: [] }).match(req('a')));
    expect(e.message).toBe('there are no recordings; re-record the recordings');
    expect(e.details.report).toContain('There are no recordings at all.');
  });

  it('rejects unknown modes up front with the valid ones', () => {
    expect(() => createMatcher({ mode: 'fuzzy' as never, recordings: [] })).toThrow(/Valid modes: exact, signature, sequential, hybrid/);
  });
});

describe('request bodies as bytes (the proxy path) and the memo of seen bodies', () => {
  const body = (text: string) => new TextEncoder().encode(JSON.stringify({ model: 'gpt-4o', user: 'u-1', messages: [{ role: 'user', content: text }] }));

  it('bytes, text and objects give the same keys; a repeat is served from the memo with the same digests', () => {
    const request = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    const m = createMatcher({ mode: 'exact', allowRepeats: true, recordings: [rec(request, '0')] });
    const cold = m.match(body('hi'));
    const warm = m.match(body('hi'));
    const fromText = m.match(new TextDecoder().decode(body('hi')));
    const fromObject = m.match(request);
    expect(cold.matchedBy).toBe('exact');
    expect(warm.request).toEqual(cold.request);
    expect(fromText.request).toEqual(cold.request);
    expect(fromObject.request.key).toBe(cold.request.key);
    expect(fromObject.request.pathHashes).toEqual(cold.request.pathHashes);
  });

  it('a miss after a memo hit still explains itself in full', () => {
    const m = createMatcher({ mode: 'exact', recordings: [rec({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, '0')] });
    m.match(body('hi'));
    const e = missOf(() => m.match(body('hi'))); // same bytes: memo hit, recording already used
    expect(e.message).toContain('already used');
    expect((e.details.closest as { sharedMessages: number; used: boolean }[])[0]).toMatchObject({ sharedMessages: 1, used: true });
  });

  it('memo: 0 turns it off; the memo keeps at most `memo` bodies', () => {
    for (const memo of [0, 2]) {
      const m = createMatcher({ mode: 'exact', allowRepeats: true, memo, recordings: ['a', 'b', 'c'].map((t) => rec({ model: 'gpt-4o', messages: [{ role: 'user', content: t }] }, t)) });
      for (const t of ['a', 'b', 'c', 'a', 'b', 'c']) expect((m.match(body(t)).recording.response as { text: string }).text).toBe(t);
    }
  });

  it('malformed bodies are E_JSON with the byte offset', () => {
    const m = createMatcher({ recordings: [] });
    expect(errorOf(() => m.match(new TextEncoder().encode('{"model": "x", "messages": [}')))).toMatchObject({ code: 'E_JSON', offset: 28 });
  });
});

describe('fingerprints: raw bodies canonically equal to a recording skip parsing and normalization', () => {
  const recorded = {
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_AAA', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] }],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: { user: { type: 'string' } } } } }],
  };
  const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

  it('key order, whitespace and always-dropped root arguments hit the fingerprint, with the same digests as the full path', () => {
    const m = createMatcher({ mode: 'exact', allowRepeats: true, memo: 0, recordings: [rec(recorded, '0')] });
    const variant = JSON.stringify({ store: true, user: 'u-42', tools: recorded.tools, messages: recorded.messages, model: 'gpt-4o' }, null, 2);
    const r = m.match(variant);
    expect(r.matchedBy).toBe('exact');
    expect(m.stats()).toEqual({ memoHits: 0, fingerprintHits: 1, computed: 0 });
    const { messages: _m, view: _v, ...full } = requestKeys(variant);
    expect(r.request).toEqual(full);
  });

  it('differences normalization removes but the fingerprint keeps (new call ids) take the full path and still match', () => {
    const m = createMatcher({ mode: 'exact', allowRepeats: true, memo: 0, recordings: [rec(recorded, '0')] });
    const reRecorded = JSON.parse(JSON.stringify(recorded).replace(/call_AAA/g, 'call_ZZZ'));
    expect(m.match(bytes(reRecorded)).matchedBy).toBe('exact');
    expect(m.stats()).toEqual({ memoHits: 0, fingerprintHits: 0, computed: 1 });
  });

  it('shape-deciding arguments are never left out of the fingerprint; at their defaults they take the full path and match', () => {
    const m = createMatcher({ mode: 'exact', allowRepeats: true, memo: 0, recordings: [rec(recorded, '0')] });
    expect(m.match(bytes({ ...recorded, stream: false, stream_options: { include_usage: false } })).matchedBy).toBe('exact');
    expect(m.stats().fingerprintHits).toBe(0);
    expect(() => m.match(bytes({ ...recorded, stream: true }))).toThrow(expect.objectContaining({ code: 'E_MISS' }));
  });

  it('a nested member named like a dropped argument is content: it changes the key', () => {
    const m = createMatcher({ mode: 'exact', memo: 0, recordings: [rec(recorded, '0')] });
    const changed = structuredClone(recorded);
    changed.tools[0]!.function.parameters.properties = { user: { type: 'number' } } as never;
    expect(() => m.match(bytes(changed))).toThrow(expect.objectContaining({ code: 'E_MISS' }));
    expect(m.stats().fingerprintHits).toBe(0);
  });

  it('fingerprints: false keeps none: the same body is keyed in full, to the same digests and recording', () => {
    const variant = JSON.stringify({ store: true, user: 'u-42', tools: recorded.tools, messages: recorded.messages, model: 'gpt-4o' }, null, 2);
    const on = createMatcher({ mode: 'exact', allowRepeats: true, memo: 0, recordings: [rec(recorded, '0')] });
    const off = createMatcher({ mode: 'exact', allowRepeats: true, memo: 0, fingerprints: false, recordings: [rec(recorded, '0')] });
    const a = on.match(variant);
    const b = off.match(variant);
    expect(on.stats()).toEqual({ memoHits: 0, fingerprintHits: 1, computed: 0 });
    expect(off.stats()).toEqual({ memoHits: 0, fingerprintHits: 0, computed: 1 });
    expect([b.index, b.matchedBy]).toEqual([a.index, a.matchedBy]);
    // The full path may also return the normalized view (where the raw path declines): the digests are the same.
    const { messages: _m, view: _v, ...digests } = b.request as RequestKeys;
    expect(digests).toEqual(a.request);
  });

  it('repeated bytes come from the memo', () => {
    const m = createMatcher({ mode: 'exact', allowRepeats: true, recordings: [rec(recorded, '0')] });
    const pretty = JSON.stringify(recorded, null, 1);
    m.match(pretty);
    m.match(pretty);
    expect(m.stats()).toEqual({ memoHits: 1, fingerprintHits: 1, computed: 0 });
  });

  it("a recording's request as JSON.stringify writes it (what the JavaScript SDKs send) is found by the hash of its bytes", () => {
    const m = createMatcher({ mode: 'exact', allowRepeats: true, recordings: [rec({ model: 'gpt-4o', messages: [{ role: 'user', content: 'other' }] }, 'x'), rec(recorded, '0')] });
    const r = m.match(bytes(recorded));
    expect(r.index).toBe(1);
    expect(m.stats()).toEqual({ memoHits: 1, fingerprintHits: 0, computed: 0 });
    const { messages: _m, view: _v, ...full } = requestKeys(bytes(recorded));
    expect(r.request).toEqual(full);
    // memo: 0 turns byte hashing off altogether, the recordings' text included.
    const off = createMatcher({ mode: 'exact', allowRepeats: true, memo: 0, recordings: [rec(recorded, '0')] });
    off.match(bytes(recorded));
    expect(off.stats()).toEqual({ memoHits: 0, fingerprintHits: 1, computed: 0 });
  });

  it('a recording whose request JSON.stringify would rewrite is not known by that text', () => {
    // undefined is dropped by JSON.stringify: that text is another request than the object.
    for (const request of [{ ...recorded, temperature: undefined }, { ...recorded, when: new Date(0) }, { ...recorded, messages: [...recorded.messages, undefined] }]) {
      let m;
      try {
        m = createMatcher({ mode: 'exact', allowRepeats: true, recordings: [rec(request, '0')] });
      } catch {
        continue; // a request the matcher refuses outright has no text to know it by
      }
      try {
        m.match(JSON.stringify(request));
      } catch {
        /* a miss is fine: the point is where the digests came from */
      }
      expect(m.stats().memoHits).toBe(0);
    }
  });

  it('fingerprints that keep missing are only probed, and are used again once one hits', () => {
    const m = createMatcher({ mode: 'exact', allowRepeats: true, memo: 0, recordings: [rec(recorded, '0')] });
    const reRecorded = bytes(JSON.parse(JSON.stringify(recorded).replace(/call_AAA/g, 'call_ZZZ')));
    const fingerprints = () => {
      const s = m.stats();
      return s.fingerprintHits;
    };
    // Every request takes the full path and matches; the count of fingerprint computations is
    // seen through a hit: a canonically equal body right after N misses hits only if probed.
    for (let i = 0; i < 31; i++) expect(m.match(reRecorded).matchedBy).toBe('exact');
    const pretty = JSON.stringify(recorded, null, 2);
    expect(m.match(pretty).matchedBy).toBe('exact');
    expect(fingerprints()).toBe(1); // 31 misses: still computed every time
    for (let i = 0; i < 33; i++) m.match(reRecorded);
    m.match(pretty); // 33 misses in a row: this one is not the probe, so it takes the full path
    expect(fingerprints()).toBe(1);
    let k = 0;
    while (fingerprints() === 1 && k++ < 40) m.match(pretty); // the next probe hits ...
    expect(fingerprints()).toBe(2);
    m.match(pretty); // ... and from then on every request computes one again
    expect(fingerprints()).toBe(3);
    expect(m.stats().computed).toBe(31 + 33 + 1 + k - 1);
  });

  it('probes fingerprints at growing gaps while the misses run on: 32, 64, 128, 256, 512, then every 512', () => {
    const reRecorded = bytes(JSON.parse(JSON.stringify(recorded).replace(/call_AAA/g, 'call_ZZZ')));
    const pretty = JSON.stringify(recorded, null, 2);
    // A canonically equal body after n misses in a row hits its fingerprint only if probed.
    const probedAfter = (n: number): boolean => {
      const m = createMatcher({ mode: 'exact', allowRepeats: true, memo: 0, recordings: [rec(recorded, '0')] });
      for (let i = 0; i < n; i++) m.match(reRecorded);
      expect(m.match(pretty).matchedBy).toBe('exact'); // probed or not, the same recording
      return m.stats().fingerprintHits === 1;
    };
    const probed = [0, 31, 32, 64, 128, 256, 512, 1024, 1536];
    const skipped = [33, 63, 96, 160, 384, 768, 1100];
    expect(probed.filter((n) => !probedAfter(n))).toEqual([]);
    expect(skipped.filter((n) => probedAfter(n))).toEqual([]);
  });
});
