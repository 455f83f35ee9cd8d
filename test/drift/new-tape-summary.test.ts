// Recordings added or removed are summed up per tape in the Markdown and terminal reports, so a
// new tape of many recordings keeps the report short enough for a pull-request comment and the
// failing change in view; the JSON report still lists every one.
import { describe, expect, it } from 'vitest';
import { driftReport } from '../../src/drift/report.ts';
import { renderMarkdown } from '../../src/drift/render-markdown.ts';
import { renderTerminal } from '../../src/drift/render-terminal.ts';
import { chatCall, chatCompletion, recordAnswers } from './hand-answers.ts';

describe('tapedeck diff and a new tape of many recordings', () => {
  it('one row for the new tape, the failing change listed', async () => {
    const many = Array.from({ length: 40 }, (_, i) => chatCall(`Question ${i}?`));
    const newTape = await recordAnswers(many, many.map(() => ({ body: chatCompletion() })));
    const before = await recordAnswers([chatCall()], [{ body: chatCompletion() }]);
    const after = await recordAnswers([chatCall()], [{ body: chatCompletion({}, { content: 'Lyon.' }) }]);
    const r = driftReport([{ name: 'app.tape', records: before }], [{ name: 'app.tape', records: after }, { name: 'new.tape', records: newTape }], { old: 'old', new: 'new' });
    expect(r.entries.filter((e) => e.status === 'added')).toHaveLength(40);
    const md = renderMarkdown(r);
    const rows = md.split('\n').filter((l) => l.startsWith('| ') && l.includes('new.tape'));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain('40 recordings added');
    expect(md).toMatch(/\| text \| app\.tape \|/);
    // Only the failing change is folded out in details; the new recordings are not, one by one.
    expect(md.match(/<details>/g)).toHaveLength(1);
    expect(md.length).toBeLessThan(5000);
    const term = renderTerminal(r, { colour: false }).split('\n').filter((l) => l.includes('new.tape'));
    expect(term).toHaveLength(1);
    expect(term[0]).toContain('40 recordings added');
  });

  it('a few added recordings are still listed one by one', async () => {
    const two = [chatCall('One?'), chatCall('Two?')];
    const newTape = await recordAnswers(two, two.map(() => ({ body: chatCompletion() })));
    const r = driftReport([], [{ name: 'new.tape', records: newTape }], { old: 'old', new: 'new' });
    const rows = renderMarkdown(r).split('\n').filter((l) => l.startsWith('| added | new.tape'));
    expect(rows).toHaveLength(2);
  });
});
