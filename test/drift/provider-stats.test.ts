// `tapedeck stats` over a tape of every provider's recordings: each provider's calls are counted
// under its own name (OpenAI-compatible APIs under theirs) with the tokens its answers report,
// read by its provider module, plain or streamed in its own framing.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPrices, PRICES_DATE } from '../../src/drift/prices.ts';
import { tapeStats } from '../../src/drift/stats.ts';
import { CALLS, recordEveryProvider, TOKENS } from './provider-answers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-provider-stats-'));
const tape = join(dir, 'every.tape');
let records: unknown[] = [];
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(async () => {
  records = await recordEveryProvider(tape);
}, 60_000);

/** What each provider's rows must add up to: its calls times its tokens per call. */
function expected(): Record<string, { calls: number; tokensIn: number; tokensOut: number; withoutUsage: number }> {
  const out: Record<string, { calls: number; tokensIn: number; tokensOut: number; withoutUsage: number }> = {};
  for (const c of CALLS) {
    const e = (out[c.provider] ??= { calls: 0, tokensIn: 0, tokensOut: 0, withoutUsage: 0 });
    e.calls++;
    e.tokensIn += TOKENS[c.provider][0];
    e.tokensOut += TOKENS[c.provider][1];
  }
  return out;
}

function byProvider(rows: { provider: string; calls: number; tokensIn: number; tokensOut: number; withoutUsage: number }[]) {
  const out: Record<string, { calls: number; tokensIn: number; tokensOut: number; withoutUsage: number }> = {};
  for (const r of rows) {
    const e = (out[r.provider] ??= { calls: 0, tokensIn: 0, tokensOut: 0, withoutUsage: 0 });
    e.calls += r.calls;
    e.tokensIn += r.tokensIn;
    e.tokensOut += r.tokensOut;
    e.withoutUsage += r.withoutUsage;
  }
  return out;
}

describe('stats of every provider', () => {
  it('counts each provider under its own name with the tokens its answers report', () => {
    expect(records).toHaveLength(CALLS.length);
    const s = tapeStats([{ name: 'every.tape', records }], loadPrices(undefined));
    expect(byProvider(s.rows)).toEqual(expected());
    expect(s.total.withoutUsage).toBe(0);
  });

  it('names the model the URL or the answer gives: Bedrock by its URL, Gemini by modelVersion', () => {
    const s = tapeStats([{ name: 'every.tape', records }], loadPrices(undefined));
    const models = (p: string) => s.rows.filter((r) => r.provider === p).map((r) => r.model);
    expect(models('bedrock').sort()).toEqual(['amazon.nova-lite-v1:0', 'anthropic.claude-3-5-haiku-20241022-v1:0', 'meta.llama3-8b-instruct-v1:0']);
    expect(models('gemini')).toEqual(['gemini-2.5-flash']);
    expect(models('ollama')).toEqual(['llama3.2']);
  });

  it('the CLI says the same, and prices Gemini from the table', () => {
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '../../dist/cli.js'), 'stats', tape, '--format', 'json'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const s = JSON.parse(r.stdout) as { rows: { provider: string; model: string; calls: number; tokensIn: number; tokensOut: number; withoutUsage: number; cost: number | null }[] };
    expect(byProvider(s.rows)).toEqual(expected());
    const gem = s.rows.find((x) => x.provider === 'gemini')!;
    const price = loadPrices(undefined)['gemini-2.5-flash']!;
    expect(gem.cost).toBeCloseTo((gem.tokensIn * price.input + gem.tokensOut * price.output) / 1e6, 12);
  });

  it('the help says the price table\'s date and how to pass newer prices', () => {
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '../../dist/cli.js'), 'stats', '--help'], { encoding: 'utf8' });
    expect(r.stdout).toContain(`table of ${PRICES_DATE}`);
    expect(r.stdout).toMatch(/--prices FILE with newer ones/);
  });
});
