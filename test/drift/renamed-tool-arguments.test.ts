// A tool call renamed whose arguments changed as well: both are said.
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/drift/render-markdown.ts';
import { chatCall, chatCompletion, driftOf } from './hand-answers.ts';

const call = (name: string, args: object) => ({ content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }] });

describe('tapedeck diff and a renamed tool call', () => {
  it('get_weather {city, units} -> get_forecast {city}: the rename and the removed argument', async () => {
    const r = await driftOf(
      [chatCall('Weather in Paris?')],
      [{ body: chatCompletion({}, call('get_weather', { city: 'Paris', units: 'metric' })) }],
      [{ body: chatCompletion({}, call('get_forecast', { city: 'Paris' })) }],
    );
    const e = r.entries[0]!;
    expect(e.classes).toEqual(['tool-calls']);
    const t = e.details.toolCalls![0]!;
    expect(t.change).toBe('renamed');
    expect(t.changes).toEqual([{ path: 'units', kind: 'removed', old: 'metric' }]);
    expect(e.summary).toContain('get_weather renamed get_forecast');
    expect(e.summary).toContain('units');
    expect(renderMarkdown(r)).toContain('`units` removed');
  });

  it('a rename with the same arguments says only the rename', async () => {
    const r = await driftOf([chatCall('Weather in Paris?')], [{ body: chatCompletion({}, call('get_weather', { city: 'Paris' })) }], [{ body: chatCompletion({}, call('get_forecast', { city: 'Paris' })) }]);
    const t = r.entries[0]!.details.toolCalls![0]!;
    expect(t.changes).toBeUndefined();
    expect(r.entries[0]!.summary).toBe('get_weather renamed get_forecast');
  });
});
