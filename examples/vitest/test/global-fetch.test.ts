// Code that takes no fetch option: tape.install() routes globalThis.fetch through the tape for
// this test (only the listed host; anything else is refused), and the test's end restores it.
import OpenAI from 'openai';
import { inject } from 'vitest';
import { expect, test } from 'llm-tapedeck/vitest';

/** Application code that builds its own client, deep inside, with the global fetch. */
async function summarize(text: string): Promise<string> {
  const client = new OpenAI({ baseURL: inject('openaiBaseURL'), apiKey: process.env.OPENAI_API_KEY ?? 'sk-replay', maxRetries: 0 });
  const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `Summarize: ${text}` }] });
  return r.choices[0]!.message.content ?? '';
}

test('app code on the global fetch', async ({ tape }) => {
  const host = new URL(inject('openaiBaseURL')).host;
  tape.install({ hosts: [host], blockNetwork: true });
  expect(await summarize('the fetch switch')).toContain('the fetch switch');
  await expect(fetch('http://example.invalid/')).rejects.toThrow(/network is blocked/);
});
