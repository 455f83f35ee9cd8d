// The OpenAI Agents SDK's trace uploads, routed through a tape, are recorded beside the model
// calls; how many a run makes follows the SDK's batching timer. `tapedeck stats` counted them as
// calls "that reported no token usage", and `tapedeck diff` said a run that made one fewer had
// "removed" a recording (which `--fail-on removed` fails). Stats now say them apart, uncounted,
// and diff leaves a difference in their number out; a tape that loses all of them still says so.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPrices } from '../../src/drift/prices.ts';
import { tapeStats } from '../../src/drift/stats.ts';
import { driftReport } from '../../src/drift/report.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-trace-uploads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const chat = {
  request: { url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] } },
  response: { body: { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }], usage: { prompt_tokens: 8, completion_tokens: 2, total_tokens: 10 } } },
};
const upload = (n: number) => ({ request: { url: 'https://api.openai.com/v1/traces/ingest', body: { data: [{ object: 'trace', id: `trace_${n}` }] } }, response: { status: 204 } });

async function tape(name: string, uploads: number) {
  const file = join(dir, name);
  await addRecordings({ tape: file }, [chat, ...Array.from({ length: uploads }, (_, i) => upload(i))]);
  return { name: 'agent.tape', records: (await readTape(file)).records.map((r) => r.value) };
}

describe('trace uploads in stats and diff', () => {
  it('stats: not calls, said apart', async () => {
    const s = tapeStats([await tape('stats.tape', 3)], loadPrices(undefined));
    expect(s.rows.map((r) => [r.provider, r.model, r.calls, r.withoutUsage])).toEqual([['openai', 'gpt-4o-mini', 1, 0]]);
    expect(s.total.withoutUsage).toBe(0);
    expect(s.notCounted).toEqual([{ kind: 'trace upload', records: 3 }]);
  });

  it('diff: one upload fewer is no removed recording; none left is', async () => {
    const before = await tape('before.tape', 3);
    const fewer = driftReport([before], [await tape('fewer.tape', 2)], { old: 'before', new: 'fewer' });
    expect(fewer.entries.filter((e) => e.status !== 'paired').map((e) => [e.status, e.route])).toEqual([]);
    expect(fewer.summary.removed).toBe(0);
    const none = driftReport([before], [await tape('none.tape', 0)], { old: 'before', new: 'none' });
    expect(none.summary.removed).toBe(3);
  });
});
