// `tapedeck stats` on a tape recorded through createFetch with the real SDKs: the fake provider
// reports 20 input and 12 output tokens per LLM call, so every figure is known in advance.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, priceOf, PRICES_DATE } from '../../src/drift/prices.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { CALLS, recordVariant } from './record.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-stats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });

beforeAll(async () => {
  mkdirSync(join(dir, 'tapes', 'sub'), { recursive: true });
  await recordVariant(join(dir, 'tapes', 'a.tape'), 'base');
  copyFileSync(join(dir, 'tapes', 'a.tape'), join(dir, 'tapes', 'sub', 'b.tape'));
}, 60_000);

describe('tapedeck stats', () => {
  it('counts calls and tokens per provider and model, prices them, and sums the recorded time', async () => {
    const r = cli('stats', 'tapes/a.tape', '--format', 'json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.version).toBe(1);
    expect(s.pricesDate).toBe(PRICES_DATE);
    const openaiCalls = CALLS.filter((c) => c.shape.startsWith('openai')).length;
    const anthropicCalls = CALLS.filter((c) => c.shape === 'anthropic').length;
    const rows = s.rows.map((x: Record<string, unknown>) => ({ provider: x.provider, model: x.model, calls: x.calls, tokensIn: x.tokensIn, tokensOut: x.tokensOut, cost: x.cost }));
    expect(rows).toEqual([
      { provider: 'anthropic', model: 'claude-sonnet-4-5-20250929', calls: anthropicCalls, tokensIn: 20 * anthropicCalls, tokensOut: 12 * anthropicCalls, cost: expect.closeTo((20 * anthropicCalls * 3 + 12 * anthropicCalls * 15) / 1e6, 12) },
      { provider: 'openai', model: 'gpt-4o-mini-2024-07-18', calls: openaiCalls, tokensIn: 20 * openaiCalls, tokensOut: 12 * openaiCalls, cost: expect.closeTo((20 * openaiCalls * 0.15 + 12 * openaiCalls * 0.6) / 1e6, 12) },
      { provider: 'other', model: '-', calls: 1, tokensIn: 0, tokensOut: 0, cost: 0 },
    ]);
    const durations = (await readTape(join(dir, 'tapes', 'a.tape'))).records.map((x) => (x.value as { durationMs: number }).durationMs);
    expect(s.total.recordedMs).toBeCloseTo(durations.reduce((a, b) => a + b, 0), 6);
    expect(s.total.withoutUsage).toBe(1);
    expect(s.unpriced).toEqual([]);
  });

  it('a folder counts every tape below it; the table says what the prices are', () => {
    const s = JSON.parse(cli('stats', 'tapes', '--format', 'json').stdout);
    expect(s.tapes).toBe(2);
    expect(s.total.calls).toBe(2 * CALLS.length);
    const t = cli('stats', 'tapes');
    expect(t.status).toBe(0);
    expect(t.stdout).toMatch(/^2 tapes, 26 recorded calls\n/);
    expect(t.stdout).toMatch(/\nPROVIDER +MODEL +CALLS +ERRORS +TOKENS IN /);
    expect(t.stdout).toMatch(/\nanthropic +claude-sonnet-4-5-20250929 +8 +0 +160 +96 +\$0\.0019 /);
    expect(t.stdout).toContain(`list prices per million tokens of ${PRICES_DATE}`);
  });

  it("error answers count under their route's provider and model, and the table shows them", () => {
    // A recorded 429 and 500: no provider module reads an error body, yet they are OpenAI's and
    // Anthropic's calls (they were under "other", and the table had no errors column).
    writeFileSync(join(dir, 'errors.json'), JSON.stringify([
      { request: { url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } }, response: { status: 429, body: { error: { message: 'Rate limit reached', type: 'rate_limit_error' } } } },
      { request: { url: 'https://api.anthropic.com/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } }, response: { status: 500, body: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } } },
    ]));
    const add = cli('add', 'errors.tape', 'errors.json');
    expect(add.status, add.stderr).toBe(0);
    const s = JSON.parse(cli('stats', 'errors.tape', '--format', 'json').stdout);
    expect(s.rows.map((x: Record<string, unknown>) => [x.provider, x.model, x.calls, x.errors])).toEqual([
      ['anthropic', 'claude-sonnet-4-5', 1, 1],
      ['openai', 'gpt-4o-mini', 1, 1],
    ]);
    const t = cli('stats', 'errors.tape');
    expect(t.stdout).toMatch(/\nopenai +gpt-4o-mini +1 +1 +0 +0 /);
    expect(t.stdout).toMatch(/\ntotal +2 +2 +0 +0 /);
  });

  it('--prices overrides the defaults; a model without a price is named and left out', () => {
    writeFileSync(join(dir, 'prices.json'), JSON.stringify({ 'claude-sonnet-4-5': { input: 1, output: 2 }, 'gpt-4o-mini': { input: 0, output: 0 } }));
    const s = JSON.parse(cli('stats', 'tapes/a.tape', '--prices', 'prices.json', '--format', 'json').stdout);
    expect(s.rows[0].cost).toBeCloseTo((80 * 1 + 48 * 2) / 1e6, 12);
    expect(s.rows[1].cost).toBe(0);
    expect(priceOf('claude-sonnet-4-5-20250929', DEFAULT_PRICES)).toEqual({ input: 3, output: 15 });
    expect(priceOf('gpt-4o-mini-2024-07-18', DEFAULT_PRICES)).toEqual({ input: 0.15, output: 0.6 });
    expect(priceOf('gpt-4o-2024-08-06', DEFAULT_PRICES)).toEqual({ input: 2.5, output: 10 });
    expect(priceOf('llama-3', DEFAULT_PRICES)).toBeUndefined();
  });

  it('bad input: exit 2, one line and a hint naming the flag', () => {
    writeFileSync(join(dir, 'bad-prices.json'), JSON.stringify({ 'gpt-4o': { input: 'cheap' } }));
    for (const [args, code] of [
      [['stats', 'tapes', '--prices', 'bad-prices.json'], 'E_PRICES'],
      [['stats', 'tapes', '--prices', 'missing.json'], 'E_FILE'],
      [['stats'], 'E_USAGE'],
      [['stats', 'nope.tape'], 'E_FILE'],
      [['stats', 'tapes', '--format', 'csv'], 'E_ARG'],
    ] as const) {
      const r = cli(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(new RegExp(`^tapedeck: ${code} [^\\n]+\\nhint: [^\\n]+\\n$`));
    }
  });
});
