// An empty list the answer now carries (no citations) adds no content: the structure says the
// member was added, and the text, word for word the same, is not said to have changed.
import { describe, expect, it } from 'vitest';
import { chatCall, chatCompletion, driftOf } from './hand-answers.ts';

describe('tapedeck diff and an added empty annotations list', () => {
  it('same text with annotations: [] added: structure only, no text similarity', async () => {
    const toolMessage = { content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] };
    const r = await driftOf(
      [chatCall(), chatCall('Weather in Paris?')],
      [{ body: chatCompletion() }, { body: chatCompletion({}, toolMessage) }],
      [{ body: chatCompletion({ service_tier: 'default' }, { annotations: [] }) }, { body: chatCompletion({ service_tier: 'default' }, { ...toolMessage, annotations: [] }) }],
    );
    for (const e of r.entries) {
      expect(e.classes).toEqual(['structure']);
      expect(e.details.structure).toEqual(['choices[0].message.annotations: added (array)']);
      expect(e.details.text).toBeUndefined();
      expect(e.summary).not.toContain('similar');
    }
  });
});
