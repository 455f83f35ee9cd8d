// The vitest fixture's tape.mcp(), run by vitest itself in a copy of examples/vitest: recorded
// outside CI, replayed in CI with the server command replaced by one that fails if run, and a
// changed tool argument in CI fails the test with the command that records it.
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleProject, repo, summaryLine, type ExampleProject } from '../vitest/example-project.ts';
import { MEMORY } from './helpers.ts';

const agentTest = `
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect, test } from 'llm-tapedeck/vitest';

test('remembers a person', async ({ tape }) => {
  const [command, ...args] = JSON.parse(process.env.MCP_SERVER!);
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(tape.mcp(() => new StdioClientTransport({ command, args, env: { ...process.env, MEMORY_FILE_PATH: process.env.MEMORY_FILE! }, stderr: 'ignore' })));
  try {
    const who = process.env.WHO!;
    const r = await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: who, entityType: 'person', observations: ['met'] }] } });
    expect(JSON.stringify(r)).toContain(who);
  } finally {
    await client.close();
  }
});
`;

// An agent whose plan changed: it recorded two tool calls (PLAN=both), and now makes one.
const planTest = `
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect, test } from 'llm-tapedeck/vitest';

test('follows its plan', async ({ tape }) => {
  const [command, ...args] = JSON.parse(process.env.MCP_SERVER!);
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(tape.mcp(() => new StdioClientTransport({ command, args, env: { ...process.env, MEMORY_FILE_PATH: process.env.MEMORY_FILE! }, stderr: 'ignore' })));
  try {
    if (process.env.PLAN === 'both') await client.callTool({ name: 'create_entities', arguments: { entities: [{ name: 'Ada', entityType: 'person', observations: ['met'] }] } });
    expect(JSON.stringify(await client.callTool({ name: 'read_graph', arguments: {} }))).toContain('entities');
  } finally {
    await client.close();
  }
});
`;

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject({ 'test/agent-mcp.test.ts': agentTest, 'test/agent-plan.test.ts': planTest });
  mkdirSync(join(p.dir, 'node_modules', '@modelcontextprotocol'), { recursive: true });
  symlinkSync(join(repo, 'node_modules', '@modelcontextprotocol', 'sdk'), join(p.dir, 'node_modules', '@modelcontextprotocol', 'sdk'));
});
afterAll(() => p?.close());

describe('the vitest fixture with an MCP server', () => {
  it('records outside CI, replays in CI without the server, and a changed argument fails with its record command', async () => {
    const env = (who: string, server: string[]) => ({ WHO: who, MCP_SERVER: JSON.stringify(server), MEMORY_FILE: join(p.dir, 'memory.jsonl') });
    const first = await p.vitest(['test/agent-mcp.test.ts'], env('Ada', ['node', MEMORY]));
    expect(first.code, first.out).toBe(0);
    const tape = join(p.tapes, 'agent-mcp.test', 'remembers-a-person.mcp.tape');
    expect(existsSync(tape), p.listTapes().join(', ')).toBe(true);

    const fails = ['node', '-e', 'process.exit(9)'];
    const ci = await p.vitest(['test/agent-mcp.test.ts'], { CI: 'true', ...env('Ada', fails) });
    expect(ci.code, ci.out).toBe(0);

    const changed = await p.vitest(['test/agent-mcp.test.ts'], { CI: 'true', ...env('Grace', fails) });
    expect(changed.code).not.toBe(0);
    expect(changed.out).toContain('tools/call create_entities: params.arguments.entities[0].name differs');
    expect(changed.out).toContain("TAPEDECK_MODE=update npx vitest run test/agent-mcp.test.ts -t '^remembers a person$'");
    // The run summary lists the miss like a fetch miss.
    expect(changed.out).toContain('remembers a person: MCP tools/call create_entities: params.arguments.entities[0].name differs');
  });

  it('the run summary names the MCP tape, and counts and prunes its unused recordings', async () => {
    const env = (plan: string, server: string[]) => ({ PLAN: plan, MCP_SERVER: JSON.stringify(server), MEMORY_FILE: join(p.dir, 'plan-memory.jsonl') });
    const tape = 'test/__tapes__/agent-plan.test/follows-its-plan.mcp.tape';
    const first = await p.vitest(['test/agent-plan.test.ts'], env('both', ['node', MEMORY]));
    expect(first.code, first.out).toBe(0);
    expect.soft(first.out).toMatch(new RegExp(`^  ${tape.replace(/\./g, '\\.')} \\(update\\): \\+\\d+ added$`, 'm'));
    expect.soft(first.out).not.toContain('follows-its-plan.tape');

    const fails = ['node', '-e', 'process.exit(9)'];
    const ci = await p.vitest(['test/agent-plan.test.ts'], { CI: 'true', ...env('one', fails) });
    expect(ci.code, ci.out).toBe(0);
    expect.soft(summaryLine(ci)).toMatch(/, 1 unused recording$/);
    expect.soft(ci.out).toContain(`  ${tape} (replay): 1 unused`);

    const prune = await p.vitest(['test/agent-plan.test.ts'], { CI: 'true', TAPEDECK_PRUNE: '1', ...env('one', fails) });
    expect(prune.code, prune.out).toBe(0);
    expect.soft(prune.out).toContain('tapedeck: pruned 1 unused recording(s).');
    const again = await p.vitest(['test/agent-plan.test.ts'], { CI: 'true', ...env('one', fails) });
    expect(again.code, again.out).toBe(0);
    expect.soft(summaryLine(again)).toMatch(/, 0 unused recordings$/);
  });
});
