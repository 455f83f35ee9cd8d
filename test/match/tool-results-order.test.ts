// An agent loop of one's own that adds each parallel tool call's result as it finishes
// (`Promise.all(calls.map(async (c) => messages.push(await run(c))))`) orders the results by the
// tools' latency, so a replay misses on some runs only. The miss said the two results were
// swapped but not why that happens nor what to do; it now says to add them in the calls' order.
import { describe, expect, it } from 'vitest';
import { differencesOf } from '../../src/match/diagnose.ts';
import { requestKeys } from '../../src/match/matcher.ts';

const calls = [
  { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
  { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Tokyo"}' } },
];
const chat = (results: [string, string][]) =>
  requestKeys({
    model: 'gpt-4o',
    messages: [
      { role: 'user', content: 'Weather in Paris and Tokyo?' },
      { role: 'assistant', content: null, tool_calls: calls },
      ...results.map(([id, content]) => ({ role: 'tool', tool_call_id: id, content })),
    ],
  });

describe('parallel tool results in another order than recorded', () => {
  it('says to add the results in the order of the calls', () => {
    const recorded = chat([['call_a', 'Paris: sunny'], ['call_b', 'Tokyo: rain']]);
    const texts = differencesOf(chat([['call_b', 'Tokyo: rain'], ['call_a', 'Paris: sunny']]), recorded).map((d) => d.text);
    expect(texts).toEqual(['messages 2 and 3 (tool) are swapped: the closest recording has them in the other order (results of parallel tool calls: add them in the order of the calls, not as each one finishes)']);
  });
});
