// The OpenAI-compatible APIs' extra members keyed as their table says (deciding ones split
// recordings, volatile ones do not), their reasoning text kept in assembled streams; Azure
// OpenAI's deployment as the model and api-version out of the route.
import { describe, expect, it } from 'vitest';
import { requestDigests, requestKeys } from '../../src/match/matcher.ts';
import { withoutApiVersion, azureRoute } from '../../src/providers/azure.ts';
import { assembleAnswer, recordingUrl } from '../../src/providers/index.ts';
import { COMPATIBLE_APIS, COMPATIBLE_VOLATILE_ARGS, REASONING_DELTAS } from '../../src/providers/openai-compatible.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const base = { model: 'some-model', messages: [{ role: 'user', content: 'Weather in Paris?' }] };
const chat = { method: 'POST', url: '/v1/chat/completions' };
const key = (body: unknown) => requestKeys(body, { endpoint: chat }).key;
const rawKey = (body: unknown) => requestDigests(new TextEncoder().encode(JSON.stringify(body)), { endpoint: chat }).key;

describe('OpenAI-compatible APIs', () => {
  for (const api of COMPATIBLE_APIS) {
    it(`${api.name}: deciding members split recordings, volatile ones do not (object and raw-bytes paths)`, () => {
      const k = key(base);
      for (const m of api.deciding) {
        expect(key({ ...base, [m]: 7 }), `${api.name} ${m}`).not.toBe(k);
        expect(rawKey({ ...base, [m]: 7 }), `${api.name} ${m} (raw)`).toBe(key({ ...base, [m]: 7 }));
      }
      for (const m of api.volatile) {
        expect(key({ ...base, [m]: 7 }), `${api.name} ${m}`).toBe(k);
        expect(rawKey({ ...base, [m]: 7 }), `${api.name} ${m} (raw)`).toBe(k);
      }
    });
  }

  it('docs/providers.md has the table row by row, and claims only answer members assembly keeps', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/providers.md'), 'utf8');
    const code = (xs: readonly string[]) => (xs.length ? xs.map((x) => `\`${x}\``).join(', ') : '—');
    for (const a of COMPATIBLE_APIS) {
      expect(doc, a.name).toContain(`| ${a.name} | \`${a.baseURL}\` | ${code(a.deciding)} | ${code(a.volatile)} | ${code(a.answer)} |`);
      for (const m of a.answer) expect(REASONING_DELTAS, `${a.name} ${m}`).toContain(m);
    }
  });

  it('no member is both deciding and volatile, in any two APIs', () => {
    const deciding = new Set(COMPATIBLE_APIS.flatMap((a) => a.deciding));
    expect(COMPATIBLE_VOLATILE_ARGS.filter((m) => deciding.has(m))).toEqual([]);
  });

  it('a streamed answer keeps its reasoning text (DeepSeek reasoning_content, OpenRouter reasoning)', () => {
    const ev = (delta: object, finish: string | null = null) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'deepseek-reasoner', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const sse = [ev({ role: 'assistant', content: '' }), ev({ reasoning_content: 'First ' }), ev({ reasoning_content: 'think.' }), ev({ reasoning: 'R' }), ev({ content: 'Answer' }), ev({}, 'stop'), 'data: [DONE]\n\n'].join('');
    const a = assembleAnswer(chat, 'text/event-stream', sse) as { choices: { message: Record<string, unknown> }[] };
    expect(a.choices[0]!.message).toEqual({ role: 'assistant', content: 'Answer', refusal: null, reasoning_content: 'First think.', reasoning: 'R' });
  });
});

describe('Azure OpenAI', () => {
  const url = (d: string, v = '2024-10-21') => `/openai/deployments/${d}/chat/completions?api-version=${v}`;
  const at = (u: string) => ({ endpoint: { method: 'POST', url: u } });

  it('the deployment is the model; the body model Azure ignores is not in the key', () => {
    const a = requestKeys({ ...base, model: 'gpt-4o' }, at(url('prod-4o')));
    expect(a.provider).toBe('azure-chat');
    expect(a.view.model).toBe('prod-4o');
    expect(requestKeys({ ...base, model: 'anything' }, at(url('prod-4o'))).key).toBe(a.key);
    expect(requestKeys(base, at(url('staging-4o'))).key).not.toBe(a.key);
    // The same body with the deployment as its model on OpenAI's path: the same key.
    expect(requestKeys({ ...base, model: 'prod-4o' }, at('/v1/chat/completions')).key).toBe(a.key);
    // A percent-encoded deployment name is the name.
    expect(requestKeys(base, at(url('prod%2D4o'))).key).toBe(a.key);
  });

  it('api-version is in neither the key nor the route; other query parameters stay', () => {
    expect(requestKeys(base, at(url('d', '2024-10-21'))).key).toBe(requestKeys(base, at(url('d', '2025-04-01-preview'))).key);
    expect(recordingUrl({ method: 'POST', url: url('d') })).toBe('/openai/deployments/d/chat/completions');
    expect(recordingUrl({ method: 'POST', url: '/openai/v1/chat/completions?api-version=preview&x=1' })).toBe('/openai/v1/chat/completions?x=1');
    expect(withoutApiVersion('/p?a=1&API-Version=2&b=3')).toBe('/p?a=1&b=3');
    // Not an Azure route: the URL as sent.
    expect(recordingUrl({ method: 'POST', url: '/v1/chat/completions?api-version=1' })).toBe('/v1/chat/completions?api-version=1');
  });

  it('embeddings on a deployment path key like OpenAI embeddings of the deployment', () => {
    const body = { model: 'x', input: ['a', 'b'] };
    const k = requestKeys(body, at('/openai/deployments/embed-small/embeddings?api-version=2024-10-21'));
    expect(k.provider).toBe('azure-embeddings');
    expect(k.key).toBe(requestKeys({ ...body, model: 'embed-small' }, { provider: 'openai-embeddings' }).key);
    expect(azureRoute('/openai/deployments/embed-small/embeddings')).toEqual({ operation: 'embeddings', deployment: 'embed-small' });
  });
});
