// The closest recording of a prompt edited in its last word: "Summarize this text!" is compared
// with "Summarize this text", not with "Summarize this". Failed before: both shared as many
// leading and trailing words, and the tie went to the recording made first.
import { describe, expect, it } from 'vitest';
import { createMatcher, type Recording } from '../../src/match/index.ts';
import { errorOf } from '../helpers.ts';

const req = (text: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content: text }] });
const rec = (text: string): Recording => ({ request: req(text), response: { text: `answer to ${text}` } });

describe('closest recording when the last word changed', () => {
  it.each([
    ['Summarize this text!', ['Summarize this', 'Summarize this text'], '"Summarize this text"'],
    ['proxy llama stream!', ['proxy llama', 'proxy llama stream'], '"proxy llama stream"'],
    ['Summarize this text!', ['Summarize this text', 'Summarize this'], '"Summarize this text"'],
  ])('%s against %j: the one a character away', (asked, recorded, closest) => {
    const m = createMatcher({ mode: 'exact', recordings: recorded.map(rec) });
    const e = errorOf(() => m.match(req(asked)));
    expect(e.message).toContain(`recording: ${closest}`);
  });
});
