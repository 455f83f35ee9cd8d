// A ReplayCache recording is served only to a request of the API it was made with: the chat
// completions and Responses forms of one conversation (and an OpenAI chat body and an Anthropic
// one alike in content and arguments) share a request key, and a cache has no route to tell
// them apart.
import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { requestKeys } from '../../src/match/matcher.ts';
import { otherShape } from '../../src/store/cache-shape.ts';
import { rejectionOf } from '../helpers.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('api-shape');
const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'What is 2+2?' }] };
const responses = { model: 'gpt-4o', input: [{ role: 'user', content: 'What is 2+2?' }] };
const chatAnswer = { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: '4' }, finish_reason: 'stop' }] };
const responsesAnswer = { object: 'response', output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '4' }] }] };

async function recorded(file: string, calls: [unknown, unknown][]): Promise<void> {
  const cache = await ReplayCache.open(file, { mode: 'record' });
  for (const [request, answer] of calls) {
    expect(await cache.get(request)).toBeUndefined();
    await cache.put(request, answer);
  }
  await cache.close();
}

describe('ReplayCache and the API a recording was made with', () => {
  it('the two forms share a key (what makes the check needed)', () => {
    expect(requestKeys(responses).key).toBe(requestKeys(chat).key);
    expect(requestKeys(responses).provider).toBe('openai-responses');
    expect(requestKeys(chat).provider).toBe('openai-chat');
  });

  it('a chat recording is not served to the same conversation sent to Responses: a miss that names both APIs', async () => {
    const file = fresh();
    await recorded(file, [[chat, chatAnswer]]);
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    const miss = await rejectionOf(cache.get(responses));
    expect(miss.code).toBe('E_MISS');
    expect(miss.message).toContain('recorded with another API (OpenAI chat completions), this request is OpenAI Responses');
    expect(miss.hint).toMatch(/record/);
    // The recording was not used up by the refused call: the chat request still gets it.
    expect(await cache.get(chat)).toEqual(chatAnswer);
    await cache.close();
  });

  it('update mode refuses too (its new recording would come after the old API one) and says to use record mode', async () => {
    const file = fresh();
    await recorded(file, [[chat, chatAnswer]]);
    const cache = await ReplayCache.open(file, { mode: 'update' });
    const miss = await rejectionOf(cache.get(responses));
    expect(miss.code).toBe('E_MISS');
    expect(miss.hint).toContain('record');
    expect(miss.hint).not.toContain('TAPEDECK_MODE=update');
    await cache.close();
  });

  it('re-recorded in record mode, the Responses request replays its own answer', async () => {
    const file = fresh();
    await recorded(file, [[chat, chatAnswer]]);
    await recorded(file, [[responses, responsesAnswer]]);
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    expect(await cache.get(responses)).toEqual(responsesAnswer);
    await cache.close();
  });

  it('both APIs in one run, in recorded order, each get their own answer', async () => {
    const file = fresh();
    await recorded(file, [
      [chat, chatAnswer],
      [responses, responsesAnswer],
    ]);
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    expect(await cache.get(chat)).toEqual(chatAnswer);
    expect(await cache.get(responses)).toEqual(responsesAnswer);
    await cache.close();
  });

  it('an Anthropic body and an OpenAI chat body with the same key are told apart', async () => {
    const anthropic = { model: 'm', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
    const openai = { model: 'm', max_tokens: 100, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] };
    expect(requestKeys(anthropic).provider).toBe('anthropic');
    expect(requestKeys(anthropic).key).toBe(requestKeys(openai).key);
    const file = fresh();
    await recorded(file, [[anthropic, { type: 'message', content: [{ type: 'text', text: 'hello' }] }]]);
    const cache = await ReplayCache.open(file, { mode: 'replay' });
    const miss = await rejectionOf(cache.get(openai));
    expect(miss.code).toBe('E_MISS');
    expect(miss.message).toContain('another API (Anthropic messages)');
    await cache.close();
  });

  it('otherShape: nothing to say when the shapes agree or the stored request reads as no shape', () => {
    expect(otherShape(chat, 'openai-chat')).toBeUndefined();
    expect(otherShape(chat, 'openai-responses')).toBe('openai-chat');
    expect(otherShape({ nothing: 1 }, 'openai-chat')).toBeUndefined();
    expect(otherShape('text', 'openai-chat')).toBeUndefined();
    // A generic body (LangChain messages as given, or their stored JSON) names no API.
    expect(otherShape({ model: 'm', messages: [{ lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'], kwargs: { content: 'hi' } }] }, 'openai-chat')).toBeUndefined();
    expect(otherShape(chat, 'generic')).toBeUndefined();
  });
});
