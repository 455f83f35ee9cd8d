// Records calls made with the real OpenAI and Anthropic SDKs through createFetch, against a fake
// provider that answers each call with the JSON body (and status) the test gives: two such tapes
// differ in exactly what the test changed, and the drift report of the pair says how.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { driftReport, type DriftReport } from '../../src/drift/report.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';

/** What the fake provider answers to one call. */
export interface Answered {
  status?: number;
  body: unknown;
}

/** One call the application makes, with the SDK of its provider. */
export type Call = { sdk: 'openai'; body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming } | { sdk: 'anthropic'; body: Anthropic.MessageCreateParamsNonStreaming };

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-drift-hand-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** Records `calls` answered in turn by `answers`; the tape's records. */
export async function recordAnswers(calls: readonly Call[], answers: readonly Answered[]): Promise<unknown[]> {
  const tape = join(dir, `t${n++}.tape`);
  let i = 0;
  const upstream = (async () => {
    const a = answers[i++]!;
    return new Response(JSON.stringify(a.body), { status: a.status ?? 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const rec = createFetch({ tape, mode: 'record', recordErrors: true, fetch: upstream, onWarning: () => {} });
  const openai = new OpenAI({ baseURL: 'https://api.openai.com/v1', apiKey: 'sk-test', maxRetries: 0, fetch: rec });
  const anthropic = new Anthropic({ baseURL: 'https://api.anthropic.com', apiKey: 'sk-ant-test', maxRetries: 0, fetch: rec });
  try {
    for (const c of calls) {
      try {
        if (c.sdk === 'openai') await openai.chat.completions.create(c.body);
        else await anthropic.messages.create(c.body);
      } catch {
        // an error answer: the tape has it
      }
    }
  } finally {
    await rec.close();
  }
  return (await readTape(tape)).records.map((x) => x.value);
}

/** The drift report of the same calls answered first by `before`, then by `after`. */
export async function driftOf(calls: readonly Call[], before: readonly Answered[], after: readonly Answered[], opts: Parameters<typeof driftReport>[3] = {}): Promise<DriftReport> {
  const a = await recordAnswers(calls, before);
  const b = await recordAnswers(calls, after);
  return driftReport([{ name: 'app.tape', records: a }], [{ name: 'app.tape', records: b }], { old: 'old', new: 'new' }, opts);
}

/** A chat completion as OpenAI answers it; `over` replaces or adds members. */
export function chatCompletion(over: Record<string, unknown> = {}, message: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1767225600,
    model: 'gpt-4o-mini-2024-07-18',
    choices: [{ index: 0, message: { role: 'assistant', content: 'The capital of France is Paris.', refusal: null, ...message }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 },
    ...over,
  };
}

export const chatCall = (content = 'What is the capital of France?'): Call => ({ sdk: 'openai', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] } });
