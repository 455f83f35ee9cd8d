// Commands that work from anywhere: the package has a command named after it (`llm-tapedeck`), so
// `npx llm-tapedeck ...` runs this package in a project that has it and outside one (an MCP host's
// configuration), where `npx tapedeck` would fetch an unrelated package of that name. The docs
// use it wherever a command may run outside the project.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; version: string; bin: Record<string, string> };
const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

describe('the llm-tapedeck command', () => {
  it('is a bin beside tapedeck, the same CLI', () => {
    expect(pkg.bin['llm-tapedeck']).toBe(pkg.bin.tapedeck);
    expect(pkg.bin[pkg.name]).toBeDefined();
  });

  it('npx llm-tapedeck runs it in a project that has the package (installed as npm links bins)', () => {
    const project = mkdtempSync(join(tmpdir(), 'tapedeck-bin-'));
    try {
      mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
      symlinkSync(root, join(project, 'node_modules', pkg.name));
      for (const [name, file] of Object.entries(pkg.bin)) {
        symlinkSync(join('..', pkg.name, file), join(project, 'node_modules', '.bin', name));
        chmodSync(join(root, file), 0o755); // as npm does to a bin it links
      }
      const PATH = [dirname(process.execPath), ...(process.env.PATH ?? '').split(delimiter).filter((p) => !p.includes('node_modules'))].join(delimiter);
      const out = execFileSync('npx', ['--offline', 'llm-tapedeck', 'version'], { cwd: project, encoding: 'utf8', env: { PATH, HOME: process.env.HOME ?? project } });
      expect(out).toContain(pkg.version);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it('the docs never say `npx tapedeck` (another package outside a project), and MCP host configurations name llm-tapedeck', () => {
    for (const file of docs) {
      const text = readFileSync(join(root, file), 'utf8');
      const bad = [...text.matchAll(/npx (?:-y |--yes )?tapedeck\b/g)].map((m) => `${file}:${text.slice(0, m.index).split('\n').length}`);
      expect(bad, `bare npx tapedeck in ${bad.join(', ')}`).toEqual([]);
      // A host configuration: { "command": "npx", "args": [...] } that runs tapedeck.
      for (const m of text.matchAll(/"command":\s*"npx",\s*"args":\s*\[([^\]]*)\]/g)) {
        const args = JSON.parse(`[${m[1]}]`) as string[];
        if (!args.some((a) => /tapedeck/.test(a))) continue;
        expect(args.filter((a) => !a.startsWith('-'))[0], `${file}: ${m[0]}`).toBe('llm-tapedeck');
      }
    }
  });
});
