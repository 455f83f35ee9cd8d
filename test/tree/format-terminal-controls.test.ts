// formatTree escaped C0 controls in a message excerpt (through JSON.stringify) but let the
// bidirectional overrides (U+202E reverses the rest of the line on screen) and C1 controls (0x9b
// is a one-byte CSI on some terminals) through to the terminal, and a model name went out raw.
import { describe, expect, it } from 'vitest';
import { ConversationTree, formatTree } from '../../src/tree/index.ts';

const RAW = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

describe('formatTree and recorded terminal controls', () => {
  it('shows bidi overrides, C1 and C0 controls as escapes, in excerpts and model names', () => {
    const prompt = 'summarize: \x1b]0;PWNED\x07\x1b[2J \u202eexe.txt \u2066x\u2069 \x9b31m';
    const tree = ConversationTree.fromRecords([
      { v: 1, request: { model: 'gpt-4o\u202e\x1b[31m', messages: [{ role: 'user', content: prompt }] }, value: { id: 'x', choices: [{ message: { role: 'assistant', content: 'ok \u202d' } }] }, recordedAt: '2026-01-01T00:00:00.000Z' },
    ]);
    const out = formatTree(tree, { width: 200 });
    expect(out).not.toMatch(RAW);
    expect(out).toContain('\\u202e');
    expect(out).toContain('\\u2066');
    expect(out).toContain('exe.txt');
  });
});
