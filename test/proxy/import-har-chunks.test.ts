// A HAR file read in chunks, entry by entry (har-chunks.ts), against JSON.parse of the whole
// file: for pretty-printed HARs with awkward bodies read in chunks small enough that entries,
// separators and multi-byte characters cross the chunks' ends at every offset, the reader gives
// exactly the whole parse's entries; for random and adversarial HARs it declines, throws (and
// then says the file is not whole), or gives exactly those entries. And an import whose file
// turns out bad only after its entries array leaves the target tape as it was.
import { isUtf8 } from 'node:buffer';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings, writeImport } from '../../src/proxy/import.ts';
import { openHarChunks, SplitInDoubt } from '../../src/store/import/har-chunks.ts';
import { readRecordingFile } from '../../src/store/import/read.ts';
import { rng } from '../reference.ts';
import { harBytes } from './har-texts.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-har-chunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Strings that look like the reader's landmarks, or cross chunk ends as several bytes. */
const AWKWARD = ['},\n    {', '},\n  {', '}, {', '{', '}', ']', '[', ',', '"', '\\', '\n', '\r\n', 'é', '😀', '中', '\u2028', 'entries', '"log": {'];

/** A pretty-printed HAR's text (JSON.stringify with `indent`) of `n` entries with random bodies. */
function prettyHar(seed: number, n: number, indent: string | number): { text: string; entries: unknown[] } {
  const r = rng(seed);
  const int = (k: number) => Math.floor(r() * k);
  const str = (len: number) => Array.from({ length: len }, () => (r() < 0.4 ? AWKWARD[int(AWKWARD.length)] : String.fromCharCode(0x20 + int(95)))).join('');
  const entries = Array.from({ length: n }, (_, i) => ({
    startedDateTime: '2026-01-01T00:00:00.000Z',
    request: { method: 'POST', url: `https://api.openai.com/v1/chat/completions?i=${i}`, headers: [{ name: 'content-type', value: 'application/json' }], postData: { mimeType: 'application/json', text: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: str(int(40)) }] }) } },
    response: { status: 200, headers: [], content: { size: 1, mimeType: 'application/json', text: JSON.stringify({ note: str(int(60)) }) } },
    ...(r() < 0.3 ? { _nested: [{ a: [{}, [], { b: str(5) }] }, str(8)] } : {}),
  }));
  const text = JSON.stringify({ log: { version: '1.2', creator: { name: str(6), version: '1' }, pages: [{ id: str(4) }], entries } }, null, indent);
  return { text, entries };
}

/** What the chunked reader makes of a file: its entries, or declined, or thrown (with what whole() then says). */
function chunked(file: string, chunkBytes: number): { entries: unknown[] } | { declined: true } | { thrown: unknown; whole: boolean } {
  const chunks = openHarChunks(file, chunkBytes);
  if (!chunks) return { declined: true };
  const entries: unknown[] = [];
  try {
    for (const e of chunks.entries) entries.push(e);
  } catch (e) {
    return { thrown: e, whole: chunks.whole() };
  } finally {
    chunks.close();
  }
  expect(chunks.whole()).toBe(true);
  return { entries };
}

describe('a HAR read in chunks', () => {
  it('gives the whole parse entries crossing the chunks ends at every offset (pretty-printed, awkward bodies, multi-byte characters)', () => {
    const file = join(dir, 'pretty.har');
    for (let seed = 1; seed <= 6; seed++) {
      const { text, entries } = prettyHar(seed, 5, [2, 4, '\t'][seed % 3]!);
      const bytes = Buffer.from(text);
      writeFileSync(file, bytes);
      const first = bytes.indexOf('"entries"');
      const third = bytes.indexOf('"startedDateTime"', bytes.indexOf('"startedDateTime"', bytes.indexOf('"startedDateTime"') + 1) + 1);
      expect(third).toBeGreaterThan(first);
      // Multi-byte characters among those bytes: some chunk ends fall inside one.
      expect(bytes.subarray(first, third).some((c) => c >= 0x80)).toBe(true);
      // The first read ends at every byte from the array's opening to the third entry's start
      // (later ends fall where the buffer's size after an entry puts them).
      for (let chunkBytes = Math.max(64, first); chunkBytes <= third + 20; chunkBytes++) expect(chunked(file, chunkBytes), `seed ${seed}, chunks of ${chunkBytes}`).toEqual({ entries });
    }
  });

  // An invalid byte is no longer decoded (as U+FFFD) but makes the reader give up, whatever the
  // chunk: the whole file's read then refuses the file, naming the byte (import-not-utf8.test.ts).
  it('decodes a lone non-ASCII character, or gives up at an invalid byte, wherever a read starts or ends in it', () => {
    const file = join(dir, 'lone.har');
    const entry = (text: string) => ({ request: { method: 'GET', url: 'https://example.com/', headers: [] }, response: { status: 200, headers: [], content: { size: 1, text } } });
    const ascii = Buffer.from(JSON.stringify({ log: { version: '1.2', entries: [entry('a'.repeat(50)), entry('before X after'), entry('b'.repeat(50))] } }, null, 2));
    const x = ascii.indexOf('X');
    for (const raw of [Buffer.from('é'), Buffer.from('中'), Buffer.from('😀'), Buffer.from([0xff]), Buffer.from([0xc3])]) {
      const bytes = Buffer.concat([ascii.subarray(0, x), raw, ascii.subarray(x + 1)]);
      writeFileSync(file, bytes);
      const { entries } = (JSON.parse(bytes.toString('utf8')) as { log: { entries: unknown[] } }).log;
      const valid = isUtf8(raw);
      // The first read's end (the second read's start) before, inside and after the character.
      for (let chunkBytes = x - 4; chunkBytes <= x + 6; chunkBytes++) {
        const got = chunked(file, chunkBytes);
        if (valid) expect(got, `${raw.toString('hex')}, chunks of ${chunkBytes}`).toEqual({ entries });
        else expect(got, `${raw.toString('hex')}, chunks of ${chunkBytes}`).toMatchObject({ whole: false });
      }
    }
  });

  it('gives the whole parse entries for chunk sizes from 64 bytes to more than the file', () => {
    const file = join(dir, 'sizes.har');
    const { text, entries } = prettyHar(99, 4, 2);
    writeFileSync(file, text);
    const size = Buffer.byteLength(text);
    for (let chunkBytes = 64; chunkBytes <= size + 1; chunkBytes += 7) expect(chunked(file, chunkBytes), `chunks of ${chunkBytes}`).toEqual({ entries });
  });

  it('grows its buffer for an entry larger than a chunk, and for opening members larger than one', () => {
    const file = join(dir, 'large.har');
    const big = { request: { method: 'GET', url: 'https://example.com/', headers: [] }, response: { status: 200, headers: [], content: { size: 1, text: 'é😀}, {'.repeat(3000) } } };
    const small = { request: { method: 'GET', url: 'https://example.com/s', headers: [] }, response: { status: 204, headers: [] } };
    const entries = [small, big, small, big];
    writeFileSync(file, JSON.stringify({ log: { version: '1.2', pages: Array.from({ length: 200 }, (_, i) => ({ id: `page_${i}` })), entries } }, null, 2));
    expect(chunked(file, 64)).toEqual({ entries });
  });

  it('reads CRLF line endings', () => {
    const file = join(dir, 'crlf.har');
    const { text, entries } = prettyHar(7, 6, 2);
    writeFileSync(file, text.replace(/\n/g, '\r\n'));
    expect(chunked(file, 64)).toEqual({ entries });
    expect(chunked(file, 1 << 20)).toEqual({ entries });
  });

  it('declines what is not one entry a line (then the whole file is read)', () => {
    const file = join(dir, 'declined.har');
    const { text } = prettyHar(3, 3, 2);
    for (const t of [JSON.stringify(JSON.parse(text)), JSON.stringify({ log: { entries: [] } }, null, 2), '{"log": {"entries": [1, 2]}}', '[]', '']) {
      writeFileSync(file, t);
      expect(chunked(file, 64), t.slice(0, 40)).toEqual({ declined: true });
    }
  });

  it('for random and adversarial HARs gives the whole parse entries, or declines, or throws and says the file is not whole', () => {
    const file = join(dir, 'random.har');
    const tally = { read: 0, declined: 0, thrown: 0 };
    for (let seed = 1; seed <= 1500; seed++) {
      const bytes = harBytes(seed);
      writeFileSync(file, bytes);
      let whole: unknown[] | undefined;
      try {
        whole = (JSON.parse(bytes.toString('utf8')) as { log: { entries: unknown[] } }).log.entries;
      } catch {
        // Not a HAR: the reader must not give entries.
      }
      for (const chunkBytes of [64, 97, 1 << 20]) {
        const got = chunked(file, chunkBytes);
        if ('declined' in got) tally.declined++;
        else if ('thrown' in got) {
          expect(got.thrown instanceof SyntaxError || got.thrown instanceof SplitInDoubt, `seed ${seed}: ${String(got.thrown)}`).toBe(true);
          expect(got.whole, `seed ${seed}`).toBe(false);
          tally.thrown++;
        } else {
          expect(got.entries, `seed ${seed}, chunks of ${chunkBytes}: ${bytes.toString('utf8').slice(0, 200)}`).toEqual(whole);
          tally.read++;
        }
      }
    }
    // Every way is reached (of 4,500 reads: ~670, ~2,380 and ~1,450).
    expect(tally.read).toBeGreaterThan(500);
    expect(tally.declined).toBeGreaterThan(1000);
    expect(tally.thrown).toBeGreaterThan(500);
  });
});

describe('an import read in chunks', () => {
  const entry = (path: string) => ({ request: { method: 'GET', url: `https://example.com/${path}`, headers: [] }, response: { status: 200, headers: [], content: { size: 2, text: 'ok' } } });
  const pretty = JSON.stringify({ log: { version: '1.2', entries: [entry('a'), entry('b'), entry('c')] } }, null, 2);

  /** The import's error (code, message, details) with the target tape's bytes after it. */
  async function failure(f: (out: string) => Promise<unknown>): Promise<{ error: unknown; target: string }> {
    const out = join(dir, 'target.tape');
    writeFileSync(out, 'the tape before');
    let error: unknown;
    try {
      await f(out);
    } catch (e) {
      if (!(e instanceof TapedeckError)) throw e;
      error = { code: e.code, message: e.message, details: e.details };
    }
    return { error, target: readFileSync(out, 'utf8') };
  }

  it.each([
    ['a character after the document', `${pretty}x`],
    ['a member cut after the array', pretty.replace(/\]\n  \}\n\}$/, '],\n  "pages": \n  }\n}')],
    ['a later log that is no object', pretty.replace(/\]\n  \}\n\}$/, ']\n  },\n  "log": 5\n}')],
    ['a later entries member that is no array', pretty.replace(/\]\n  \}\n\}$/, '],\n    "entries": {}\n  }\n}')],
  ])('of a file bad after its entries array (%s) fails as the whole-file path does, and leaves the target as it was', async (_, text) => {
    const src = join(dir, 'bad-end.har');
    writeFileSync(src, text);
    // Every entry is good: the file is found bad only at its end.
    expect(chunked(src, 64)).toMatchObject({ thrown: expect.any(SplitInDoubt), whole: false });
    const viaChunks = await failure((out) => importRecordings(src, out, { force: true }, { chunkBytes: 64 }));
    const viaWhole = await failure((out) => writeImport(readRecordingFile(src, readFileSync(src, 'utf8'), 'har'), out, { force: true }));
    expect(viaChunks.error).toBeDefined();
    expect(viaChunks).toEqual(viaWhole);
    expect(viaChunks.target).toBe('the tape before');
  });

  it('of a file whose later entries member replaces the array read imports that later array, as JSON.parse reads it', async () => {
    const src = join(dir, 'later.har');
    writeFileSync(src, pretty.replace(/\]\n  \}\n\}$/, `],\n    "entries": [\n      ${JSON.stringify(entry('later'))}\n    ]\n  }\n}`));
    expect(chunked(src, 64)).toMatchObject({ thrown: expect.any(SplitInDoubt) });
    const report = await importRecordings(src, join(dir, 'later.tape'), { force: true }, { chunkBytes: 64 });
    expect(report.records).toBe(1);
  });
});
