// The OpenAI Agents SDK batches its trace uploads on a timer: a replay run makes one fewer than
// the run that recorded it as often as not. The run summary called the upload left over an unused
// recording ("stale candidate", with the prune command), run after run in turn. It no longer
// does when the test made trace uploads at all; other recordings left over still count.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { tmp } from '../mcp/helpers.ts';

const INGEST = 'https://api.openai.com/v1/traces/ingest';
const CHAT = 'https://api.openai.com/v1/chat/completions';
const upload = (run: string) => JSON.stringify({ data: [{ object: 'trace', id: `trace_${run}`, workflow_name: 'Agent workflow' }] });
const completion = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }] });
const live = (async (input: RequestInfo | URL) =>
  String(input).endsWith('/traces/ingest') ? new Response(null, { status: 204 }) : new Response(completion, { headers: { 'content-type': 'application/json' } })) as typeof fetch;

async function run(root: string, name: string, mode: string, uploads: string[], chats: number) {
  const runDir = join(root, name);
  const t = openTestTape({ tape: join(root, 'agent.tape'), test: 'agent', file: 'agent.test.ts', root, env: { TAPEDECK_MODE: mode }, runDir, fetch: live });
  try {
    for (let i = 0; i < chats; i++) {
      const r = await t.fetch(CHAT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }) });
      expect(r.status).toBe(200);
    }
    for (const u of uploads) expect((await t.fetch(INGEST, { method: 'POST', headers: { 'content-type': 'application/json' }, body: upload(u) })).status).toBe(204);
  } finally {
    await t.close();
  }
  return summarizeRun(readTapeReports(runDir));
}

describe('trace uploads left over in the run summary', () => {
  it('are not unused recordings when the run made fewer uploads; other recordings still are', async () => {
    const root = tmp('telemetry-unused');
    await run(root, 'rec', 'record', ['a', 'b', 'c'], 1);
    const fewer = await run(root, 'replay-1', 'replay', ['d'], 1);
    expect(fewer.unused).toBe(0);
    expect(fewer.misses).toEqual([]);
    // The chat recording no call asked for is still a stale candidate.
    const noChat = await run(root, 'replay-2', 'replay', ['e', 'f'], 0);
    expect(noChat.unused).toBe(1);
  });
});
