// The tape file format (docs/tape-format.md): round trips, crash and corruption recovery, several
// processes appending at once, locking, compaction and byte-for-byte determinism.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { rejectionOf } from '../helpers.ts';
import {
  type HeldTapeLock,
  appendRecords,
  createTape,
  FRAME_HEADER_SIZE,
  readTape,
  rewriteTape,
  withTapeLock,
  type TapeContents,
} from '../../src/store/tape-file.ts';

const CREATED = '2026-01-01T00:00:00.000Z';
const root = mkdtempSync(join(tmpdir(), 'tapedeck-tape-'));
let n = 0;
const fresh = () => join(root, `t${n++}.tape`);
const worker = join(import.meta.dirname, 'append-worker.mjs');
let moduleUrl = '';

const errorOf = rejectionOf;

async function tapeWith(values: unknown[]): Promise<{ file: string; tape: TapeContents; bytes: Buffer }> {
  const file = fresh();
  await createTape(file, { created: CREATED, tapedeckVersion: '0.0.0-test' });
  await appendRecords(file, values);
  return { file, tape: await readTape(file), bytes: readFileSync(file) };
}

/** Write `bytes` to a new file and read it as a tape. */
async function readBytes(bytes: Uint8Array): Promise<TapeContents> {
  const file = fresh();
  writeFileSync(file, bytes);
  return readTape(file);
}

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker, moduleUrl, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker exited ${code}: ${err}`))));
  });
}

beforeAll(() => {
  // Child processes run plain Node 20 (no TypeScript): they load the compiled module, which
  // `npm test` rebuilds first (pretest), so it is the same source as the one under test here.
  const built = join(import.meta.dirname, '../../dist/store/tape-file.js');
  if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` (npm test does it first)`);
  moduleUrl = pathToFileURL(built).href;
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('round trip', () => {
  it('keeps plain, unicode, binary and typed values', async () => {
    const typed = [
      new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678)),
      new Map<unknown, unknown>([['a', 1], [2, 'two'], [{ k: 1 }, [new Map([['nested', new Set([1])]])]]]),
      new Set(['x', 1, null]),
      new Error('boom', { cause: { why: 'because' } }),
      new TypeError('bad type'),
      new Uint8Array([0, 1, 2, 254, 255]),
      new Float64Array([1.5, -2.25]),
      new Int32Array([-1, 2 ** 31 - 1]),
      123456789012345678901234567890n,
      -5n,
      { when: new Date(0), tags: new Set(['a']), meta: new Map([['k', { v: [1, 2] }]]) },
    ];
    const values: unknown[] = [...typed];
    for (let i = 0; i < 300; i++) {
      values.push({
        id: i,
        text: `héllo wörld 你好 🎉 ${'x'.repeat(i % 50)}`,
        n: i % 7 === 0 ? null : i * 1.25,
        big: 2 ** 53 - i,
        ok: i % 2 === 0,
        list: [i, `${i}`, { deep: [[i]] }],
        bytes: new Uint8Array(i % 17).fill(i & 0xff),
        empty: {},
        undef: undefined,
      });
    }
    const { tape, file } = await tapeWith(values);
    expect(tape.warnings).toEqual([]);
    expect(tape.header).toEqual({ formatVersion: 1, created: CREATED, tapedeckVersion: '0.0.0-test', salt: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(tape.records.map((r) => r.value)).toEqual(values);
    const map = tape.records[1]?.value as Map<unknown, unknown>;
    expect(map).toBeInstanceOf(Map);
    expect([...map.keys()]).toEqual(['a', 2, { k: 1 }]);
    const err = tape.records[3]?.value as Error;
    expect(err).toBeInstanceOf(Error);
    expect([err.message, (err as Error & { cause: unknown }).cause]).toEqual(['boom', { why: 'because' }]);
    expect(tape.records[4]?.value).toBeInstanceOf(TypeError);
    expect(tape.records[6]?.value).toBeInstanceOf(Float64Array);
    expect(tape.records[8]?.value).toBe(123456789012345678901234567890n);
    // Offsets and lengths tile the file exactly.
    let at = tape.records[0]!.offset;
    for (const r of tape.records) {
      expect(r.offset).toBe(at);
      at += r.length;
    }
    expect(at).toBe(tape.size);
    expect(tape.size).toBe(readFileSync(file).length);
  });

  it('returns the offsets it wrote and appends after existing records', async () => {
    const { file, tape } = await tapeWith([1, 2]);
    const { offsets } = await appendRecords(file, ['a', 'b']);
    expect(offsets[0]).toBe(tape.size);
    const after = await readTape(file);
    expect(after.records.map((r) => r.offset).slice(2)).toEqual(offsets);
    expect(after.records.map((r) => r.value)).toEqual([1, 2, 'a', 'b']);
    expect((await appendRecords(file, [])).offsets).toEqual([]);
  });

  it('rejects cycles before writing anything', async () => {
    const { file, bytes } = await tapeWith([1]);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = [cyclic];
    expect((await errorOf(appendRecords(file, [1, cyclic]))).code).toBe('E_CYCLE');
    expect(readFileSync(file).equals(bytes)).toBe(true);
  });
});

describe('torn tail', () => {
  it('truncation anywhere inside the last frame loses only that frame', async () => {
    const values = [{ a: 1 }, 'second', { last: 'z'.repeat(40), n: [1, 2, 3] }];
    const { bytes, tape } = await tapeWith(values);
    const last = tape.records[2]!;
    expect(last.offset + last.length).toBe(bytes.length);
    const clean = await readBytes(bytes.subarray(0, last.offset));
    expect(clean.warnings).toEqual([]);
    expect(clean.records.map((r) => r.value)).toEqual(values.slice(0, 2));
    for (let cut = last.offset + 1; cut < bytes.length; cut++) {
      const t = await readBytes(bytes.subarray(0, cut));
      expect(t.records.map((r) => r.value)).toEqual(values.slice(0, 2));
      expect(t.warnings).toHaveLength(1);
      expect(t.warnings[0]).toMatchObject({ code: 'E_TAPE_TORN_TAIL', offset: last.offset });
    }
  });

  it('a torn tail followed by later appends is skipped as corrupt, losing nothing else', async () => {
    const { file, bytes, tape } = await tapeWith(['a', 'b', 'c']);
    const last = tape.records[2]!;
    writeFileSync(file, bytes.subarray(0, last.offset + 5));
    await appendRecords(file, ['d']);
    const t = await readTape(file);
    expect(t.records.map((r) => r.value)).toEqual(['a', 'b', 'd']);
    expect(t.warnings).toMatchObject([{ code: 'E_TAPE_CORRUPT', offset: last.offset }]);
  });
});

describe('corruption in the middle', () => {
  const values = ['zero', { one: 1 }, ['two', 2], 'three', { four: new Uint8Array([4, 4, 4, 4]) }];

  async function damaged(mutate: (b: Buffer, victim: { offset: number; length: number }) => Buffer) {
    const { bytes, tape } = await tapeWith(values);
    const victim = tape.records[2]!;
    return { t: await readBytes(mutate(Buffer.from(bytes), victim)), victim };
  }

  function expectOnlyVictimLost(t: TapeContents, offset: number) {
    expect(t.records.map((r) => r.value)).toEqual([values[0], values[1], values[3], values[4]]);
    expect(t.warnings).toHaveLength(1);
    expect(t.warnings[0]).toMatchObject({ code: 'E_TAPE_CORRUPT', offset });
    expect(t.warnings[0]!.message).toContain(String(offset));
  }

  it('a flipped payload byte (CRC mismatch)', async () => {
    for (let k = 0; k < 8; k++) {
      const { t, victim } = await damaged((b, v) => {
        const at = v.offset + FRAME_HEADER_SIZE + (k % (v.length - FRAME_HEADER_SIZE));
        b[at] = b[at]! ^ (1 << k);
        return b;
      });
      expectOnlyVictimLost(t, victim.offset);
    }
  });

  it('a broken length field (too small, too large, huge, past the end)', async () => {
    for (const bad of [(l: number) => l - 1, (l: number) => l + 1, () => 0, () => 0xffffffff, () => 100_000]) {
      const { t, victim } = await damaged((b, v) => {
        b.writeUInt32BE(bad(v.length - FRAME_HEADER_SIZE) >>> 0, v.offset + 4);
        return b;
      });
      expectOnlyVictimLost(t, victim.offset);
    }
  });

  it('a broken frame magic or CRC field', async () => {
    for (const at of [0, 3, 8, 11]) {
      const { t, victim } = await damaged((b, v) => {
        b[v.offset + at] = b[v.offset + at]! ^ 0x5a;
        return b;
      });
      expectOnlyVictimLost(t, victim.offset);
    }
  });

  it('garbage bytes inserted between frames are skipped and every record survives', async () => {
    const { bytes, tape } = await tapeWith(values);
    const at = tape.records[2]!.offset;
    for (const garbage of [Buffer.from([0]), Buffer.from('not a frame at all'), Buffer.from([0xc1, 0x54, 0x44, 0x52, 0, 0, 0, 1, 9, 9, 9, 9, 0x90])]) {
      const t = await readBytes(Buffer.concat([bytes.subarray(0, at), garbage, bytes.subarray(at)]));
      expect(t.records.map((r) => r.value)).toEqual(values);
      expect(t.warnings).toHaveLength(1);
      expect(t.warnings[0]).toMatchObject({ code: 'E_TAPE_CORRUPT', offset: at });
    }
  });

  it('a frame with a valid CRC but undecodable msgpack is skipped exactly', async () => {
    const { bytes, tape } = await tapeWith(values);
    const at = tape.records[2]!.offset;
    const payload = Buffer.from([0x92, 0x01]); // an array of two holding one item
    const head = Buffer.alloc(FRAME_HEADER_SIZE);
    bytes.copy(head, 0, 0 + at, at + 4); // frame magic
    head.writeUInt32BE(payload.length, 4);
    const { crc32 } = await import('node:zlib');
    head.writeUInt32BE(crc32(payload), 8);
    const t = await readBytes(Buffer.concat([bytes.subarray(0, at), head, payload, bytes.subarray(at)]));
    expect(t.records.map((r) => r.value)).toEqual(values);
    expect(t.warnings).toMatchObject([{ code: 'E_TAPE_CORRUPT', offset: at }]);
  });

  it('damage in several places is reported once per place', async () => {
    const { bytes, tape } = await tapeWith(values);
    const b = Buffer.from(bytes);
    for (const i of [1, 3]) {
      const at = tape.records[i]!.offset + FRAME_HEADER_SIZE;
      b[at] = b[at]! ^ 0xff;
    }
    const t = await readBytes(b);
    expect(t.records.map((r) => r.value)).toEqual([values[0], values[2], values[4]]);
    expect(t.warnings.map((w) => [w.code, w.offset])).toEqual([
      ['E_TAPE_CORRUPT', tape.records[1]!.offset],
      ['E_TAPE_CORRUPT', tape.records[3]!.offset],
    ]);
  });
});

describe('header', () => {
  it('a file that is not a tape throws E_TAPE_CORRUPT with the file and a hint, and appends leave it alone', async () => {
    const file = fresh();
    const cases: Buffer[] = [
      Buffer.from('GARBAGE! and no record frame anywhere in these bytes'),
      Buffer.from(readFileSync(join(import.meta.dirname, '../../package.json'))),
    ];
    for (const b of cases) {
      writeFileSync(file, b);
      const e = await errorOf(readTape(file));
      expect(e.code).toBe('E_TAPE_CORRUPT');
      expect(e.details.file).toBe(file);
      expect(e.hint).toBeTruthy();
      expect(e.message).toContain(file);
      expect(typeof e.offset).toBe('number');
      expect((await errorOf(appendRecords(file, [1]))).code).toBe('E_TAPE_CORRUPT');
      expect(readFileSync(file).equals(b)).toBe(true);
    }
  });

  it('a damaged header costs the header, not the records: read with a warning, repaired by a rewrite or the next append', async () => {
    const values = ['zero', { one: 1 }, ['two', 2]];
    const { bytes, file } = await tapeWith(values);
    const metaEnd = (await readTape(file)).records[0]!.offset;
    const flip = (at: number, bit: number) => {
      const b = Buffer.from(bytes);
      b[at] = b[at]! ^ (1 << bit);
      return b;
    };
    const cases: [string, Buffer][] = [];
    // Every single-bit flip anywhere in the header: magic, version, metadata length, CRC and
    // the metadata itself (the `created` timestamp among it).
    for (let at = 0; at < metaEnd; at++) for (let bit = 0; bit < 8; bit++) cases.push([`bit ${bit} of byte ${at}`, flip(at, bit)]);
    cases.push(['garbage magic', Buffer.concat([Buffer.from('GARBAGE!'), bytes.subarray(8)])]);
    cases.push(['huge metadata length', (() => { const b = Buffer.from(bytes); b.writeUInt32BE(0x7fffffff, 10); return b; })()]);
    const createdAt = bytes.indexOf(Buffer.from(CREATED));
    expect(createdAt).toBeGreaterThan(18);
    let damaged = 0;
    for (const [what, b] of cases) {
      const t = await readBytes(b);
      expect(t.records.map((r) => r.value), what).toEqual(values);
      if (t.warnings.length === 0) continue; // a flip msgpack cannot see (none expected, but harmless)
      damaged++;
      expect(t.warnings, what).toHaveLength(1);
      expect(t.warnings[0]!.code, what).toBe('E_TAPE_HEADER');
      expect(t.warnings[0]!.message).toContain('tapedeck prune');
      expect(t.header.headerLost).toBe(true);
    }
    expect(damaged).toBe(cases.length);

    // The `created` flip from the report: `tapedeck prune` (rewriteTape) writes a fresh header.
    const f1 = fresh();
    writeFileSync(f1, flip(createdAt + 3, 0));
    expect(await rewriteTape(f1, () => true)).toMatchObject({ kept: 3, dropped: 0 });
    const repaired = await readTape(f1);
    expect(repaired.warnings).toEqual([]);
    expect(repaired.records.map((r) => r.value)).toEqual(values);
    expect(Date.parse(repaired.header.created)).toBeGreaterThan(Date.now() - 60_000);

    // A record run appends to it: the append repairs the header first, every record is kept.
    const f2 = fresh();
    writeFileSync(f2, flip(createdAt + 3, 0));
    await appendRecords(f2, ['three']);
    const appended = await readTape(f2);
    expect(appended.warnings).toEqual([]);
    expect(appended.records.map((r) => r.value)).toEqual([...values, 'three']);
  });

  it('a 0-byte file (or a header cut short) is an empty tape: a warning, and the next append writes the header', async () => {
    const { bytes } = await tapeWith([]);
    for (const b of [Buffer.alloc(0), bytes.subarray(0, 10), bytes.subarray(0, bytes.length - 1)]) {
      const file = fresh();
      writeFileSync(file, b);
      const t = await readTape(file);
      expect(t.records).toEqual([]);
      expect(t.warnings).toHaveLength(1);
      expect(['E_TAPE_EMPTY', 'E_TAPE_HEADER']).toContain(t.warnings[0]!.code);
      expect((await errorOf(createTape(file))).code).toBe('E_TAPE_EXISTS');
      await appendRecords(file, ['first', 'second']);
      const after = await readTape(file);
      expect(after.warnings).toEqual([]);
      expect(after.records.map((r) => r.value)).toEqual(['first', 'second']);
    }
  });

  it('200 random corruptions of a 1,000-record tape lose no record outside the damaged bytes', async () => {
    const values = Array.from({ length: 1000 }, (_, i) => ({ i, text: `record ${i} ${'x'.repeat(i % 40)}` }));
    const { bytes, tape } = await tapeWith(values);
    const frames = tape.records.map((r) => [r.offset, r.offset + r.length] as const);
    let seed = 0x2545f491;
    const rand = (n: number) => {
      // xorshift32: reproducible runs, no dependency
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    let lostBeyond = 0;
    let headerHits = 0;
    for (let k = 0; k < 200; k++) {
      const b = Buffer.from(bytes);
      // One damaged region: a bit flip, a few random bytes, or a zeroed run; every 10th in the header.
      const at = k % 10 === 0 ? rand(frames[0]![0]) : rand(b.length);
      const len = [1, 1 + rand(8), 1 + rand(200)][k % 3]!;
      const end = Math.min(b.length, at + len);
      if (k % 3 === 0) b[at] = b[at]! ^ (1 << rand(8));
      else for (let i = at; i < end; i++) b[i] = k % 2 ? rand(256) : 0;
      if (at < frames[0]![0]) headerHits++;
      const t = await readBytes(b);
      const got = new Set(t.records.map((r) => (r.value as { i: number }).i));
      values.forEach((_, i) => {
        const [s, e] = frames[i]!;
        const touched = s < end && at < e;
        if (!touched && !got.has(i)) lostBeyond++;
      });
      for (const r of t.records) expect(r.value).toEqual(values[(r.value as { i: number }).i]);
    }
    expect(headerHits).toBeGreaterThanOrEqual(20);
    expect(lostBeyond).toBe(0);
  });

  it('a newer format version is E_TAPE_VERSION; a version newer than its own writer makes is damage', async () => {
    const file = fresh();
    await createTape(file, { created: CREATED, tapedeckVersion: '99.0.0' });
    const b = readFileSync(file);
    b.writeUInt16BE(2, 8);
    writeFileSync(file, b);
    expect((await errorOf(readTape(file))).code).toBe('E_TAPE_VERSION');
    expect((await errorOf(appendRecords(file, [1]))).code).toBe('E_TAPE_VERSION');
    // Written by tapedeck 0.0.0, which writes format 1: the field is damaged, the records are fine.
    const { bytes } = await tapeWith(['a']);
    const d = Buffer.from(bytes);
    d.writeUInt16BE(3, 8);
    const t = await readBytes(d);
    expect(t.records.map((r) => r.value)).toEqual(['a']);
    expect(t.warnings.map((w) => w.code)).toEqual(['E_TAPE_HEADER']);
  });

  it('createTape never clobbers; missing tapes are E_TAPE_NOT_FOUND', async () => {
    const { file, bytes } = await tapeWith(['keep me']);
    expect((await errorOf(createTape(file))).code).toBe('E_TAPE_EXISTS');
    expect(readFileSync(file).equals(bytes)).toBe(true);
    const missing = fresh();
    expect((await errorOf(readTape(missing))).code).toBe('E_TAPE_NOT_FOUND');
    expect((await errorOf(appendRecords(missing, [1]))).code).toBe('E_TAPE_NOT_FOUND');
    expect(existsSync(missing)).toBe(false);
    expect(existsSync(`${missing}.lock`)).toBe(false);
  });

  it('a directory given as the tape is "<dir> is a directory, not a tape file" with a file path that would do, not EISDIR', async () => {
    const folder = join(root, `folder-${n++}`);
    mkdirSync(folder);
    for (const e of [await errorOf(readTape(folder)), await errorOf(createTape(folder)), await errorOf(appendRecords(folder, [1]))]) {
      expect(e.code, e.message).toBe('E_TAPE_IO');
      expect(e.message).toBe(`${folder} is a directory, not a tape file. Give a file path such as ${join(folder, 'chat.tape')}.`);
      expect(e.hint).toBe(`Give a file path such as ${join(folder, 'chat.tape')}.`);
    }
  });

  it('defaults created to now and tapedeckVersion to the package version', async () => {
    const file = fresh();
    await createTape(file);
    const { header, records, warnings } = await readTape(file);
    expect(Date.parse(header.created)).toBeGreaterThan(Date.now() - 60_000);
    expect(header.tapedeckVersion).toBe(JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')).version);
    expect([records, warnings]).toEqual([[], []]);
  });
});

describe('determinism', () => {
  it('same created, salt and values give byte-identical files, however the appends are split', async () => {
    const values = [{ b: 1, a: [new Date(5), new Map([[1, 2]])] }, 'x', new Uint8Array([1, 2]), { nested: { z: null } }];
    const one = fresh();
    const two = fresh();
    for (const f of [one, two]) await createTape(f, { created: CREATED, tapedeckVersion: '1.2.3', salt: 'fedcba9876543210fedcba9876543210' });
    await appendRecords(one, values);
    for (const v of values) await appendRecords(two, [v]);
    expect(readFileSync(one).equals(readFileSync(two))).toBe(true);
    // A rewrite that keeps everything changes nothing either.
    await rewriteTape(two, () => true);
    expect(readFileSync(one).equals(readFileSync(two))).toBe(true);
  });
});

describe('rewriteTape', () => {
  it('keeps the header bytes, drops what keep rejects, and cleans damage', async () => {
    const values = Array.from({ length: 10 }, (_, i) => ({ id: i }));
    const { file, bytes, tape } = await tapeWith(values);
    const headerEnd = tape.records[0]!.offset;
    const damaged = Buffer.from(bytes);
    const flip = tape.records[9]!.offset + FRAME_HEADER_SIZE;
    damaged[flip] = damaged[flip]! ^ 1;
    writeFileSync(file, damaged);
    const res = await rewriteTape(file, (r) => (r.value as { id: number }).id % 2 === 0);
    expect(res).toMatchObject({ kept: 5, dropped: 4 });
    expect(res.warnings).toMatchObject([{ code: 'E_TAPE_CORRUPT' }]);
    const after = readFileSync(file);
    expect(after.subarray(0, headerEnd).equals(bytes.subarray(0, headerEnd))).toBe(true);
    const t = await readTape(file);
    expect(t.warnings).toEqual([]);
    expect(t.records.map((r) => r.value)).toEqual([0, 2, 4, 6, 8].map((id) => ({ id })));
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('sees a record another process appended while the rewrite waited for the lock', async () => {
    const { file } = await tapeWith([{ worker: 'main', seq: 0 }, { worker: 'main', seq: 1 }]);
    const child = spawn(process.execPath, [worker, moduleUrl, file, 'hold-append', 'child', '300'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      child.on('exit', () => reject(new Error('worker exited before locking')));
    });
    const seen: unknown[] = [];
    const res = await rewriteTape(file, (r) => {
      seen.push(r.value);
      return (r.value as { seq: number }).seq !== 1;
    });
    expect(await exited).toBe(0);
    expect(seen).toEqual([{ worker: 'main', seq: 0 }, { worker: 'main', seq: 1 }, { worker: 'child', seq: 0, late: true }]);
    expect(res).toMatchObject({ kept: 2, dropped: 1 });
    expect((await readTape(file)).records.map((r) => r.value)).toEqual([{ worker: 'main', seq: 0 }, { worker: 'child', seq: 0, late: true }]);
  });
});

describe('parallel writers', () => {
  it('4 processes x 50 appends: 200 records, none lost or interleaved, each in order', async () => {
    const file = fresh();
    await createTape(file, { created: CREATED });
    const ids = ['w0', 'w1', 'w2', 'w3'];
    await Promise.all(ids.map((id) => run([file, 'append', id, '50'])));
    const t = await readTape(file);
    expect(t.warnings).toEqual([]);
    expect(t.records).toHaveLength(200);
    for (const id of ids) {
      const seqs = t.records.map((r) => r.value as { worker: string; seq: number }).filter((v) => v.worker === id).map((v) => v.seq);
      expect(seqs).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }
    expect(existsSync(`${file}.lock`)).toBe(false);
  }, 30_000);

  it('a writer killed with SIGKILL mid-stream loses nothing it reported, and its lock is taken over', async () => {
    const file = fresh();
    await createTape(file, { created: CREATED });
    const child = spawn(process.execPath, [worker, moduleUrl, file, 'append-report', 'k', '100000'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d;
        if (out.split('\n').length > 40) resolve();
      });
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.on('exit', r));
    const reported = out.split('\n').filter((l) => /^\d+$/.test(l)).map(Number);
    await appendRecords(file, ['after'], { timeoutMs: 5000 });
    const t = await readTape(file);
    const seqs = t.records.slice(0, -1).map((r) => (r.value as { seq: number }).seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i));
    expect(seqs.length).toBeGreaterThanOrEqual(reported.length);
    expect(t.records.at(-1)?.value).toBe('after');
    // A kill cannot tear a single write() to the page cache, so there is normally nothing to
    // report; if it ever does, it must be the one damaged spot before 'after'.
    expect(t.warnings.length).toBeLessThanOrEqual(1);
  });

  it('concurrent appends within one process serialize too', async () => {
    const file = fresh();
    await createTape(file, { created: CREATED });
    await Promise.all(Array.from({ length: 20 }, (_, i) => appendRecords(file, [i + 1, -(i + 1)])));
    const t = await readTape(file);
    expect(t.warnings).toEqual([]);
    const vals = t.records.map((r) => r.value as number);
    expect(vals).toHaveLength(40);
    for (let k = 0; k < 40; k += 2) expect(vals[k + 1]).toBe(-vals[k]!); // each call's frames stay together
  });
});

describe('locking', () => {
  it('takes over a lock whose pid is dead', async () => {
    const { file } = await tapeWith([]);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: dead, host: hostname(), time: new Date().toISOString(), token: 'x' }));
    await appendRecords(file, ['after takeover'], { timeoutMs: 2000 });
    expect((await readTape(file)).records.map((r) => r.value)).toEqual(['after takeover']);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('takes over a lock older than staleMs, even from another host', async () => {
    const { file } = await tapeWith([]);
    const lock = `${file}.lock`;
    writeFileSync(lock, JSON.stringify({ pid: 1, host: 'elsewhere', time: '2020-01-01T00:00:00.000Z' }));
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    await appendRecords(file, ['ok'], { timeoutMs: 2000 });
    expect((await readTape(file)).records).toHaveLength(1);
  });

  it('an empty lock file (holder killed between create and write) is taken over after a grace period', async () => {
    const { file } = await tapeWith([]);
    const lock = `${file}.lock`;
    writeFileSync(lock, '');
    expect((await errorOf(appendRecords(file, ['early'], { timeoutMs: 100 }))).message).toContain('names no owner');
    const old = new Date(Date.now() - 5000);
    utimesSync(lock, old, old);
    await appendRecords(file, ['late'], { timeoutMs: 1000 });
    expect((await readTape(file)).records.map((r) => r.value)).toEqual(['late']);
  });

  it('a live foreign lock times out with E_TAPE_LOCKED naming the holder', async () => {
    const { file, bytes } = await tapeWith([]);
    const lock = `${file}.lock`;
    const holder = { pid: process.pid, host: hostname(), time: new Date().toISOString(), token: 'someone-else' };
    writeFileSync(lock, JSON.stringify(holder));
    const started = Date.now();
    const e = await errorOf(appendRecords(file, ['no'], { timeoutMs: 300 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(e.code).toBe('E_TAPE_LOCKED');
    expect(e.message).toContain(`pid ${process.pid}`);
    expect(e.message).toContain(hostname());
    expect(e.details.file).toBe(file);
    expect(e.hint).toContain(lock);
    // Read by CLI users too, who have no timeoutMs to raise: what they can do comes first.
    expect(e.hint).toMatch(/otherwise run again once it is done/);
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toEqual(holder); // not ours to remove
    rmSync(lock);
  });

  it('appends under the held lock inside its own callback, so check-then-append is atomic', async () => {
    const { file } = await tapeWith(['a']);
    let kept: HeldTapeLock | undefined;
    const res = await withTapeLock(file, async (lock) => {
      kept = lock;
      const { records } = await readTape(file);
      if (!records.some((r) => r.value === 'b')) await appendRecords(file, ['b'], { lock });
      return records.length;
    }, { timeoutMs: 1000 });
    expect(res).toBe(1);
    expect((await readTape(file)).records.map((r) => r.value)).toEqual(['a', 'b']);
    // Without the handle the same call inside queues on the lock file like anyone else: it
    // gives up rather than write past the holder.
    await expect(withTapeLock(file, async () => appendRecords(file, ['c'], { timeoutMs: 50 }), { timeoutMs: 1000 })).rejects.toMatchObject({ code: 'E_TAPE_LOCKED' });
    // A handle kept after its callback ended is refused.
    await expect(appendRecords(file, ['d'], { lock: kept })).rejects.toMatchObject({ code: 'E_ARG' });
    expect((await readTape(file)).records.map((r) => r.value)).toEqual(['a', 'b']);
  });


  it('a holder paused past staleMs on this host keeps its lock: its pid is alive, so nothing writes past it', async () => {
    const { file } = await tapeWith([{ worker: 'main', seq: 0 }]);
    const child = spawn(process.execPath, [worker, moduleUrl, file, 'hold-append', 'child', '400'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
      child.on('exit', () => reject(new Error('worker exited before locking')));
    });
    // Paused (SIGSTOP, a debugger, a laptop lid): its heartbeat stops touching the lock file.
    child.kill('SIGSTOP');
    try {
      const e = await errorOf(appendRecords(file, [{ worker: 'main', seq: 1 }], { timeoutMs: 1200, staleMs: 200 }));
      expect(e.code).toBe('E_TAPE_LOCKED');
      expect(e.message).toContain(`pid ${child.pid}`);
    } finally {
      child.kill('SIGCONT');
    }
    expect(await exited).toBe(0);
    await appendRecords(file, [{ worker: 'main', seq: 1 }], { timeoutMs: 2000 });
    expect((await readTape(file)).records.map((r) => r.value)).toEqual([{ worker: 'main', seq: 0 }, { worker: 'child', seq: 0, late: true }, { worker: 'main', seq: 1 }]);
  }, 20_000);

  it('a lock whose pid now belongs to another process (the holder died, its pid was reused) is taken over', async () => {
    const { file } = await tapeWith([]);
    // This process is alive, but it is not the process that started at the recorded time.
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), time: new Date().toISOString(), token: 'x', start: '1' }));
    await appendRecords(file, ['after takeover'], { timeoutMs: 2000 });
    expect((await readTape(file)).records.map((r) => r.value)).toEqual(['after takeover']);
  });

  it('releases the lock when the callback throws', async () => {
    const { file } = await tapeWith([]);
    await expect(withTapeLock(file, async () => { throw new Error('inner'); })).rejects.toThrow('inner');
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});
