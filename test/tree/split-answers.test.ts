// A streamed answer sent back in pieces: @google/genai's chat keeps a streamed answer one `model`
// content per chunk and sends them all back in the next request; the tape holds the answer
// assembled. The follow-up must walk through the recorded answer (no branch beside it), and a run
// of assistant messages that joins into a different answer must stay a branch of its own.
import { GoogleGenAI } from '@google/genai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ConversationTree } from '../../src/tree/tree.ts';
import { formatTree } from '../../src/tree/format.ts';
import { loadTree } from '../../src/tree/load.ts';
import { joinSplitAnswers } from '../../src/tree/split-answers.ts';
import { startGemini } from '../proxy/fake-gemini.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-split-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const user = (text: string) => ({ role: 'user', parts: [{ text }] });
const model = (...texts: string[]) => ({ role: 'model', parts: texts.map((text) => ({ text })) });
const answer = (text: string) => ({ candidates: [{ content: model(text), finishReason: 'STOP', index: 0 }] });

describe('a Gemini chat after a streamed answer', () => {
  it('the follow-ups the SDK sent walk through the streamed answer: one unbranched conversation, each request found whole', async () => {
    const tape = join(dir, 'gemini-chat.tape');
    const fake = await startGemini();
    const rec = createFetch({ tape, mode: 'record', summary: false });
    try {
      const ai = new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: fake.url, fetch: rec } });
      const chat = ai.chats.create({ model: 'gemini-2.5-flash' });
      let streamed = '';
      for await (const c of await chat.sendMessageStream({ message: 'first streamed answer please' })) streamed += c.text ?? '';
      expect(streamed).toBe('Echo 1 from gemini-2.5-flash: first streamed answer please');
      expect((await chat.sendMessage({ message: 'second' })).text).toBe('Echo 2 from gemini-2.5-flash: second');
      expect((await chat.sendMessage({ message: 'third' })).text).toBe('Echo 3 from gemini-2.5-flash: third');
    } finally {
      await rec.close();
      await fake.close();
    }
    // The SDK sent the streamed answer back one content per chunk.
    const second = JSON.parse(fake.calls[1]!.body) as { contents: unknown[] };
    expect(second.contents.length).toBeGreaterThan(3);
    const { tree } = await loadTree(tape);
    expect(tree.warnings).toEqual([]);
    const s = tree.stats();
    expect(s.branchPoints).toBe(0);
    expect(s.exchanges).toBe(3);
    // user, model (streamed, joined), user, model, user, model
    expect(s.maxLength).toBe(6);
    expect(formatTree(tree)).toContain('#2 assistant Echo 1 from gemini-2.5-flash: first streamed answer please  ← answer');
    // The second request as sent finds its recording, through the streamed answer.
    const r = tree.findOrCreate(second, { normalize: { endpoint: { method: 'POST', url: new URL(fake.calls[1]!.url, 'http://x').pathname } } });
    expect(r.hit).toBe(true);
    expect(r.matched).toBe(3);
    expect(r.created).toBe(0);
  });
});

describe('joining runs of assistant messages', () => {
  const endpoint = { method: 'POST', url: '/v1beta/models/gemini-2.5-flash:generateContent' };
  const first = { request: { contents: [user('q')] }, value: answer('Hello there, friend'), endpoint };

  it('a run that joins into the recorded answer walks through it; one that joins into another text stays a branch', () => {
    const same = { request: { contents: [user('q'), model('Hello '), model('there, '), model('friend'), user('next')] }, value: answer('ok'), endpoint };
    const other = { request: { contents: [user('q'), model('Hello '), model('there'), user('next')] }, value: answer('ok'), endpoint };
    const tree = ConversationTree.fromRecords([first, same]);
    expect(tree.stats().branchPoints).toBe(0);
    expect(tree.stats().maxLength).toBe(4);
    tree.record(other);
    // The different answer ("Hello there") is never merged into the recorded one: a branch.
    expect(tree.stats().branchPoints).toBe(1);
    const at = tree.byPathHash(tree.roots[0]!.pathHash)!;
    expect(at.children.map((c) => c.origin)).toEqual(['response', 'request']);
  });

  it('a body looked up with the answer in pieces finds the recording; a message list is hashed as given', () => {
    const tree = ConversationTree.fromRecords([first, { request: { contents: [user('q'), model('Hello there, friend'), user('next')] }, value: answer('ok'), endpoint }]);
    const pieces = { contents: [user('q'), model('Hello '), model('there, friend'), user('next')] };
    const r = tree.findOrCreate(pieces, { normalize: { endpoint } });
    expect(r.matched).toBe(3);
    expect(r.created).toBe(0);
    // A run of parts inside one content joins too (text parts are joined as the stream assembler joins them).
    expect(tree.find({ contents: [user('q'), model('Hello ', 'there,'), model(' friend'), user('next')] }, { normalize: { endpoint } }).matched).toBe(3);
    // A message list is the caller's own hashing: its messages are taken as given.
    const text = (role: string, t: string) => ({ role, content: [{ type: 'text', text: t }] });
    expect(tree.find([text('user', 'q'), text('assistant', 'Hello there, friend')]).matched).toBe(2);
    expect(tree.find([text('user', 'q'), text('assistant', 'Hello '), text('assistant', 'there, friend')]).matched).toBe(1);
  });

  it('joinSplitAnswers leaves runs with tool calls apart from text alone, and needs a recorded answer at that place', () => {
    const text = (t: string) => ({ role: 'assistant', content: [{ type: 'text', text: t }] });
    const q = { role: 'user', content: [{ type: 'text', text: 'q' }] };
    const none = { hasMessage: () => false, answerAt: () => undefined };
    expect(joinSplitAnswers([q, text('a'), text('b')], none)).toBeUndefined();
    const everywhere = { hasMessage: () => true, answerAt: () => null };
    expect(joinSplitAnswers([q, text('a'), text('b')], everywhere)).toEqual([q, text('ab')]);
    const withIds = { role: 'assistant', content: [{ type: 'text', text: 'b' }], tool_calls: [] };
    expect(joinSplitAnswers([q, text('a'), withIds], everywhere)).toBeUndefined();
  });
});
