// A miss on an option that is an object (Gemini's generationConfig, Bedrock's inferenceConfig,
// OpenAI's response_format) or on a tool definition names the member that changed and both of
// its values, as a flat option's miss does. Failed before: the miss named only the container
// ("arguments differ from the closest recording: generationConfig", "tool definition of
// get_weather differs"), and a user whose SDK builds that object never learnt what changed.
import { describe, expect, it } from 'vitest';
import { differencesOf } from '../../src/match/diagnose.ts';
import { requestKeys } from '../../src/match/matcher.ts';

const texts = (a: ReturnType<typeof requestKeys>, b: ReturnType<typeof requestKeys>) => differencesOf(a, b).map((d) => d.text);

const gemini = (generationConfig: unknown) =>
  requestKeys({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig }, { endpoint: { method: 'POST', url: '/v1beta/models/gemini-2.0-flash:generateContent' } });
const converse = (inferenceConfig: unknown) =>
  requestKeys({ messages: [{ role: 'user', content: [{ text: 'hi' }] }], inferenceConfig }, { endpoint: { method: 'POST', url: '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse' } });
const openai = (extra: Record<string, unknown>) => requestKeys({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...extra });
const weather = (fn: Record<string, unknown>) => [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, ...fn } }];

describe('a miss inside an option object names the member and its values', () => {
  it('Gemini generationConfig: the member that changed, with both values', () => {
    expect(texts(gemini({ maxOutputTokens: 100, thinkingConfig: { thinkingBudget: 512 } }), gemini({ maxOutputTokens: 100, thinkingConfig: { thinkingBudget: 128 } }))).toEqual([
      'argument generationConfig.thinkingConfig.thinkingBudget differs: 512 vs 128 in the closest recording',
    ]);
    expect(texts(gemini({ maxOutputTokens: 100, topK: 3 }), gemini({ topK: 3 }))).toEqual(['argument generationConfig.maxOutputTokens differs: 100 vs (absent) in the closest recording']);
  });

  it('Bedrock inferenceConfig: the member that changed, with both values', () => {
    expect(texts(converse({ maxTokens: 200, temperature: 0 }), converse({ maxTokens: 100, temperature: 0 }))).toEqual(['argument inferenceConfig.maxTokens differs: 200 vs 100 in the closest recording']);
  });

  it('OpenAI response_format: the json_schema member that changed', () => {
    const format = (name: string, props: Record<string, unknown>) => ({ response_format: { type: 'json_schema', json_schema: { name, schema: { type: 'object', properties: props } } } });
    expect(texts(openai(format('person', {})), openai(format('contact', {})))).toEqual(['argument response_format.json_schema.name differs: person vs contact in the closest recording']);
    expect(texts(openai(format('p', { name: { type: 'string' }, email: { type: 'string' } })), openai(format('p', { name: { type: 'string' } })))).toEqual([
      'argument response_format.json_schema.schema.properties.email differs: {"type":"string"} vs (absent) in the closest recording',
    ]);
  });

  it('a tool definition: the member of the tool that changed, with both values', () => {
    expect(texts(openai({ tools: weather({}) }), openai({ tools: weather({ strict: true }) }))).toEqual(['tool definition of get_weather differs at strict: (absent) vs true in the closest recording']);
    const unit = weather({ parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } } } });
    expect(texts(openai({ tools: unit }), openai({ tools: weather({}) }))).toEqual([
      'tool definition of get_weather differs at parameters.properties.unit: {"type":"string"} vs (absent) in the closest recording',
    ]);
  });
});
