// MCP on a tape several tests share (`per: 'file'`), run by vitest itself in a copy of
// examples/vitest against the real server-memory: three tests in a row each add a person and
// read the graph, so the same `read_graph` call answers each test differently (the graph grows).
// Replay, with a server command that fails if run, must give each test what record mode gave it,
// also a test run alone (`-t`). Before MCP records named their test, the test run alone got the
// first test's graph: a wrong answer served silently.
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTape } from '../../src/store/tape-file.ts';
import { exampleProject, repo, type ExampleProject } from '../vitest/example-project.ts';
import { FAILS_IF_RUN, MEMORY } from './helpers.ts';

const sharedFile = `
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { test as base } from 'vitest';
import { tapedeckFixtures } from 'llm-tapedeck/vitest';

const test = base.extend(tapedeckFixtures({ per: 'file' }));
for (const who of ['Ada', 'Grace', 'Hedy']) {
  test('adds ' + who, async ({ tape, task }) => {
    const [command, ...args] = JSON.parse(process.env.MCP_SERVER!);
    const client = new Client({ name: 'agent', version: '1.0.0' });
    await client.connect(tape.mcp(() => new StdioClientTransport({ command, args, env: { ...process.env, MEMORY_FILE_PATH: process.env.MEMORY_FILE! }, stderr: 'ignore' })));
    try {
      await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: who, entityType: 'person', observations: ['met'] }] } });
      const graph = await client.callTool({ name: 'read_graph', arguments: {} });
      const text = (graph.content as { text: string }[])[0].text;
      const names = (JSON.parse(text) as { entities: { name: string }[] }).entities.map((e) => e.name);
      appendFileSync(join(process.cwd(), 'graphs.jsonl'), JSON.stringify({ test: task.name, names }) + '\\n');
    } finally {
      await client.close();
    }
  });
}
`;

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/people.test.ts': sharedFile });
  mkdirSync(join(p.dir, 'node_modules', '@modelcontextprotocol'), { recursive: true });
  symlinkSync(join(repo, 'node_modules', '@modelcontextprotocol', 'sdk'), join(p.dir, 'node_modules', '@modelcontextprotocol', 'sdk'));
});
afterAll(() => p?.close());

/** What each test read of the graph in the run, by test (the file is removed for the next run). */
function graphs(): Record<string, string[]> {
  const file = join(p.dir, 'graphs.jsonl');
  if (!existsSync(file)) return {};
  const out: Record<string, string[]> = {};
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const { test, names } = JSON.parse(line) as { test: string; names: string[] };
    out[test] = names;
  }
  rmSync(file);
  return out;
}

describe('an MCP tape several tests share', { timeout: 180_000 }, () => {
  it('each test replays the answers record mode gave it, also run alone, without the server', async () => {
    const env = (server: string[]) => ({ MCP_SERVER: JSON.stringify(server), MEMORY_FILE: join(p.dir, 'memory.jsonl') });
    const record = await p.vitest(['test/people.test.ts'], { TAPEDECK_MODE: 'record', ...env(['node', MEMORY]) });
    expect(record.code, record.out).toBe(0);
    const recorded = graphs();
    // The oracle is sound: the same call answered each test differently.
    expect(recorded).toEqual({ 'adds Ada': ['Ada'], 'adds Grace': ['Ada', 'Grace'], 'adds Hedy': ['Ada', 'Grace', 'Hedy'] });

    const replay = await p.vitest(['test/people.test.ts'], { CI: 'true', ...env(FAILS_IF_RUN) });
    expect(replay.code, replay.out).toBe(0);
    expect(graphs()).toEqual(recorded);

    const alone = await p.vitest(['test/people.test.ts', '-t', 'adds Grace$'], { CI: 'true', ...env(FAILS_IF_RUN) });
    expect(alone.code, alone.out).toBe(0);
    expect(graphs()).toEqual({ 'adds Grace': ['Ada', 'Grace'] });

    // Each exchange names the test that made it.
    const tape = await readTape(join(p.tapes, 'people.test.mcp.tape'));
    const tests = new Set(tape.records.map((r) => (r.value as { test?: string }).test));
    expect([...tests].sort()).toEqual(['test/people.test.ts > adds Ada', 'test/people.test.ts > adds Grace', 'test/people.test.ts > adds Hedy']);
  });
});
