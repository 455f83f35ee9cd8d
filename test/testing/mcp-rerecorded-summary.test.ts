// A record run of a test whose MCP calls are already on its `.mcp.tape` replaces their
// recordings: the run summary says them "re-recorded (replaced)", as it does the test's fetch
// and cache recordings, and says added only what is new. Before, the MCP transport's count went
// into the summary as "+N added" for every exchange, though the tape did not grow. Through
// openTestTape, the real MCP SDK client and server-memory, the run reports and the summary.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { formatSummary, readTapeReports, summarizeRun } from '../../src/testing/run-report.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { MEMORY, tmp } from '../mcp/helpers.ts';

/** One record run of the test: `names` entities created through tape.mcp(); the run's summary and close() report. */
async function recordRun(root: string, run: string, names: string[]) {
  const runDir = join(root, run);
  const t = openTestTape({ tape: join(root, 'remembers.tape'), test: 'remembers', file: 'agent.test.ts', root, env: { TAPEDECK_MODE: 'record' }, runDir });
  const client = new Client({ name: 'agent', version: '1.0.0' });
  let report;
  try {
    await client.connect(t.mcp(() => new StdioClientTransport({ command: 'node', args: [MEMORY], env: { ...process.env, MEMORY_FILE_PATH: join(root, `${run}.jsonl`) } as Record<string, string>, stderr: 'ignore' })));
    for (const name of names) await client.callTool({ name: 'create_entities', arguments: { entities: [{ name, entityType: 'person', observations: ['met'] }] } });
  } finally {
    await client.close().catch(() => {});
    report = await t.close();
  }
  return { summary: formatSummary(await summarizeRun(readTapeReports(runDir)), { root }), report };
}

describe('MCP exchanges recorded again in the run summary', { timeout: 60_000 }, () => {
  it('are said re-recorded (replaced), not added; only a new call is added', async () => {
    const root = tmp('mcp-rerecorded');
    const first = await recordRun(root, 'run-1', ['Ada']);
    const m = /remembers\.mcp\.tape \(record\): \+(\d+) added$/m.exec(first.summary);
    expect(m, first.summary).not.toBeNull();
    const exchanges = Number(m![1]);
    expect(exchanges).toBeGreaterThanOrEqual(2); // the handshake's exchanges and the tool call
    const onTape = (await readTape(join(root, 'remembers.mcp.tape'))).records.length;
    expect(onTape).toBe(exchanges);

    // The same calls again, and one more: the tape grows by one exchange only.
    const again = await recordRun(root, 'run-2', ['Ada', 'Grace']);
    expect((await readTape(join(root, 'remembers.mcp.tape'))).records.length).toBe(onTape + 1);
    expect(again.summary).toMatch(new RegExp(`remembers\\.mcp\\.tape \\(record\\): \\+1 added, ${exchanges} re-recorded \\(replaced\\)$`, 'm'));
    expect(again.summary).toMatch(/^tapedeck: .*, 1 recording added, \d+ re-recorded,/m);
    // close()'s report counts them with the test's tape, and says how many replaced one.
    expect(again.report.added).toBe(exchanges + 1);
    expect(again.report.rerecorded).toBe(exchanges);
  });
});
