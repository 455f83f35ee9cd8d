// Drives assembly/sha256.ts directly through both wasm builds (scalar and 4-lane SIMD) and
// compares every digest with node:crypto. Test data lives past the module's original end of
// memory (grown here), so the module's static buffers are never touched by the test.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface ShaExports {
  memory: WebAssembly.Memory;
  sha256(ptr: number, len: number, out: number): void;
  sha256Init(state: number): void;
  sha256Update(state: number, ptr: number, len: number): void;
  sha256Final(state: number, out: number): void;
  sha256Many(jobs: number, count: number, out: number): void;
  pathChain(msgDigests: number, count: number, out: number): void;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const ref = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const refBytes = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

// Small deterministic PRNG so a failure names a reproducible case.
function rng(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}

class Inst {
  readonly x: ShaExports;
  private readonly start: number;
  private top: number;

  constructor(readonly file: string) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      throw new Error(`${file} is missing: build it with npx asc assembly/index.ts --config asconfig.json --target scalar|simd`, { cause: e });
    }
    this.x = new WebAssembly.Instance(new WebAssembly.Module(bytes), {}).exports as unknown as ShaExports;
    this.start = this.x.memory.buffer.byteLength;
    this.top = this.start;
  }

  /** Drops all test allocations (memory stays grown). */
  reset(): void {
    this.top = this.start;
  }

  /** Bump-allocates n bytes (8-aligned unless misalign is given) past the old end of memory. */
  alloc(n: number, misalign = 0): number {
    const p = ((this.top + 7) & ~7) + misalign;
    this.top = p + n;
    const have = this.x.memory.buffer.byteLength;
    if (this.top > have) this.x.memory.grow(Math.ceil((this.top - have) / 65536));
    return p;
  }

  /** A fresh view (growth detaches old ones). */
  get u8(): Uint8Array {
    return new Uint8Array(this.x.memory.buffer);
  }

  put(data: Uint8Array, misalign = 0): number {
    const p = this.alloc(data.length, misalign);
    this.u8.set(data, p);
    return p;
  }

  read(p: number, n: number): Uint8Array {
    return this.u8.slice(p, p + n);
  }

  /** Writes the (ptr, len) job records of sha256Many. */
  jobs(list: [number, number][]): number {
    const p = this.alloc(list.length * 8 + 8);
    const dv = new DataView(this.x.memory.buffer);
    list.forEach(([ptr, len], i) => {
      dv.setUint32(p + 8 * i, ptr, true);
      dv.setUint32(p + 8 * i + 4, len, true);
    });
    return p;
  }
}

const builds = [
  ['scalar', 'build/tapedeck.wasm'],
  ['simd', 'build/tapedeck-simd.wasm'],
] as const;

// Canary byte pattern around outputs, to catch writes past what a call may touch.
const CANARY = 0xa5;

function runMany(w: Inst, msgs: Uint8Array[], misalign = 0): void {
  w.reset();
  const ptrs = msgs.map((m, i) => w.put(m, (i + misalign) % 5));
  const jobs = w.jobs(msgs.map((m, i) => [ptrs[i]!, m.length]));
  const outLen = 32 * msgs.length;
  const out = w.alloc(outLen + 64, misalign % 4);
  w.u8.fill(CANARY, out, out + outLen + 64);
  w.x.sha256Many(jobs, msgs.length, out);
  const u8 = w.u8;
  for (let i = 0; i < msgs.length; i++) {
    const got = hex(u8.subarray(out + 32 * i, out + 32 * i + 32));
    if (got !== ref(msgs[i]!)) expect(got, `job ${i} of ${msgs.length}, length ${msgs[i]!.length}`).toBe(ref(msgs[i]!));
  }
  for (let i = outLen; i < outLen + 64; i++) expect(u8[out + i], `byte ${i - outLen} past the outputs`).toBe(CANARY);
  // The inputs must be left as they were.
  msgs.forEach((m, i) => {
    if (m.length && hex(u8.subarray(ptrs[i]!, ptrs[i]! + m.length)) !== hex(m)) expect.fail(`job ${i} input modified`);
  });
}

function refChain(m: Uint8Array[]): string[] {
  const out: string[] = [];
  let p: Buffer | undefined;
  for (const d of m) {
    p = p === undefined ? Buffer.from(d) : refBytes(`${p.toString('hex')}:${Buffer.from(d).toString('hex')}`);
    out.push(p.toString('hex'));
  }
  return out;
}

for (const [kind, file] of builds) {
  describe(`sha256 wasm (${kind}: ${file})`, () => {
    const w = new Inst(file);

    it('exports the documented functions', () => {
      for (const f of ['sha256', 'sha256Init', 'sha256Update', 'sha256Final', 'sha256Many', 'pathChain'] as const) {
        expect(typeof w.x[f], f).toBe('function');
      }
    });

    it('known answers (FIPS 180-4 / NIST examples)', () => {
      const cases: [string, string][] = [
        ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
        ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
        ['abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq', '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1'],
      ];
      for (const [msg, want] of cases) {
        w.reset();
        const p = w.put(Buffer.from(msg));
        const out = w.alloc(32);
        w.x.sha256(p, msg.length, out);
        expect(hex(w.read(out, 32)), JSON.stringify(msg)).toBe(want);
      }
    });

    it('one-shot: every length 0..1100, unaligned input and output', () => {
      w.reset();
      const data = randomBytes(1100 + 8);
      const base = w.put(data);
      const outs = w.alloc(64);
      for (let n = 0; n <= 1100; n++) {
        const off = n % 7;
        const out = outs + (n % 5);
        w.x.sha256(base + off, n, out);
        const got = hex(w.read(out, 32));
        const want = ref(data.subarray(off, off + n));
        if (got !== want) expect(got, `length ${n}`).toBe(want);
      }
    });

    it('one-shot: random large inputs', () => {
      const r = rng(7);
      for (const n of [65_536, 1_000_003, 3 * 1024 * 1024 + 17, 1 + r(4 << 20)]) {
        w.reset();
        const data = randomBytes(n);
        const p = w.put(data, 3);
        const out = w.alloc(32);
        w.x.sha256(p, n, out);
        expect(hex(w.read(out, 32)), `length ${n}`).toBe(ref(data));
      }
    });

    it('streaming: every split point (two updates)', () => {
      for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 200, 1000]) {
        w.reset();
        const data = randomBytes(n);
        const p = w.put(data);
        const st = w.alloc(128);
        const out = w.alloc(32);
        const want = ref(data);
        for (let cut = 0; cut <= n; cut++) {
          w.x.sha256Init(st);
          w.x.sha256Update(st, p, cut);
          w.x.sha256Update(st, p + cut, n - cut);
          w.x.sha256Final(st, out);
          const got = hex(w.read(out, 32));
          if (got !== want) expect(got, `length ${n} split at ${cut}`).toBe(want);
        }
      }
    });

    it('streaming: random multi-splits, including empty updates', () => {
      const r = rng(12345);
      for (let c = 0; c < 300; c++) {
        w.reset();
        const n = r(c < 200 ? 700 : 20_000);
        const data = randomBytes(n);
        const p = w.put(data, r(4));
        const st = w.alloc(128);
        const out = w.alloc(32);
        w.x.sha256Init(st);
        const cuts: number[] = [];
        for (let at = 0; at < n || cuts.length === 0; ) {
          const step = r(4) === 0 ? 0 : 1 + r(r(2) ? 70 : 300);
          const take = Math.min(step, n - at);
          w.x.sha256Update(st, p + at, take);
          cuts.push(take);
          at += take;
          if (n === 0) break;
        }
        w.x.sha256Final(st, out);
        const got = hex(w.read(out, 32));
        if (got !== ref(data)) expect(got, `case ${c}, length ${n}, chunks ${cuts.join(',')}`).toBe(ref(data));
      }
    });

    it('streaming: large input in large random chunks', () => {
      const r = rng(99);
      w.reset();
      const n = 2 * 1024 * 1024 + 1 + r(1 << 20);
      const data = randomBytes(n);
      const p = w.put(data);
      const st = w.alloc(128);
      const out = w.alloc(32);
      w.x.sha256Init(st);
      for (let at = 0; at < n; ) {
        const take = Math.min(1 + r(300_000), n - at);
        w.x.sha256Update(st, p + at, take);
        at += take;
      }
      w.x.sha256Final(st, out);
      expect(hex(w.read(out, 32))).toBe(ref(data));
    });

    it('streaming: final leaves the state usable; interleaved states are independent', () => {
      w.reset();
      const a = randomBytes(300);
      const b = randomBytes(170);
      const pa = w.put(a);
      const pb = w.put(b);
      const sa = w.alloc(128);
      const sb = w.alloc(128);
      const out = w.alloc(32);
      w.x.sha256Init(sa);
      w.x.sha256Init(sb);
      w.x.sha256Update(sa, pa, 100);
      w.x.sha256Update(sb, pb, 70);
      w.x.sha256Final(sa, out);
      expect(hex(w.read(out, 32))).toBe(ref(a.subarray(0, 100)));
      w.x.sha256Update(sa, pa + 100, 200);
      w.x.sha256Update(sb, pb + 70, 100);
      w.x.sha256Final(sb, out);
      expect(hex(w.read(out, 32))).toBe(ref(b));
      w.x.sha256Final(sa, out);
      expect(hex(w.read(out, 32))).toBe(ref(a));
      // The documented layout: H words (host order) then the u64 byte count.
      const dv = new DataView(w.x.memory.buffer);
      expect(dv.getUint32(sa, true)).not.toBe(0x6a09e667);
      expect(Number(dv.getBigUint64(sa + 32, true))).toBe(300);
      w.x.sha256Init(sa);
      expect(new DataView(w.x.memory.buffer).getUint32(sa, true)).toBe(0x6a09e667);
    });

    it('sha256Many: counts 0..9 over the padding-boundary lengths', () => {
      const lens = [0, 55, 56, 63, 64, 65, 119, 120, 1000];
      const r = rng(5);
      for (let count = 0; count <= 9; count++) {
        for (let rot = 0; rot < lens.length; rot++) {
          const msgs = Array.from({ length: count }, (_, i) => randomBytes(lens[(i + rot) % lens.length]!));
          runMany(w, msgs, rot);
        }
        // And random lengths.
        runMany(w, Array.from({ length: count }, () => randomBytes(r(300))), count);
      }
    });

    it('sha256Many / pathChain: count <= 0 writes nothing', () => {
      w.reset();
      const src = w.put(randomBytes(64));
      const jobs = w.jobs([[src, 64]]);
      const out = w.alloc(64);
      w.u8.fill(CANARY, out, out + 64);
      w.x.sha256Many(jobs, 0, out);
      w.x.sha256Many(jobs, -1, out);
      w.x.pathChain(src, 0, out);
      w.x.pathChain(src, -5, out);
      expect([...w.read(out, 64)].every((b) => b === CANARY)).toBe(true);
    });

    it('sha256Many: 1000+ jobs of mixed lengths', () => {
      const r = rng(2024);
      const special = [0, 55, 56, 63, 64, 65, 119, 120, 1000];
      const msgs = Array.from({ length: 1237 }, (_, i) => randomBytes(i % 3 === 0 ? special[r(special.length)]! : r(1100)));
      runMany(w, msgs);
      // All the same length, all empty, all one block.
      runMany(w, Array.from({ length: 1001 }, () => randomBytes(200)));
      runMany(w, Array.from({ length: 1003 }, () => new Uint8Array(0)));
      runMany(w, Array.from({ length: 1002 }, () => randomBytes(r(56))));
    });

    it('sha256Many: one huge job among many tiny ones (lane scheduling)', () => {
      const r = rng(77);
      const huge = randomBytes(1_000_000 + r(1000));
      for (const where of [0, 1, 2, 3, 4, 50, 99]) {
        const msgs = Array.from({ length: 100 }, () => randomBytes(r(130)));
        msgs[where] = huge;
        runMany(w, msgs);
      }
      // Two long jobs of different lengths finishing at different times, plus stragglers.
      runMany(w, [randomBytes(100_000), randomBytes(3), randomBytes(70_001), randomBytes(64), randomBytes(5000)]);
      // Everything long except one short job at the end.
      runMany(w, [randomBytes(9000), randomBytes(9001), randomBytes(9002), randomBytes(9003), randomBytes(1)]);
      runMany(w, [randomBytes(200_000)]);
    });

    it('sha256Many: jobs may share and overlap input bytes', () => {
      w.reset();
      const data = randomBytes(4000);
      const p = w.put(data);
      const list: [number, number][] = [];
      const r = rng(3);
      for (let i = 0; i < 57; i++) {
        const off = r(2000);
        list.push([p + off, r(2000)]);
      }
      const jobs = w.jobs(list);
      const out = w.alloc(32 * list.length);
      w.x.sha256Many(jobs, list.length, out);
      list.forEach(([q, n], i) => {
        expect(hex(w.read(out + 32 * i, 32)), `job ${i}`).toBe(ref(data.subarray(q - p, q - p + n)));
      });
    });

    it('never reads past the input: messages ending exactly at the end of memory', () => {
      w.reset();
      const msgs = [0, 1, 55, 63, 64, 65, 200, 1000].map((n) => randomBytes(n));
      const out = w.alloc(32 * msgs.length);
      const st = w.alloc(128);
      const jobs = w.alloc(8 * msgs.length);
      for (let rep = 0; rep < 2; rep++) {
        const end = w.x.memory.buffer.byteLength;
        const dv = new DataView(w.x.memory.buffer);
        msgs.forEach((m, i) => {
          const p = end - m.length;
          w.u8.set(m, p);
          w.x.sha256(p, m.length, out);
          expect(hex(w.read(out, 32)), `one-shot ${m.length}`).toBe(ref(m));
          w.x.sha256Init(st);
          w.x.sha256Update(st, p, m.length);
          w.x.sha256Final(st, out);
          expect(hex(w.read(out, 32)), `streaming ${m.length}`).toBe(ref(m));
          // Many: every job is this message, all at the very end.
          dv.setUint32(jobs + 8 * i, p, true);
          dv.setUint32(jobs + 8 * i + 4, m.length, true);
          w.x.sha256Many(jobs, i + 1, out);
          expect(hex(w.read(out + 32 * i, 32)), `many ${m.length}`).toBe(ref(m));
        });
        w.x.memory.grow(1);
      }
    });

    it('pathChain against the spec formula', () => {
      const r = rng(11);
      for (const count of [0, 1, 2, 3, 5, 16, 100, 1000]) {
        w.reset();
        const m = Array.from({ length: count }, () => randomBytes(32));
        // Make sure every final hex digit (the only variable byte of the last block) occurs.
        m.forEach((d, i) => {
          d[31] = (d[31]! & 0xf0) | (i & 15);
        });
        const src = w.put(Buffer.concat([Buffer.alloc(0), ...m]), r(4));
        const out = w.alloc(32 * count + 32);
        w.u8.fill(CANARY, out, out + 32 * count + 32);
        w.x.pathChain(src, count, out);
        const want = refChain(m);
        const u8 = w.u8;
        for (let i = 0; i < count; i++) {
          const got = hex(u8.subarray(out + 32 * i, out + 32 * i + 32));
          if (got !== want[i]) expect(got, `chain ${count}, p_${i}`).toBe(want[i]);
        }
        for (let i = 0; i < 32; i++) expect(u8[out + 32 * count + i]).toBe(CANARY);
      }
    });

    it('pathChain in place (out === msgDigests)', () => {
      w.reset();
      const m = Array.from({ length: 40 }, () => randomBytes(32));
      const p = w.put(Buffer.concat(m));
      w.x.pathChain(p, m.length, p);
      const want = refChain(m);
      for (let i = 0; i < m.length; i++) expect(hex(w.read(p + 32 * i, 32)), `p_${i}`).toBe(want[i]);
    });

    it('hashes after many calls stay correct (no state leaks between calls)', () => {
      w.reset();
      const data = randomBytes(777);
      const p = w.put(data);
      const out = w.alloc(32);
      const msgs = [randomBytes(5), randomBytes(500)];
      runMany(w, msgs);
      w.reset();
      const p2 = w.put(data);
      const out2 = w.alloc(32);
      w.x.sha256(p2, 777, out2);
      expect(hex(w.read(out2, 32))).toBe(ref(data));
      expect(p).toBe(p2);
      expect(out).toBe(out2);
    });
  });
}

describe('scalar and SIMD builds agree', () => {
  it('sha256Many digests are byte-identical across builds', () => {
    const [s, v] = builds.map(([, f]) => new Inst(f));
    const r = rng(8);
    const msgs = Array.from({ length: 333 }, () => randomBytes(r(900)));
    const outs = [s!, v!].map((w) => {
      const ptrs = msgs.map((m) => w.put(m));
      const jobs = w.jobs(msgs.map((m, i) => [ptrs[i]!, m.length]));
      const out = w.alloc(32 * msgs.length);
      w.x.sha256Many(jobs, msgs.length, out);
      return hex(w.read(out, 32 * msgs.length));
    });
    expect(outs[0]).toBe(outs[1]);
    expect(outs[0]).toBe(msgs.map(ref).join(''));
  });
});
