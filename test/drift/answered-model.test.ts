// The model an answer names: a new dated snapshot of the model asked for is noise, said from what
// to what; an answer from another model is drift that fails, and the report names both models.
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/drift/render-markdown.ts';
import { renderTerminal } from '../../src/drift/render-terminal.ts';
import { chatCall, chatCompletion, driftOf } from './hand-answers.ts';

describe('tapedeck diff and the model an answer names', () => {
  it('a new snapshot of the same model: benign, naming both snapshots', async () => {
    const r = await driftOf([chatCall()], [{ body: chatCompletion() }], [{ body: chatCompletion({ model: 'gpt-4o-mini-2025-01-01' }) }]);
    const e = r.entries[0]!;
    expect(e.classes).toEqual(['benign']);
    expect(e.details.model).toEqual({ old: 'gpt-4o-mini-2024-07-18', new: 'gpt-4o-mini-2025-01-01' });
    expect(e.summary).toContain('gpt-4o-mini-2024-07-18 -> gpt-4o-mini-2025-01-01');
    expect(r.summary.failing).toBe(0);
  });

  it('an answer from another model: fails, and every format says which models', async () => {
    const r = await driftOf([chatCall()], [{ body: chatCompletion() }], [{ body: chatCompletion({ model: 'gpt-3.5-turbo-0125' }) }]);
    const e = r.entries[0]!;
    expect(e.classes).not.toContain('benign');
    expect(r.summary.failing).toBe(1);
    expect(e.details.model).toEqual({ old: 'gpt-4o-mini-2024-07-18', new: 'gpt-3.5-turbo-0125' });
    expect(e.summary).toContain('gpt-4o-mini-2024-07-18 -> gpt-3.5-turbo-0125');
    expect(renderTerminal(r, { colour: false })).toContain('gpt-3.5-turbo-0125');
    expect(renderMarkdown(r)).toContain('gpt-3.5-turbo-0125');
  });
});
