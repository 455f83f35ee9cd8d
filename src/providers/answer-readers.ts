/**
 * Each provider module's answer reader (see AnswerReader in ./provider.ts), by module name.
 * Kept apart from the module objects: replay never reads an answer (the stats, the drift report
 * and the conversation tree do), and a reader on a module object went wherever the module went,
 * into a page's bundle too, where it only took room. Read through ./index.ts's readAnswer, and
 * by the check of hand-written streams (src/proxy/written-shape.ts), which asks the route's own.
 */
import { readAnthropicAnswer } from './anthropic.ts';
import { readBedrockAnswer } from './bedrock.ts';
import { readGeminiAnswer } from './gemini.ts';
import { readOllamaAnswer } from './ollama.ts';
import { readOpenAIAnswer } from './openai.ts';
import type { AnswerReader } from './provider.ts';

/**
 * The readers, under the names of the modules whose answers they read.
 *
 * @example
 * ANSWER_READERS.anthropic?.({ type: 'message', content: [{ type: 'text', text: 'hi' }] }, {})?.texts // ['hi']
 */
export const ANSWER_READERS: Readonly<Record<string, AnswerReader>> = {
  gemini: (body) => readGeminiAnswer(body),
  bedrock: readBedrockAnswer,
  anthropic: (body) => readAnthropicAnswer(body),
  ollama: readOllamaAnswer,
  // Azure's answers are OpenAI's; a body met without an Azure route is OpenAI's to read. Its v1
  // paths are also Groq's (`/openai/v1/...`): an answer an OpenAI-compatible API's marks name
  // keeps that name.
  azure: (body, ctx) => (ctx.route?.provider.name === 'azure' ? readOpenAIAnswer(body, true) : undefined),
  openai: (body, ctx) => readOpenAIAnswer(body, ctx.route !== undefined),
};
