// `tapedeck mcp --help` shows the same MCP host configuration as docs/mcp.md: the package run
// with `npx -y` and an absolute tape path (a host starts the server outside the project, so a
// relative path lands wherever the host runs). Before, the help's example had a relative
// "tapes/fs.tape" and no `-y`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MCP_HELP } from '../../src/mcp/cli.ts';

const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'mcp.md'), 'utf8');

/** The `"args": [...]` array of a host configuration, as JSON, whitespace and line breaks aside. */
const argsOf = (text: string): string[] => {
  const m = /"args":\s*(\["-y",\s*"llm-tapedeck"[^\]]*\])/.exec(text);
  expect(m, 'an "args": ["-y", "llm-tapedeck", ...] array').not.toBeNull();
  return JSON.parse(m![1]!) as string[];
};

describe('tapedeck mcp --help', () => {
  it("shows docs/mcp.md's host configuration: npx -y llm-tapedeck, an absolute tape path", () => {
    const args = argsOf(MCP_HELP);
    expect(args).toEqual(argsOf(doc));
    expect(args[args.indexOf('--tape') + 1]).toMatch(/^\//);
    expect(MCP_HELP).toContain('"command": "npx"');
  });
});
