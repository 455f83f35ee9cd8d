// Recorded text in the Markdown and terminal drift reports is text: model and tool names, finish
// reasons, answers and tape names carrying HTML, Markdown or terminal control sequences are
// shown, never run. The Markdown is rendered by marked (a GFM renderer, as a PR comment is) and
// the terminal text is searched for any control sequence the report did not write itself.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marked } from 'marked';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPaths } from '../../src/drift/load.ts';
import { renderMarkdown } from '../../src/drift/render-markdown.ts';
import { renderTerminal } from '../../src/drift/render-terminal.ts';
import { driftReport, type DriftReport } from '../../src/drift/report.ts';
import { addRecordings } from '../../src/proxy/hand-written.ts';

const HTML = '<img src=x onerror=alert(1)></details><summary>';
const MD = '`*b*` [l](x) ![i](y) | c';
// A clipboard write (OSC 52), a screen clear (CSI 2J), a one-byte CSI (0x9b), a title (OSC 0).
const ESC = '\x1b]52;c;aGk=\x07\x1b[2J\x9b31m\x1b]0;pwned\x1b\\';
const hostile = `${HTML}${MD}${ESC}`;

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-drift-escape-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let report: DriftReport;

beforeAll(async () => {
  mkdirSync(join(dir, 'old'));
  mkdirSync(join(dir, 'new'));
  const request = { url: 'https://api.openai.com/v1/chat/completions', body: { model: `m${hostile}`, messages: [{ role: 'user', content: 'hi' }] } };
  const answer = (model: string, tool: string, finish: string, content: string) => ({
    request,
    response: { body: { id: 'c1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content, tool_calls: [{ id: 't1', type: 'function', function: { name: tool, arguments: '{"a":1}' } }] }, finish_reason: finish }] } },
  });
  // The model asked for (the same on both sides, so the two pair) and the tape's name carry
  // markup too (a file name cannot hold a slash).
  const name = `<img src=t onerror=alert(2)>.tape`;
  await addRecordings({ tape: join(dir, 'old', name) }, [answer(`m${hostile}`, 'get_weather', 'stop', 'It is sunny there.')]);
  await addRecordings({ tape: join(dir, 'new', name) }, [answer(`m${hostile}`, `t${hostile}`, `f${hostile}`, `It is ${hostile} there.`)]);
  const { before, after } = await loadPaths(join(dir, 'old'), join(dir, 'new'));
  report = driftReport(before.tapes, after.tapes, { old: 'old', new: 'new' });
});

/** The text of rendered HTML: tags dropped, entities decoded. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

describe('the Markdown report', () => {
  it('shows recorded markup as text: no element, link or fold comes from a recording', () => {
    expect(report.entries[0]!.classes).toEqual(expect.arrayContaining(['tool-calls', 'finish', 'text']));
    const md = renderMarkdown(report);
    const html = marked.parse(md, { async: false, gfm: true }) as string;
    // Only the report's own elements: no image, no link, one fold per changed entry.
    expect(html).not.toMatch(/<img|<a |<script/i);
    expect(html.match(/<details>/g)?.length).toBe(1);
    expect(html.match(/<\/details>/g)?.length).toBe(1);
    expect(html.match(/<summary>/g)?.length).toBe(1);
    expect(html).not.toMatch(/<(em|del)>/);
    expect(html.match(/<strong>/g)?.length).toBe(1); // the report's own "1 failing"
    // The table keeps its five columns: a recorded pipe does not add one.
    for (const row of html.match(/<tr>[\s\S]*?<\/tr>/g)!.slice(-1)) expect(row.match(/<td/g)?.length).toBe(5);
    // And what was recorded is all there, as text.
    expect(md).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    const text = textOf(html);
    expect(text).toContain('<img src=t onerror=alert(2)>.tape');
    for (const what of [`m${HTML}`, `t${HTML}`, `f${HTML}`, MD]) expect(text).toContain(what);
  });
});

describe('the terminal report', () => {
  // The report's own colours; anything else starting with ESC (or a C1 CSI, or BEL) came from a recording.
  const ownColour = /\x1b\[[0-9;]*m/g;
  for (const colour of [true, false]) {
    it(`runs no control sequence from a recording (${colour ? 'coloured' : 'plain'})`, () => {
      const out = renderTerminal(report, { colour, width: 400 });
      const rest = out.replace(ownColour, '');
      if (colour) expect(out).toMatch(ownColour);
      expect(rest).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
      if (!colour) expect(out).toBe(rest);
      // Shown instead, so the reader sees that the answer held them.
      expect(out).toContain('\\x1b]52;c;aGk=\\x07');
    });
  }
});
