// A HAR read entry by entry from a split of its bytes (har-split.ts) against the reader that
// parses the whole file (readHar): for random and adversarial HAR texts (duplicate `log` and
// `entries` members, escaped member names, brackets, quotes and backslashes inside strings,
// nested arrays in entries, non-ASCII and invalid UTF-8, CRLF, a BOM, odd separators,
// truncated and damaged files, bad entries), the split either declines (undefined, or an entry
// that is no JSON: the import then parses the whole file) or gives exactly the whole reader's
// exchanges and bad entries. And `tapedeck import` of the same files writes the same tape, or
// fails with the same error, as the whole-file path.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { importRecordings, writeImport } from '../../src/proxy/import.ts';
import { splitHar } from '../../src/store/import/har-split.ts';
import { readHar, readHarSplit } from '../../src/store/import/har.ts';
import { readRecordingFile } from '../../src/store/import/read.ts';
import { scanTape } from '../../src/store/tape-file.ts';
import { rng } from '../reference.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-har-split-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An object written with its members as listed (so a name may come twice). */
class Members {
  constructor(readonly list: [string, unknown][]) {}
}

/** JSON text of a value with Members objects; `indent` as JSON.stringify's; `escape` spells a name with an escape. */
function write(v: unknown, indent: string, level: number, escape: (k: string) => string): string {
  const open = indent ? `\n${indent.repeat(level + 1)}` : '';
  const close = indent ? `\n${indent.repeat(level)}` : '';
  if (v instanceof Members || (v !== null && typeof v === 'object' && !Array.isArray(v))) {
    const list = v instanceof Members ? v.list : Object.entries(v);
    if (list.length === 0) return '{}';
    return `{${list.map(([k, x]) => `${open}${escape(k)}:${indent ? ' ' : ''}${write(x, indent, level + 1, escape)}`).join(',')}${close}}`;
  }
  if (Array.isArray(v)) return v.length === 0 ? '[]' : `[${v.map((x) => `${open}${write(x, indent, level + 1, escape)}`).join(',')}${close}]`;
  return JSON.stringify(v) ?? 'null';
}

const TRICKY = ['}, {', '},\n      {', '"quoted"', 'back\\slash\\', '\\"', ']]}}', '[{"a":1}]', 'é ü 😀 中', '\u2028', '\ud800', 'log', 'entries', '{"log":{"entries":[]}}', ''];

function generator(seed: number) {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const str = () => (r() < 0.5 ? pick(TRICKY) : `${pick(TRICKY)}${int(1000)}${pick(TRICKY)}`);
  const goodEntry = (i: number) => ({
    startedDateTime: pick(['2026-01-01T00:00:00.000Z', '2026-02-30T10:00:00Z', 'not a time', undefined]),
    time: pick([1, 2.5, -1, undefined]),
    request: {
      method: pick(['GET', 'post', 'PUT']),
      url: pick(['https://api.openai.com/v1/chat/completions', 'https://example.com/a?b=1', `https://example.com/p${int(100)}?q=%7B%22a%22%7D`]),
      headers: Array.from({ length: int(4) }, () => ({ name: pick(['accept', 'x-note', 'authorization', ':path']), value: str() })),
      ...(r() < 0.6 ? { postData: { mimeType: 'application/json', text: JSON.stringify({ model: 'gpt-4o-mini', n: i, note: str(), messages: [{ role: 'user', content: str() }] }) } } : {}),
    },
    response: {
      status: pick([200, 201, 404]),
      statusText: str(),
      headers: [{ name: 'content-type', value: pick(['application/json', 'text/event-stream', 'text/plain']) }],
      content: r() < 0.9 ? { size: 10, mimeType: 'application/json', text: pick([JSON.stringify({ ok: str() }), `data: ${JSON.stringify({ a: str() })}\n\n`, str()]) } : { size: 3, _file: 'missing.bin' },
    },
    ...(r() < 0.3 ? { _extra: [[1, [2, {}]], ']}', { a: [[[]]] }, str()] } : {}),
    timings: { send: 1, wait: int(50), receive: int(20) },
  });
  const badEntry = () => pick<unknown>([7, 'entry', null, [], [{ request: {} }], {}, { request: { method: 'GET', url: 'relative' }, response: {} }, { request: { method: 'GET', url: 'https://x.test/' } }]);
  const entries = () => Array.from({ length: int(6) }, (_, i) => (r() < 0.85 ? goodEntry(i) : badEntry()));
  return { r, int, pick, str, entries };
}

/** A random HAR text (as bytes), adversarial by turns. */
function harBytes(seed: number): Buffer {
  const { r, int, pick, str, entries } = generator(seed);
  const indent = pick(['  ', '  ', '    ', '\t', '']);
  const escape = r() < 0.1 ? (k: string) => JSON.stringify(k).replace(/o/g, '\\u006f').replace(/e/g, '\\u0065') : (k: string) => JSON.stringify(k);
  const logMembers: [string, unknown][] = [['version', '1.2'], ['creator', { name: str(), version: '1' }]];
  if (r() < 0.5) logMembers.push(['pages', [{ id: 'page_1', title: str() }, { id: 'page_2', title: str() }]]);
  logMembers.push(['entries', entries()]);
  // Duplicate members: JSON.parse keeps the last.
  if (r() < 0.15) logMembers.push(['entries', pick<unknown>([entries(), 5, {}, 'x'])]);
  if (r() < 0.1) logMembers.splice(0, 0, ['entries', entries()]);
  if (r() < 0.15) logMembers.push(['pages', [{ id: 'page_3' }, { id: 'page_4' }]]);
  const root: [string, unknown][] = [['log', new Members(logMembers)]];
  if (r() < 0.1) root.push(['log', pick<unknown>([new Members([['entries', entries()]]), 3, { entries: [] }])]);
  if (r() < 0.1) root.unshift(['log', new Members([['entries', entries()]])]);
  if (r() < 0.1) root.push(['other', { entries: entries() }]);
  let text = write(new Members(root), indent, 0, escape);
  if (r() < 0.1) text = text.replace(/\n/g, '\r\n');
  if (r() < 0.1) text = ` \n${text}\n\n`;
  const m = int(14);
  // Damage, by turns: a cut, a character lost or added, a separator written otherwise.
  if (m === 0) text = text.slice(0, int(text.length));
  else if (m === 1) {
    const at = int(text.length);
    text = text.slice(0, at) + text.slice(at + 1);
  } else if (m === 2) {
    const at = int(text.length);
    text = text.slice(0, at) + pick(['{', '}', '[', ']', ',', ':', '"', '\\', ' ', 'x', '\n']) + text.slice(at);
  } else if (m === 3) text = text.replace(/\},(\s+)\{/, '}, {');
  else if (m === 4) text = `${text}x`;
  else if (m === 5) text = text.replace(/"entries": \[/, '"entries": [1, ');
  let bytes = Buffer.from(text);
  if (r() < 0.05) bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
  if (r() < 0.1) {
    // Invalid UTF-8, inside a string or not.
    const at = int(bytes.length);
    bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(pick([[0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98]])), bytes.subarray(at)]);
  }
  return bytes;
}

/** A reader's result as plain data (errors by code, message and details). */
function outcome(read: () => ReturnType<typeof readHar>): unknown {
  try {
    const r = read();
    const exchanges = [...r.exchanges];
    return { exchanges, bad: r.bad.map((e) => ({ code: e.code, message: e.message, details: e.details })), unkeyable: r.unkeyable };
  } catch (e) {
    if (e instanceof TapedeckError) return { error: e.code, message: e.message, details: e.details };
    throw e;
  }
}

describe('a HAR split into its entries', () => {
  it('reads exactly what the whole-file reader reads, or declines, for random and adversarial HARs', () => {
    const tally = { split: 0, declined: 0, notJson: 0, wholeFails: 0 };
    for (let seed = 1; seed <= 1500; seed++) {
      const bytes = harBytes(seed);
      const file = join(dir, 'x.har');
      const whole = outcome(() => readHar(bytes.toString('utf8'), file));
      if ((whole as { error?: string }).error) tally.wholeFails++;
      const split = splitHar(bytes);
      if (!split) {
        tally.declined++;
        continue;
      }
      let got: unknown;
      try {
        got = outcome(() => readHarSplit(split, file));
      } catch (e) {
        // An entry that is no JSON: the import parses the whole file instead.
        expect(e, `seed ${seed}`).toBeInstanceOf(SyntaxError);
        expect(split.whole(), `seed ${seed}`).toBe(false);
        tally.notJson++;
        continue;
      }
      expect(split.whole(), `seed ${seed}`).toBe(true);
      expect(got, `seed ${seed}: ${bytes.toString('utf8').slice(0, 200)}`).toEqual(whole);
      tally.split++;
    }
    // The generator reaches every way: split and read, declined, an entry found no JSON.
    expect(tally.split).toBeGreaterThan(300);
    expect(tally.declined).toBeGreaterThan(100);
    expect(tally.notJson).toBeGreaterThan(5);
    expect(tally.wholeFails).toBeGreaterThan(100);
  });

  it('reads a pipe once: a HAR the split declines is parsed whole from the bytes already read', async () => {
    const entry = (path: string) => ({ request: { method: 'GET', url: `https://example.com/${path}`, headers: [] }, response: { status: 200, headers: [], content: { size: 2, text: 'ok' } } });
    // Entries one a line but for one separator: the split's first element spans two, is no JSON, and the whole file is parsed.
    const text = JSON.stringify({ log: { entries: [entry('a'), entry('b'), entry('c')] } }, null, 2).replace(/\},\n +\{/, '}, {');
    expect(text).toContain('}, {');
    const src = join(dir, 'piped.har');
    writeFileSync(src, text);
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    // The file, then nothing: a second read of the pipe would find it empty (rather than wait).
    const writer = spawn('sh', ['-c', `cat "${src}" > "${fifo}"; sleep 1; : > "${fifo}"`]);
    try {
      const report = await importRecordings(fifo, join(dir, 'piped.tape'), { from: 'har', force: true, onWarning: () => {} });
      expect(report.records).toBe(3);
    } finally {
      writer.kill();
    }
  });

  it('imports to the same tape, or fails with the same error, as the whole-file path', async () => {
    // The same salt for both imports, so their tapes compare byte for byte.
    const spy = vi.spyOn(globalThis.crypto, 'getRandomValues').mockImplementation(<T extends ArrayBufferView | null>(a: T): T => {
      if (a) new Uint8Array(a.buffer, a.byteOffset, a.byteLength).fill(7);
      return a;
    });
    try {
      let compared = 0;
      for (let seed = 2001; seed <= 2120; seed++) {
        const src = join(dir, `s${seed}.har`);
        writeFileSync(src, harBytes(seed));
        const skipBad = seed % 3 === 0;
        const opts = { force: true, skipBad, recordedAt: '2026-01-01T00:00:00.000Z', onWarning: () => {} };
        const run = async (f: () => Promise<unknown>) => {
          const out = join(dir, 'out.tape');
          try {
            const report = await f();
            const t = await scanTape(out);
            return { report, frames: t.frames.map((x) => t.bytes.subarray(x.offset, x.offset + x.length).toString('base64')) };
          } catch (e) {
            if (!(e instanceof TapedeckError)) throw e;
            return { error: e.code, message: e.message, details: e.details };
          }
        };
        const viaSplit = await run(() => importRecordings(src, join(dir, 'out.tape'), opts));
        const viaWhole = await run(() => writeImport(readRecordingFile(src, readFileSync(src, 'utf8'), 'har'), join(dir, 'out.tape'), opts));
        expect(viaSplit, `seed ${seed}`).toEqual(viaWhole);
        if ('frames' in viaSplit && viaSplit.frames.length > 0) compared++;
      }
      expect(compared).toBeGreaterThan(10);
    } finally {
      spy.mockRestore();
    }
  });
});
