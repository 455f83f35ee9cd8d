// A re-recorded answer with the same text and other token usage, recorded for real (the OpenAI
// and Anthropic SDKs through createFetch, against the drift upstream with only its usage
// changed): beyond the tolerance the report says that usage changed and by how much, in every
// format, and never "text 100% similar" (which reads as "nothing changed"); within it, noise.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCommittedDrift } from '../../src/drift/committed.ts';
import { loadPaths } from '../../src/drift/load.ts';
import { renderHtml } from '../../src/drift/render-html.ts';
import { renderMarkdown } from '../../src/drift/render-markdown.ts';
import { renderTerminal } from '../../src/drift/render-terminal.ts';
import { driftReport, type DriftReport } from '../../src/drift/report.ts';
import { CALLS, recordVariant } from './record.ts';

const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-drift-usage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tape = (name: string) => join(dir, `${name}.tape`);

beforeAll(async () => {
  await recordVariant(tape('base'), 'base');
  // 12 output tokens -> 40: the same words, far more tokens (hidden reasoning changed).
  await recordVariant(tape('more'), 'base', { outputTokens: 40 });
}, 120_000);

async function report(oldName: string, newName: string): Promise<DriftReport> {
  const { before, after } = await loadPaths(tape(oldName), tape(newName));
  return driftReport(before.tapes, after.tapes, { old: oldName, new: newName });
}

describe('usage changed, text the same', () => {
  it('the line of each such pair names the usage change and by how much, not a text similarity', async () => {
    const r = await report('base', 'more');
    // Every LLM answer, tool calls included (the same calls); the plain JSON API has no usage.
    const llm = CALLS.map((c, i) => ({ c, e: r.entries[i]! })).filter(({ c }) => c.kind !== 'json');
    expect(llm).toHaveLength(12);
    expect(r.entries[12]!.classes).toEqual(['identical']);
    for (const { c, e } of llm) {
      expect(e.classes, c.name).toEqual(['text']);
      expect(e.summary, c.name).not.toMatch(/similar/);
      expect(e.summary, c.name).toBe('same text; usage: output tokens 12 -> 40 (+233%), beyond the 20% tolerance');
      expect(e.details.usage, c.name).toEqual({ old: { input: 20, output: 12 }, new: { input: 20, output: 40 }, tolerance: 0.2 });
      // Not noise: it is what the pair is classed for.
      expect(e.details.benign ?? [], c.name).not.toContainEqual(expect.stringMatching(/usage/));
    }
  });

  it('terminal, Markdown and HTML say it too, and none of them says "100% similar"', async () => {
    const r = await report('base', 'more');
    const term = renderTerminal(r, { colour: false });
    expect(term).toContain('same text; usage: output tokens 12 -> 40 (+233%), beyond the 20% tolerance');
    const md = renderMarkdown(r);
    expect(md).toContain('Usage: output tokens 12 → 40 (+233%), beyond the 20% tolerance; the text is the same.');
    const html = renderHtml(r);
    expect(html).toContain('usage: output tokens 12 → 40 (+233%), beyond the 20% tolerance; the text is the same');
    for (const [name, text] of [['terminal', term], ['markdown', md], ['html', html]]) expect(text, name).not.toContain('100% similar');
    // The vitest run summary's drift lines: not "the answers' text changed".
    const lines = formatCommittedDrift({ report: r, tapes: ['more.tape'], untracked: [], command: 'npx llm-tapedeck diff more.tape' });
    expect(lines).toMatch(/^ {2}text +\d+ {2}same text, token usage beyond the tolerance$/m);
    expect(lines).not.toContain("the answers' text changed");
  });

  it('tapedeck diff on the command line', () => {
    const t = spawnSync(process.execPath, [join(root, 'dist/cli.js'), 'diff', tape('base'), tape('more')], { cwd: dir, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
    expect(t.stderr).toBe('');
    expect(t.status).toBe(1);
    expect(t.stdout).toContain('same text; usage: output tokens 12 -> 40 (+233%), beyond the 20% tolerance');
    expect(t.stdout).not.toContain('100% similar');
  });

  it('within the tolerance it stays noise, said as before', async () => {
    await recordVariant(tape('one-more'), 'base', { outputTokens: 13 });
    const r = await report('base', 'one-more');
    const e = r.entries[0]!;
    expect(e.classes).toEqual(['benign']);
    expect(e.summary).toBe('usage: output tokens 12 -> 13');
    expect(e.details.usage).toBeUndefined();
  });
});
