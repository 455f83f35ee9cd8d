// Messages put in before the prompt (an agent that now starts with a planning turn) were reported
// as "message 1 (user) text differs", quoting the new message against the old prompt as if the
// prompt had been edited; messages taken out, likewise. A run of up to four messages put in or
// taken out together is now said as that, and the single-message cases read as before.
import { describe, expect, it } from 'vitest';
import { createMatcher, type Recording } from '../../src/match/index.ts';
import { errorOf } from '../helpers.ts';

const SYS = { role: 'system', content: 'You are a travel assistant.' };
const ASK = { role: 'user', content: 'What is the weather in Paris today?' };
const PLAN = { role: 'user', content: 'I am planning a trip.' };
const OK = { role: 'assistant', content: 'Great, where to?' };
const req = (messages: object[]) => ({ model: 'gpt-4o', messages });
const rec = (messages: object[]): Recording => ({ request: req(messages), response: { text: 'sunny' } });
const headline = (asked: object[], recorded: object[]) => errorOf(() => createMatcher({ mode: 'exact', recordings: [rec(recorded)] }).match(req(asked))).message.split('\n')[0]!;

describe('messages put in or taken out together', () => {
  it('two messages put in before the prompt are new, not an edited prompt', () => {
    const h = headline([SYS, PLAN, OK, ASK], [SYS, ASK]);
    expect(h).toContain('messages 1-2 (user, assistant) are new: the closest recording goes on without them');
    expect(h).not.toContain('text differs');
  });

  it('three messages taken out are missing from the request', () => {
    const h = headline([SYS, ASK], [SYS, PLAN, OK, PLAN, ASK]);
    expect(h).toContain('messages 1-3 of the closest recording (user, assistant, user) are missing from the request');
  });

  it('one message put in or taken out reads as before', () => {
    expect(headline([SYS, PLAN, ASK], [SYS, ASK])).toContain('message 1 (user) is new: the closest recording goes on without it');
    expect(headline([SYS, ASK], [SYS, OK, ASK])).toContain('message 1 of the closest recording (assistant) is missing from the request');
  });

  it('an edited prompt is still an edited prompt', () => {
    expect(headline([SYS, { role: 'user', content: 'What is the weather in Rome today?' }], [SYS, ASK])).toContain('message 1 (user) text differs');
  });
});
