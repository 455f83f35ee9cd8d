// An agent re-recorded in record mode into its own tape after a tool result changed: record mode
// keeps the recordings of the requests the run did not make again, so the new tape still holds
// the old steps, which paired with themselves as `identical`, while the re-recorded steps (new
// keys) found no unpaired old recording and were only `added`: `tapedeck diff` said "nothing
// fails" although the agent's final answer changed. Now a carried-over copy of an earlier run's
// recording, in a conversation whose start the latest record run re-recorded, is kept from before
// and said so, and the latest run's changed step is compared with it. Recordings of another test,
// of another conversation, or kept by an update run are still paired as they are.
// The real OpenAI SDK records through createFetch against the drift upstream.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { driftReport, type DriftEntry } from '../../src/drift/report.ts';
import { renderTerminal } from '../../src/drift/render-terminal.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startDriftUpstream, type Variant } from './drift-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-kept-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tool = { type: 'function' as const, function: { name: 'read_notes', parameters: { type: 'object', properties: {} } } };
type Msg = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** The agent's conversation: a question, a tool call, and the tool's result (what changes). */
const steps = (notes: string, question = 'What do my notes say?'): Msg[][] => {
  const first: Msg[] = [{ role: 'user', content: question }];
  const call: Msg = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_notes', arguments: '{}' } }] };
  return [first, [...first, call, { role: 'tool', tool_call_id: 'call_1', content: notes }]];
};

/** One run of the agent (its steps) into `tape` in `mode`, answered as `variant`. */
async function agent(tape: string, conversations: Msg[][][], variant: Variant, opts: { mode?: 'record' | 'update'; test?: string } = {}): Promise<void> {
  const up = await startDriftUpstream(variant);
  const f = createFetch({ tape, mode: opts.mode ?? 'record', summary: false, onWarning: () => {}, ...(opts.test ? { test: opts.test } : {}) });
  try {
    const openai = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: f });
    // The fake answers a request with tools by calling one, so the last step (the answer) has none.
    for (const c of conversations) for (const [i, messages] of c.entries()) await openai.chat.completions.create({ model: 'gpt-4o-mini', ...(i === 0 ? { tools: [tool] } : {}), messages });
  } finally {
    await f.close();
    await up.close();
  }
}

const values = async (file: string) => (await readTape(file)).records.map((r) => r.value);

/** The report, and for each entry the new side's record (the old side's for a removed one). */
async function diff(name: string, old: string, now: string) {
  const before = await values(old);
  const after = await values(now);
  const r = driftReport([{ name, records: before }], [{ name, records: after }], { old, new: now });
  const recordOf = (e: DriftEntry) => (e.new ? after[e.new.index] : before[e.old!.index]) as { test?: string; request: { body: { messages: { content: string }[] } } };
  return { r, firstMessage: (e: DriftEntry) => recordOf(e).request.body.messages[0]!.content, testOf: (e: DriftEntry) => recordOf(e).test };
}

describe('a record run into the same tape after a tool result changed', () => {
  it('compares the changed step with the old one and says the carried-over copy is kept from an earlier run', async () => {
    const tape = join(dir, 'agent.tape');
    const old = join(dir, 'agent.old.tape');
    await agent(tape, [steps('notes v1: the secret door is red')], 'base');
    copyFileSync(tape, old);
    await agent(tape, [steps('notes v3: door moved')], 'text');
    // Record mode kept the old step 2 (its request was not made again) beside the new one.
    expect((await values(tape)).length).toBe(3);

    const { r } = await diff('agent.tape', old, tape);
    const changed = r.entries.find((e) => e.status === 'paired' && e.requestChange.length > 0);
    expect(changed, JSON.stringify(r.entries.map((e) => [e.status, e.summary]))).toBeDefined();
    expect(changed!.requestChange.join(' ')).toMatch(/message 2 \(tool\) tool result differs/);
    expect(changed!.primary).toBe('text');
    const kept = r.entries.filter((e) => e.kept);
    expect(kept).toHaveLength(1);
    // The kept copy is the old step's recording, carried over: paired with it, identical (the
    // changed step is compared with that same old recording).
    expect([kept[0]!.status, kept[0]!.primary]).toEqual(['paired', 'identical']);
    expect(kept[0]!.old!.key).toBe(kept[0]!.new!.key);
    expect(changed!.old!.index).toBe(kept[0]!.old!.index);
    expect(kept[0]!.summary).toBe('kept from an earlier run; the latest record run did not make this request again');
    expect(r.entries.filter((e) => e.status === 'added')).toHaveLength(0);
    expect(r.summary.failing).toBeGreaterThan(0);
  });

  it('leaves another conversation of the tape, which the latest run did not start, paired as it is', async () => {
    const tape = join(dir, 'two.tape');
    const old = join(dir, 'two.old.tape');
    const other = steps('weather notes: sunny', 'What is the weather?');
    await agent(tape, [steps('notes v1'), other], 'base');
    copyFileSync(tape, old);
    await agent(tape, [steps('notes v3')], 'text');
    const { r, firstMessage } = await diff('two.tape', old, tape);
    // The other conversation's two recordings, carried over, pair with themselves as before.
    const weather = r.entries.filter((e) => firstMessage(e) === 'What is the weather?');
    expect(weather.map((e) => [e.status, e.primary, e.kept ?? false])).toEqual([
      ['paired', 'identical', false],
      ['paired', 'identical', false],
    ]);
    const kept = r.entries.filter((e) => e.kept);
    expect(kept.map(firstMessage)).toEqual(['What do my notes say?']);
  });

  it('does not take an update run, which records only what is missing, for a record run', async () => {
    const tape = join(dir, 'update.tape');
    const old = join(dir, 'update.old.tape');
    await agent(tape, [steps('notes v1')], 'base');
    copyFileSync(tape, old);
    // The same agent, one step longer: update replays the two recorded steps and records the third.
    const longer = steps('notes v1');
    longer.push([...longer[1]!, { role: 'assistant', content: 'Your notes say v1.' }, { role: 'user', content: 'Thanks. Anything else?' }]);
    await agent(tape, [longer], 'text', { mode: 'update' });
    const { r } = await diff('update.tape', old, tape);
    expect(r.entries.filter((e) => e.kept)).toHaveLength(0);
    expect(r.entries.filter((e) => e.primary === 'identical')).toHaveLength(2);
    expect(r.entries.filter((e) => e.status === 'added')).toHaveLength(1);
  });

  it('many kept copies are summed up in one row of their own, not as recordings added', async () => {
    const tape = join(dir, 'long.tape');
    const old = join(dir, 'long.old.tape');
    // Six follow-up questions after the tool result: each a step whose request holds the result.
    const long = (notes: string): Msg[][] => {
      const [first, withResult] = steps(notes);
      return [first!, ...[1, 2, 3, 4, 5, 6].map((k): Msg[] => [...withResult!, { role: 'assistant', content: 'Noted.' }, { role: 'user', content: `Follow-up question ${k}?` }])];
    };
    await agent(tape, [long('notes v1')], 'base');
    copyFileSync(tape, old);
    await agent(tape, [long('notes v3')], 'text');
    const { r } = await diff('long.tape', old, tape);
    expect(r.entries.filter((e) => e.kept)).toHaveLength(6);
    expect(r.entries.filter((e) => e.primary === 'text' && e.requestChange.length > 0)).toHaveLength(6);
    const text = renderTerminal(r, { colour: false });
    expect(text).toContain('6 recordings kept from an earlier run (the latest record run did not make these requests again)');
    expect(text).not.toContain('recordings added');
  });

  // A partial re-record of a long loop: the old branch (the changed step and after) stays on the
  // new tape byte for byte beside the new branch. It was listed as added ("19 added") while the
  // new branch stood in its place; the same keys on both sides now pair first, as identical.
  it('after a partial re-record, the old branch pairs with itself as identical and nothing is said added', async () => {
    const tape = join(dir, 'branch.tape');
    const old = join(dir, 'branch.old.tape');
    const loop = (notes: string): Msg[][] => {
      const [first, withResult] = steps(notes);
      return [first!, ...[1, 2, 3, 4, 5, 6, 7].map((k): Msg[] => [...withResult!, { role: 'assistant', content: 'Noted.' }, { role: 'user', content: `Step ${k}?` }])];
    };
    await agent(tape, [loop('notes v1')], 'base');
    copyFileSync(tape, old);
    await agent(tape, [loop('notes v3')], 'text');
    const before = await values(old);
    const after = await values(tape);
    // The first step re-recorded (same key), the 7 later ones twice: kept and new.
    expect([before.length, after.length]).toEqual([8, 15]);
    const { r } = await diff('branch.tape', old, tape);
    expect(r.summary.added).toBe(0);
    expect(r.summary.removed).toBe(0);
    const kept = r.entries.filter((e) => e.kept);
    expect(kept).toHaveLength(7);
    for (const e of kept) expect([e.status, e.primary, e.old!.key === e.new!.key]).toEqual(['paired', 'identical', true]);
    // The new branch is compared with the old one, step for step: what the change did shows and fails.
    const changed = r.entries.filter((e) => e.requestChange.length > 0);
    expect(changed).toHaveLength(7);
    expect(new Set(changed.map((e) => e.old!.index))).toEqual(new Set(kept.map((e) => e.old!.index)));
    expect(r.summary.failing).toBe(7);
    const text = renderTerminal(r, { colour: false });
    expect(text).toMatch(/^tapedeck diff .*: 15 pairs \(7 text, 8 identical\), 0 added, 0 removed$/m);
    expect(text).toMatch(/^identical +branch\.tape .*7 recordings kept from an earlier run/m);
  });

  it('on a tape tests share, a record run of one test leaves the other tests recordings as they are', async () => {
    const tape = join(dir, 'shared.tape');
    const old = join(dir, 'shared.old.tape');
    // Two tests asking the same conversation (a shared fixture), recorded in one run each.
    await agent(tape, [steps('notes v1')], 'base', { test: 'a.test.ts > reads notes' });
    await agent(tape, [steps('notes v1')], 'base', { test: 'b.test.ts > reads notes too' });
    copyFileSync(tape, old);
    // Test a alone re-recorded: b's recordings are not stale.
    await agent(tape, [steps('notes v3')], 'text', { test: 'a.test.ts > reads notes' });
    const { r, testOf } = await diff('shared.tape', old, tape);
    const kept = r.entries.filter((e) => e.kept);
    expect(kept.map(testOf)).toEqual(['a.test.ts > reads notes']);
    const changed = r.entries.find((e) => e.status === 'paired' && e.requestChange.length > 0);
    expect(changed?.primary).toBe('text');
    expect(testOf(changed!)).toBe('a.test.ts > reads notes');
    // b's two recordings still pair with themselves.
    const b = r.entries.filter((e) => testOf(e) === 'b.test.ts > reads notes too');
    expect(b.map((e) => [e.status, e.primary, e.kept ?? false])).toEqual([
      ['paired', 'identical', false],
      ['paired', 'identical', false],
    ]);
  });
});
