// Tool results given to other calls than when recorded: the ids the user sent are renumbered in
// the key (call_0, call_1, ...), so the miss names each result's call by its tool and arguments.
// Failed before: the miss showed the renumbered ids ("call_0" vs "call_1"), which appear nowhere
// in the user's request.
import { describe, expect, it } from 'vitest';
import { differencesOf } from '../../src/match/diagnose.ts';
import { requestKeys } from '../../src/match/matcher.ts';

const assistant = { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_P', name: 'w', input: { city: 'Paris' } } }, { toolUse: { toolUseId: 'tooluse_R', name: 'w', input: { city: 'Rome' } } }] };
const converse = (results: [string, string][]) =>
  requestKeys(
    {
      messages: [{ role: 'user', content: [{ text: 'warmer?' }] }, assistant, { role: 'user', content: results.map(([id, t]) => ({ toolResult: { toolUseId: id, content: [{ text: t }] } })) }],
      toolConfig: { tools: [{ toolSpec: { name: 'w', inputSchema: { json: { type: 'object' } } } }] },
    },
    { endpoint: { method: 'POST', url: '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse' } },
  );

describe('tool results that answer other calls than recorded', () => {
  it('name the calls by tool and arguments, not by renumbered ids', () => {
    const [d] = differencesOf(converse([['tooluse_P', '30C'], ['tooluse_R', '20C']]), converse([['tooluse_R', '30C'], ['tooluse_P', '20C']]));
    expect(d!.text).toBe('message 2 (tool) tool result differs: it answers another call than in the closest recording');
    expect(d!.lines).toEqual(['  request:   w {"city":"Paris"}', '  recording: w {"city":"Rome"}']);
    expect(d!.lines.join('\n')).not.toContain('call_');
  });
});
