// InvokeModelWithResponseStream answers of model families other than Anthropic: each `chunk`
// event carries the model's own stream event (base64 in `bytes`), and each family ends its stream
// its own way. A whole stream of any family is a whole answer (recorded); the same stream cut
// before its end is not.
import { describe, expect, it } from 'vitest';
import { complete } from '../../src/providers/bedrock-stream.ts';
import { encodeEventStreamMessage } from '../../src/providers/wire/aws-eventstream.ts';

const enc = new TextEncoder();
const CT = 'application/vnd.amazon.eventstream';
const METRICS = { 'amazon-bedrock-invocationMetrics': { inputTokenCount: 10, outputTokenCount: 3, invocationLatency: 50, firstByteLatency: 10 } };

/** One `chunk` event, as Bedrock frames a model's stream event. */
function chunk(event: object): Uint8Array {
  const b64 = Buffer.from(JSON.stringify(event)).toString('base64');
  return encodeEventStreamMessage({
    headers: [
      { name: ':event-type', type: 'string', value: 'chunk' },
      { name: ':content-type', type: 'string', value: 'application/json' },
      { name: ':message-type', type: 'string', value: 'event' },
    ],
    body: enc.encode(JSON.stringify({ bytes: b64 })),
  });
}

function bytes(events: object[]): Uint8Array {
  return Buffer.concat(events.map(chunk));
}

// Each family's stream as Bedrock sends it; its last event is the one that ends it.
const FAMILIES: Record<string, object[]> = {
  'Meta Llama': [
    { generation: 'Hello', prompt_token_count: 10, generation_token_count: 1, stop_reason: null },
    { generation: ' there', prompt_token_count: null, generation_token_count: 2, stop_reason: null },
    { generation: '', prompt_token_count: null, generation_token_count: 3, stop_reason: 'stop', ...METRICS },
  ],
  'Amazon Nova': [
    { messageStart: { role: 'assistant' } },
    { contentBlockDelta: { delta: { text: 'Hello' }, contentBlockIndex: 0 } },
    { contentBlockStop: { contentBlockIndex: 0 } },
    { messageStop: { stopReason: 'end_turn' } },
    { metadata: { usage: { inputTokens: 5, outputTokens: 4 }, metrics: {}, trace: {} }, ...METRICS },
  ],
  'Mistral (outputs)': [
    { outputs: [{ text: 'Hello', stop_reason: null }] },
    { outputs: [{ text: ' there', stop_reason: 'stop' }], ...METRICS },
  ],
  'Mistral (choices)': [
    { id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, stop_reason: null }] },
    { id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, message: { role: 'assistant', content: '' }, stop_reason: 'stop' }], ...METRICS },
  ],
  'Cohere Command': [
    { is_finished: false, event_type: 'text-generation', text: 'Hello' },
    { is_finished: true, event_type: 'stream-end', finish_reason: 'COMPLETE', ...METRICS },
  ],
  'Amazon Titan Text': [
    { outputText: 'Hello', index: 0, totalOutputTextTokenCount: 1, completionReason: null, inputTextTokenCount: 4 },
    { outputText: ' there', index: 0, totalOutputTextTokenCount: 2, completionReason: 'FINISH', inputTextTokenCount: null, ...METRICS },
  ],
  'DeepSeek': [
    { choices: [{ text: 'Hello', stop_reason: null }] },
    { choices: [{ text: '', stop_reason: 'stop' }], ...METRICS },
  ],
};

describe('InvokeModelWithResponseStream of every model family', () => {
  for (const [family, events] of Object.entries(FAMILIES)) {
    it(`${family}: the whole stream is a whole answer`, () => {
      expect(complete(bytes(events), CT)).toBe(true);
    });
    it(`${family}: the stream cut before its last event is not`, () => {
      expect(complete(bytes(events.slice(0, -1)), CT)).toBe(false);
    });
  }

  it('Anthropic: whole with message_stop, cut without', () => {
    const events = [
      { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 3, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } },
      { type: 'message_stop', ...METRICS },
    ];
    expect(complete(bytes(events), CT)).toBe(true);
    expect(complete(bytes(events.slice(0, -1)), CT)).toBe(false);
  });
});
