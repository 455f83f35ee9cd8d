// A Gemini stream asked for several candidates (`candidateCount`) carries each candidate's pieces
// under its `index`; each candidate ends with its own `finishReason`. The stream is a whole answer
// only when every candidate it began has ended: one finished candidate does not make the others
// whole.
import { describe, expect, it } from 'vitest';
import { assembleAnswer, responseComplete } from '../../src/providers/index.ts';

const stream = { method: 'POST', url: '/v1beta/models/gemini-2.5-flash:streamGenerateContent' };
const sseRoute = { ...stream, url: `${stream.url}?alt=sse` };
const piece = (index: number, text: string, finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index, ...(finishReason ? { finishReason } : {}) }] });
const sse = (chunks: unknown[]) => chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join('');
const array = (chunks: unknown[]) => `[${chunks.map((c) => JSON.stringify(c)).join(',\r\n')}]`;

describe('Gemini streams of several candidates', () => {
  const cut = [piece(0, 'A: Paris'), piece(1, 'B: Lyon'), piece(0, ' is the capital.', 'STOP'), piece(1, ' is not')];
  const whole = [...cut, piece(1, ' the capital.', 'STOP')];

  it('are not whole while a candidate they began has no finishReason', () => {
    expect(responseComplete(sseRoute, 'text/event-stream', sse(cut))).toBe(false);
    expect(responseComplete(stream, 'application/json', array(cut))).toBe(false);
    expect(assembleAnswer(sseRoute, 'text/event-stream', sse(cut))).toBeUndefined();
  });

  it('are whole once every candidate ended, and assemble to every candidate', () => {
    expect(responseComplete(sseRoute, 'text/event-stream', sse(whole))).toBe(true);
    expect(responseComplete(stream, 'application/json', array(whole))).toBe(true);
    const a = assembleAnswer(sseRoute, 'text/event-stream', sse(whole)) as { candidates: { content: { parts: { text: string }[] }; finishReason: string }[] };
    expect(a.candidates.map((c) => [c.content.parts[0]!.text, c.finishReason])).toEqual([
      ['A: Paris is the capital.', 'STOP'],
      ['B: Lyon is not the capital.', 'STOP'],
    ]);
  });

  it('candidates that end in one chunk together are whole', () => {
    const both = { candidates: [{ content: { role: 'model', parts: [{ text: 'x' }] }, index: 0, finishReason: 'STOP' }, { content: { role: 'model', parts: [{ text: 'y' }] }, index: 1, finishReason: 'MAX_TOKENS' }] };
    expect(responseComplete(sseRoute, 'text/event-stream', sse([piece(0, 'a'), piece(1, 'b'), both]))).toBe(true);
  });
});
