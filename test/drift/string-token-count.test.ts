// A token count sent as a string is a change of type, and not a count of 0.
import { describe, expect, it } from 'vitest';
import { driftOf, type Call } from './hand-answers.ts';

const call: Call = { sdk: 'anthropic', body: { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Capital of France?' }] } };
const message = (inputTokens: unknown) => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5-20250929',
  content: [{ type: 'text', text: 'Paris.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: inputTokens, output_tokens: 5 },
});

describe('tapedeck diff and a token count of another type', () => {
  it('input_tokens "10" instead of 10: a structure line, and no usage claim of 0 tokens', async () => {
    const r = await driftOf([call], [{ body: message(10) }], [{ body: message('10') }]);
    const e = r.entries[0]!;
    expect(e.details.structure).toEqual(['usage.input_tokens: number -> string']);
    expect(e.details.usage).toBeUndefined();
    expect(e.summary).not.toMatch(/10 -> 0/);
    expect(e.classes).toEqual(['structure']);
  });
});
