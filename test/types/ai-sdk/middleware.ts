// Checked by tsc (test/types/ai-sdk/tsconfig.json, run by test/types/ai-sdk-middleware.test.ts),
// never executed: the README's and docs/api.md's example, `wrapLanguageModel({ model,
// middleware: replayCacheMiddleware(cache) })`, compiles against the real `ai` package in a
// strict project, with no cast, for generateText and streamText alike.
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, wrapLanguageModel } from 'ai';
import { activeReplayCache, ReplayCache, replayCacheMiddleware } from '../../../src/store/index.ts';

export async function readmeExample(): Promise<string> {
  const openai = createOpenAI({ apiKey: 'sk-test-not-real' });
  const cache = await ReplayCache.open('tapes/ai.tape');
  const model = wrapLanguageModel({ model: openai.chat('gpt-4o-mini'), middleware: replayCacheMiddleware(cache) });
  const { text } = streamText({ model, prompt: 'Hi' });
  const generated = await generateText({ model, prompt: 'Hi' });
  // The function form, inside withReplayCache; and in a list of middlewares.
  const inner = wrapLanguageModel({ model: openai('gpt-4o-mini'), middleware: [replayCacheMiddleware(activeReplayCache)] });
  void inner;
  return `${await text} ${generated.text}`;
}
