// What a miss says changed in the list of a request, checked on two kinds of lists: a chat's
// messages and an embeddings request's inputs. Failed before: an embeddings input that changed
// was "message 1 (message) content differs" (inputs have no role), and two neighbours swapped
// were "message 1 is new: the closest recording goes on without it", in a chat too.
import { describe, expect, it } from 'vitest';
import { differencesOf } from '../../src/match/diagnose.ts';
import { requestKeys } from '../../src/match/matcher.ts';

const embed = (input: string[]) => requestKeys({ model: 'text-embedding-3-small', input }, { endpoint: { method: 'POST', url: '/v1/embeddings' } });
const chat = (turns: [string, string][]) => requestKeys({ model: 'gpt-4o', messages: turns.map(([role, content]) => ({ role, content })) });
const texts = (a: ReturnType<typeof requestKeys>, b: ReturnType<typeof requestKeys>) => differencesOf(a, b).map((d) => d.text);

describe('the differences of a list, worded for what the list holds', () => {
  const recorded = embed(['alpha text', 'beta text', 'gamma text']);

  it('embeddings: an input changed, left out, added or swapped is said of the inputs', () => {
    expect(texts(embed(['alpha text', 'beta text!', 'gamma text']), recorded)).toEqual(['input 1 content differs from the closest recording']);
    expect(texts(embed(['alpha text', 'gamma text']), recorded)).toEqual(['input 1 of the closest recording is missing from the request']);
    expect(texts(embed(['alpha text', 'delta text', 'beta text', 'gamma text']), recorded)).toEqual(['input 1 is new: the closest recording goes on without it']);
    expect(texts(embed(['alpha text', 'gamma text', 'beta text']), recorded)).toEqual(['inputs 1 and 2 are swapped: the closest recording has them in the other order']);
    expect(texts(embed(['alpha text', 'beta text']), recorded)).toEqual(['the request has 2 inputs, the closest recording 3']);
  });

  it('a chat: two messages swapped are said to be swapped, one put in is new', () => {
    const rec = chat([['user', 'a'], ['assistant', 'b'], ['user', 'c']]);
    expect(texts(chat([['user', 'a'], ['user', 'c'], ['assistant', 'b']]), rec)).toEqual(['messages 1 and 2 (user) are swapped: the closest recording has them in the other order']);
    expect(texts(chat([['user', 'a'], ['user', 'x'], ['assistant', 'b'], ['user', 'c']]), rec)).toEqual(['message 1 (user) is new: the closest recording goes on without it']);
  });
});
