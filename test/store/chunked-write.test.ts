// The chunked writers of the exports, `tapedeck inspect` and `tapedeck tree`: the UTF-8 writer
// (each piece encoded as it comes) against encoding the text the text writer gathers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkedWriter, utf8ChunkedWriter } from '../../src/store/chunked-write.ts';

/** Pieces as writers get them: ASCII, accented, CJK, emoji, lone surrogates, empty, and long. */
const piece = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom('a', 'é', '✓', '東', '😀', '\ud800', '\udfff', '\n'), maxLength: 300 }) },
  // Longer than the writer's buffer holds (a record of ~1 MB of text) or about the chunk's size.
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', 'é', '東', '😀'), fc.constantFrom(20_000, 70_000, 300_000)).map(([c, n]) => c.repeat(Math.ceil(n / c.length))) },
);

/** Runs pieces through a writer the way its callers do; returns what `write` got, in order. */
async function run<T>(make: (write: (chunk: T) => Promise<void>) => ReturnType<typeof chunkedWriter>, pieces: string[]): Promise<T[]> {
  const chunks: T[] = [];
  let pending = 0;
  const write = async (chunk: T): Promise<void> => {
    // Each write is awaited before the next starts: a slow reader holds the writer back.
    expect(pending).toBe(0);
    chunks.push(chunk);
    pending++;
    await new Promise((r) => setImmediate(r));
    pending--;
  };
  const w = make(write);
  for (const p of pieces) {
    const written = w.out(p);
    if (written) await written;
  }
  await w.flush();
  return chunks;
}

describe('utf8ChunkedWriter', () => {
  it('writes the UTF-8 of the text the text writer gathers, in order, whatever the pieces', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 60 }), async (pieces) => {
        const text = (await run<string>((w) => chunkedWriter(w), pieces)).join('');
        const bytes = await run<Uint8Array>((w) => utf8ChunkedWriter(w), pieces);
        // Compared once all are written: a chunk handed over is the writer's no more (the buffer
        // it was encoded in is reused, so it must be a copy).
        expect(Buffer.concat(bytes).equals(Buffer.from(text, 'utf8'))).toBe(true);
        expect(text).toBe(pieces.join(''));
        for (const c of bytes) expect(c.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('hands over about 64 KB at a time, not a write per piece', async () => {
    const pieces = Array.from({ length: 20_000 }, (_, i) => `line ${i} with ✓ and é\n`);
    const bytes = await run<Uint8Array>((w) => utf8ChunkedWriter(w), pieces);
    const total = Buffer.byteLength(pieces.join(''));
    expect(bytes.length).toBeGreaterThan(1);
    expect(bytes.length).toBeLessThanOrEqual(Math.ceil(total / (64 * 1024)) + 1);
    for (const c of bytes.slice(0, -1)) expect(c.length).toBeGreaterThanOrEqual(64 * 1024);
  });
});
