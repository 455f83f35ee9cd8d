// `tapedeck export --review` of every stream framing a provider records (server-sent events,
// Ollama's NDJSON, Bedrock's binary event stream, Gemini's JSON array): each streamed answer is
// shown as the answer it stands for and one line per event; plain answers are left as they are.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportTapeJSON } from '../../src/store/export.ts';
import { CALLS, recordEveryProvider } from '../drift/provider-answers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-review-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('export --review', () => {
  it('shows every framing of stream as its answer and its events, one per line', async () => {
    const tape = join(dir, 'every.tape');
    await recordEveryProvider(tape);
    const review = JSON.parse(await exportTapeJSON(tape, { review: true })) as { records: { route: string; response: { body: Record<string, unknown> } }[] };
    const plain = JSON.parse(await exportTapeJSON(tape)) as typeof review;
    const streamed = new Set(['openai chat streamed', 'anthropic streamed', 'gemini sse', 'gemini json array stream', 'bedrock converse stream', 'ollama chat ndjson']);
    review.records.forEach((r, i) => {
      const name = CALLS[i]!.name;
      const body = r.response.body;
      if (!streamed.has(name)) {
        expect(body, name).toEqual(plain.records[i]!.response.body);
        return;
      }
      expect(body.$type, name).toBe('stream');
      expect(body.answer, name).not.toBeNull();
      const events = body.events as string[];
      expect(events.length, name).toBeGreaterThanOrEqual(2);
      for (const e of events) expect(e, name).not.toContain('\n');
      // The answer's words are readable in the events (Bedrock's frames decoded, not base64).
      expect(events.join(' '), name).toMatch(/Par|Paris/);
      expect(JSON.stringify(body.answer), name).toMatch(/Paris|is\./);
    });
  });

  it('the review form does not import', async () => {
    const { importTapeJSON } = await import('../../src/store/export.ts');
    const tape = join(dir, 'every.tape');
    await expect(importTapeJSON(await exportTapeJSON(tape, { review: true }), join(dir, 'back.tape'))).rejects.toMatchObject({ code: 'E_TAPE_IMPORT', message: expect.stringContaining('review form') });
  });
});
