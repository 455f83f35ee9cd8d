// Every MCP server the docs start in process (`new StdioClientTransport({ ... })` in README.md and
// docs/*.md) starts under plain node, from a project that has the server installed: no npm
// script puts node_modules/.bin on the PATH there, so a bare bin name fails with ENOENT.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { tapeTransport } from '../../src/mcp/index.ts';

const root = join(import.meta.dirname, '..', '..');
const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

/** The server parameters of each `new StdioClientTransport({ ... })` in the docs, with where they are. */
function documentedServers(): { where: string; params: StdioServerParameters }[] {
  const out: { where: string; params: StdioServerParameters }[] = [];
  for (const file of docs) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const m of text.matchAll(/new StdioClientTransport\((\{[^()]*\})\)/g)) {
      const line = text.slice(0, m.index).split('\n').length;
      out.push({ where: `${file}:${line}`, params: new Function(`return (${m[1]})`)() as StdioServerParameters });
    }
  }
  return out;
}

describe('documented MCP servers start under plain node', () => {
  const servers = documentedServers();
  it('the docs have some', () => {
    expect(servers.length).toBeGreaterThan(0);
  });

  // One project for all: the servers the docs name, installed as npm would (package and bin).
  const project = mkdtempSync(join(tmpdir(), 'tapedeck-mcp-docs-'));
  mkdirSync(join(project, 'node_modules', '@modelcontextprotocol'), { recursive: true });
  mkdirSync(join(project, 'node_modules', '.bin'));
  for (const name of ['server-memory', 'server-filesystem', 'server-everything']) {
    symlinkSync(join(root, 'node_modules', '@modelcontextprotocol', name), join(project, 'node_modules', '@modelcontextprotocol', name));
  }
  symlinkSync(join(root, 'node_modules', '.bin', 'mcp-server-memory'), join(project, 'node_modules', '.bin', 'mcp-server-memory'));
  // The PATH of a plain `node app.mjs`: no node_modules/.bin (vitest's npx run adds this repo's).
  afterAll(() => rmSync(project, { recursive: true, force: true }));
  const PATH = [dirname(process.execPath), ...(process.env.PATH ?? '').split(delimiter).filter((p) => !p.includes('node_modules'))].join(delimiter);

  it.each(servers.map((s) => [s.where, s.params] as const))('%s', async (_where, params) => {
    const dir = mkdtempSync(join(project, 'run-'));
    try {
      const transport = tapeTransport(() => new StdioClientTransport({ ...params, cwd: project, env: { PATH, HOME: process.env.HOME ?? dir, npm_config_offline: 'true' }, stderr: 'ignore' }), {
        tape: join(dir, 'server.tape'),
        mode: 'record',
      });
      const client = new Client({ name: 'docs', version: '1' });
      await client.connect(transport);
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      await client.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
