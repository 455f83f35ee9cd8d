// findOrCreate of a request whose whole conversation is recorded, with answers there for other
// requests only (another model, other options): a miss, rightly, since an answer is served only
// to its own request. It said nothing of why, though the tree knows: an eval looking its sweep's
// requests up in the tree saw `hit: false` at a node holding three answers. The miss's `note`
// now says what the answers there were recorded for.
import { describe, expect, it } from 'vitest';
import { ConversationTree } from '../../src/tree/index.ts';

const SYSTEM = { role: 'system', content: 'You are a precise calculator.' };
const USER = { role: 'user', content: 'What is 3*6?' };
const answer = (model: string, text: string) => ({ id: 'x', model, choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] });

function tree(): ConversationTree {
  return ConversationTree.fromRecords([
    { request: { model: 'gpt-4o-mini', temperature: 0, messages: [SYSTEM, USER] }, value: answer('gpt-4o-mini', '18') },
    { request: { model: 'gpt-4o-mini', temperature: 0.7, messages: [SYSTEM, USER] }, value: answer('gpt-4o-mini', 'Eighteen') },
    { request: { model: 'claude-3-5-haiku-latest', max_tokens: 200, temperature: 0, system: SYSTEM.content, messages: [USER] }, value: { id: 'm', type: 'message', role: 'assistant', model: 'claude-3-5-haiku-latest', content: [{ type: 'text', text: '18.' }], stop_reason: 'end_turn' } },
  ]);
}

describe('a miss where only other requests were answered', () => {
  it('names the models the answers there were recorded for, when the request asks another', () => {
    const r = tree().findOrCreate({ model: 'gpt-4.1', temperature: 0, messages: [SYSTEM, USER] });
    expect(r.hit).toBe(false);
    expect(r.matched).toBe(2);
    expect(r.note).toMatch(/3 answers recorded here are for other requests/);
    expect(r.note).toMatch(/model gpt-4\.1 has none: they were recorded for gpt-4o-mini, claude-3-5-haiku-latest/);
  });

  it('says the options differ, when the model has answers there', () => {
    const r = tree().findOrCreate({ model: 'gpt-4o-mini', temperature: 0, max_tokens: 50, messages: [SYSTEM, USER] });
    expect(r.hit).toBe(false);
    expect(r.note).toMatch(/gpt-4o-mini has answers here for other tools or options/);
  });

  it('says nothing on a hit, or where the conversation was never recorded', () => {
    const t = tree();
    expect(t.findOrCreate({ model: 'gpt-4o-mini', temperature: 0, messages: [SYSTEM, USER] }).note).toBeUndefined();
    expect(t.findOrCreate({ model: 'gpt-4o-mini', temperature: 0, messages: [SYSTEM, { role: 'user', content: 'What is 4*7?' }] }).note).toBeUndefined();
  });
});
