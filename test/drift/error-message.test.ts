// A call that now gets an error answer: the report says what the API's error says, in every format.
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/drift/render-markdown.ts';
import { renderTerminal } from '../../src/drift/render-terminal.ts';
import { chatCall, chatCompletion, driftOf } from './hand-answers.ts';

describe('tapedeck diff and a change to an error status', () => {
  it('200 -> 400 names the error type, code and message', async () => {
    const error = { error: { message: 'The model `gpt-4o-mini` was retired', type: 'invalid_request_error', param: null, code: 'model_not_found' } };
    const r = await driftOf([chatCall()], [{ body: chatCompletion() }], [{ status: 400, body: error }]);
    const e = r.entries[0]!;
    expect(e.classes).toEqual(['status']);
    expect(e.details.status).toEqual({ old: 200, new: 400 });
    expect(e.details.error).toEqual({ new: 'invalid_request_error model_not_found: The model `gpt-4o-mini` was retired' });
    expect(e.summary).toContain('status 200 -> 400');
    expect(e.summary).toContain('was retired');
    expect(renderTerminal(r, { colour: false })).toContain('model_not_found');
    expect(renderMarkdown(r)).toContain('was retired');
  });
});
