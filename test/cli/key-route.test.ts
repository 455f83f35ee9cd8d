// `tapedeck key --route`: Gemini and Bedrock name the model (and the operation) in the URL, not
// the body, so the key a tape holds for such a request is the body keyed with its route. Given
// the route (as `tapedeck inspect` lists it), the command prints that key; the same for an
// OpenAI-shaped body, which needs none.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { coreCommand } from '../../src/cli/core.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startGemini } from '../proxy/fake-gemini.ts';
import { startBedrock } from '../providers/fake-bedrock.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-key-route-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What `tapedeck key` prints for a body file, as lines, and its stderr. */
function keyOf(body: object, ...rest: unknown[]): { out: Record<string, string>; err: string } {
  const file = join(dir, `body-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(body));
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
  try {
    expect((coreCommand as (...a: unknown[]) => number)('key', file, undefined, ...rest)).toBe(0);
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  return { out: Object.fromEntries(out.trim().split('\n').map((l) => l.split('\t') as [string, string])), err };
}

/** Records one request through createFetch and returns the key its record was stored under. */
async function tapeKey(base: string, path: string, body: object): Promise<string> {
  const tape = join(dir, `t-${Math.random().toString(36).slice(2)}.tape`);
  const f = createFetch({ tape, mode: 'record', summary: () => {} });
  const r = await f(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k', authorization: 'Bearer ABSKfakebedrockapikey' }, body: JSON.stringify(body) });
  await r.arrayBuffer();
  await f.close();
  const records = (await readTape(tape)).records as { value: { key: string } }[];
  expect(records).toHaveLength(1);
  return records[0]!.value.key;
}

describe('tapedeck key --route', () => {
  it('prints the key a Gemini request is recorded under', async () => {
    const g = await startGemini();
    try {
      const body = { contents: [{ role: 'user', parts: [{ text: 'What is the capital of France?' }] }], generationConfig: { temperature: 0 } };
      const path = '/v1beta/models/gemini-2.5-flash:generateContent';
      const want = await tapeKey(g.url, path, body);
      const k = keyOf(body, `POST ${path}`);
      expect(k.out.provider).toBe('gemini');
      expect(k.out.key).toBe(want);
    } finally {
      await g.close();
    }
  });

  it('prints the key a Bedrock Converse request is recorded under', async () => {
    const b = await startBedrock();
    try {
      const body = { messages: [{ role: 'user', content: [{ text: 'What is the capital of France?' }] }], inferenceConfig: { maxTokens: 100 } };
      const path = '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse';
      const want = await tapeKey(b.url, path, body);
      const k = keyOf(body, `POST ${path}`);
      expect(k.out.provider).toBe('bedrock-converse');
      expect(k.out.key).toBe(want);
    } finally {
      await b.close();
    }
  });

  it('says, without a route, that a body naming no model is keyed with its URL', () => {
    const k = keyOf({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(k.err).toMatch(/--route/);
  });

  it('refuses a route that is not a method and a path, saying its form', () => {
    const file = join(dir, 'bad-route.json');
    writeFileSync(file, JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }));
    expect(() => coreCommand('key', file, undefined, 'gemini-2.5-flash')).toThrow(expect.objectContaining({ code: 'E_ARG', message: expect.stringContaining('--route') }));
  });
});
