// The pure-TypeScript twin of assembly/json.ts, for places without WebAssembly. It follows the
// same algorithm step by step so that both report the same error code at the same byte offset;
// the backend tests hold them to that. Numbers use the engine's own Number()/String(), which are
// exact by the ECMAScript spec.

import { MAX_DEPTH } from '../errors.ts';
import { ERR, D } from './status.ts';

export interface JsonFailure {
  status: number;
  offset: number;
  detail: number;
}

export interface CanonicalResult {
  /** Canonical bytes: `out.subarray(0, length)`. */
  out: Uint8Array;
  length: number;
  /** For element mode: start/length pairs of each top-level element inside `out`. */
  spans: number[];
}

const HEX = '0123456789abcdef';

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}

/** RFC 3629 validity of the sequence at p (lead >= 0x80): its length, or 0. Mirrors utf8Len. */
function utf8Len(b: Uint8Array, p: number): number {
  const c = b[p]!;
  const c1 = b[p + 1]!;
  if (c < 0xc2) return 0;
  if (c < 0xe0) return (c1 & 0xc0) === 0x80 ? 2 : 0;
  const c2 = b[p + 2]!;
  if (c < 0xf0) {
    const lo = c === 0xe0 ? 0xa0 : 0x80;
    const hi = c === 0xed ? 0x9f : 0xbf;
    return c1 >= lo && c1 <= hi && (c2 & 0xc0) === 0x80 ? 3 : 0;
  }
  if (c > 0xf4) return 0;
  const c3 = b[p + 3]!;
  const lo = c === 0xf0 ? 0x90 : 0x80;
  const hi = c === 0xf4 ? 0x8f : 0xbf;
  return c1 >= lo && c1 <= hi && (c2 & 0xc0) === 0x80 && (c3 & 0xc0) === 0x80 ? 4 : 0;
}

/** UTF-16 code unit order of two UTF-8 keys (see compareKeys in assembly/json.ts). */
export function compareUtf8Keys(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  if (i === n) return a.length - b.length;
  let s = i;
  while (s > 0 && (a[s]! & 0xc0) === 0x80) s--;
  const la = a[s]!;
  const lb = b[s]!;
  if (la >= 0xf0 && (lb === 0xee || lb === 0xef)) return -1;
  if (lb >= 0xf0 && (la === 0xee || la === 0xef)) return 1;
  return a[i]! - b[i]!;
}

class Fail {
  constructor(
    readonly status: number,
    readonly offset: number,
    readonly detail: number,
  ) {}
}

interface Member {
  key: Uint8Array; // decoded UTF-8
  keyOffset: number;
  chunkStart: number;
  chunkLen: number; // -1: ignored
}

interface Frame {
  object: boolean;
  members: Member[];
  contentStart: number;
}

/**
 * Canonicalizes UTF-8 JSON text. Returns the canonical bytes or the failure (code, offset,
 * detail) exactly as the wasm reader would.
 */
export function canonicalizeBytes(
  input: Uint8Array,
  ignoreKeys: readonly Uint8Array[],
  elements: boolean,
  member?: Uint8Array,
  rootOnly = false,
): CanonicalResult | JsonFailure {
  try {
    return new Reader(input, ignoreKeys, rootOnly).parse(elements && !member, member);
  } catch (e) {
    if (e instanceof Fail) return { status: e.status, offset: e.offset, detail: e.detail };
    throw e;
  }
}

class Reader {
  private readonly b: Uint8Array;
  private readonly end: number;
  private out: Uint8Array;
  private o = 0;
  private escaped = false;

  constructor(
    input: Uint8Array,
    private readonly ignore: readonly Uint8Array[],
    private readonly rootOnly: boolean,
  ) {
    // Zero padding plays the role of the wasm INPUT_PAD: reads past the end see a control byte.
    this.b = new Uint8Array(input.length + 8);
    this.b.set(input);
    this.end = input.length;
    this.out = new Uint8Array(Math.max(64, input.length + 64));
  }

  private fail(status: number, offset: number, detail = 0): never {
    throw new Fail(status, offset, detail);
  }

  private failAt(p: number, detail: number): never {
    if (p >= this.end) this.fail(ERR.JSON, this.end, D.END);
    this.fail(ERR.JSON, p, detail);
  }

  private reserve(extra: number): void {
    if (this.o + extra <= this.out.length) return;
    const next = new Uint8Array(Math.max(this.out.length * 2, this.o + extra + 64));
    next.set(this.out.subarray(0, this.o));
    this.out = next;
  }

  private put(c: number): void {
    this.reserve(1);
    this.out[this.o++] = c;
  }

  private skipWs(p: number): number {
    while (isWs(this.b[p]!)) p++;
    return p;
  }

  private putEscaped(c: number): void {
    this.reserve(6);
    const out = this.out;
    out[this.o++] = 0x5c;
    let short = 0;
    if (c === 0x22 || c === 0x5c) short = c;
    else if (c === 0x08) short = 0x62;
    else if (c === 0x09) short = 0x74;
    else if (c === 0x0a) short = 0x6e;
    else if (c === 0x0c) short = 0x66;
    else if (c === 0x0d) short = 0x72;
    if (short) {
      out[this.o++] = short;
      return;
    }
    out[this.o++] = 0x75;
    out[this.o++] = 0x30;
    out[this.o++] = 0x30;
    out[this.o++] = HEX.charCodeAt(c >> 4);
    out[this.o++] = HEX.charCodeAt(c & 15);
  }

  private putUtf8(cp: number): void {
    this.reserve(4);
    const out = this.out;
    if (cp < 0x80) out[this.o++] = cp;
    else if (cp < 0x800) {
      out[this.o++] = 0xc0 | (cp >> 6);
      out[this.o++] = 0x80 | (cp & 0x3f);
    } else if (cp < 0x10000) {
      out[this.o++] = 0xe0 | (cp >> 12);
      out[this.o++] = 0x80 | ((cp >> 6) & 0x3f);
      out[this.o++] = 0x80 | (cp & 0x3f);
    } else {
      out[this.o++] = 0xf0 | (cp >> 18);
      out[this.o++] = 0x80 | ((cp >> 12) & 0x3f);
      out[this.o++] = 0x80 | ((cp >> 6) & 0x3f);
      out[this.o++] = 0x80 | (cp & 0x3f);
    }
  }

  private read4Hex(p: number): number {
    const b = this.b;
    const a = hexDigit(b[p]!), c = hexDigit(b[p + 1]!), d = hexDigit(b[p + 2]!), e = hexDigit(b[p + 3]!);
    if ((a | c | d | e) < 0) return -1;
    return (a << 12) | (c << 8) | (d << 4) | e;
  }

  /** The string at p (opening quote) in canonical form; returns the position after it. */
  private string(p: number): number {
    const b = this.b;
    this.escaped = false;
    this.put(0x22);
    p++;
    for (;;) {
      const c = b[p]!;
      if (c === 0x22) {
        this.put(0x22);
        return p + 1;
      }
      if (c === 0x5c) {
        this.escaped = true;
        const e = b[p + 1]!;
        if (e === 0x75) {
          const cu = this.read4Hex(p + 2);
          if (cu < 0) this.fail(ERR.JSON, p, D.ESCAPE);
          let cp = cu;
          const at = p;
          p += 6;
          if (cp >= 0xd800 && cp <= 0xdfff) {
            if (cp >= 0xdc00 || b[p] !== 0x5c || b[p + 1] !== 0x75) this.fail(ERR.SURROGATE, at);
            const lo = this.read4Hex(p + 2);
            if (lo < 0) this.fail(ERR.JSON, p, D.ESCAPE);
            if (lo < 0xdc00 || lo > 0xdfff) this.fail(ERR.SURROGATE, at);
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            p += 6;
          }
          if (cp < 0x20 || cp === 0x22 || cp === 0x5c) this.putEscaped(cp);
          else this.putUtf8(cp);
          continue;
        }
        let r = -1;
        if (e === 0x22 || e === 0x5c) r = e;
        else if (e === 0x2f) {
          this.put(0x2f);
          p += 2;
          continue;
        } else if (e === 0x62) r = 0x08;
        else if (e === 0x66) r = 0x0c;
        else if (e === 0x6e) r = 0x0a;
        else if (e === 0x72) r = 0x0d;
        else if (e === 0x74) r = 0x09;
        else this.fail(ERR.JSON, p, D.ESCAPE);
        this.putEscaped(r);
        p += 2;
        continue;
      }
      if (c < 0x20) {
        if (p >= this.end) this.fail(ERR.JSON, this.end, D.END);
        this.fail(ERR.JSON, p, D.CONTROL);
      }
      if (c < 0x80) {
        // Plain run: copy it in one go.
        let q = p + 1;
        for (;;) {
          const d = b[q]!;
          if (d === 0x22 || d === 0x5c || d < 0x20 || d >= 0x80) break;
          q++;
        }
        this.reserve(q - p);
        this.out.set(b.subarray(p, q), this.o);
        this.o += q - p;
        p = q;
        continue;
      }
      if (p >= this.end) this.fail(ERR.JSON, this.end, D.END);
      const n = utf8Len(b, p);
      if (n === 0 || p + n > this.end) this.fail(ERR.UTF8, p);
      this.reserve(n);
      for (let i = 0; i < n; i++) this.out[this.o++] = b[p + i]!;
      p += n;
    }
  }

  /** Decodes a validated string body to UTF-8 (only for keys that contain escapes). */
  private decodeKey(p: number, end: number): Uint8Array {
    const b = this.b;
    const bytes: number[] = [];
    const push = (cp: number) => {
      if (cp < 0x80) bytes.push(cp);
      else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
      else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
      else
        bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
    };
    while (p < end) {
      const c = b[p]!;
      if (c !== 0x5c) {
        bytes.push(c);
        p++;
        continue;
      }
      const e = b[p + 1]!;
      if (e === 0x75) {
        let cp = this.read4Hex(p + 2);
        p += 6;
        if (cp >= 0xd800 && cp < 0xdc00) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (this.read4Hex(p + 2) - 0xdc00);
          p += 6;
        }
        push(cp);
        continue;
      }
      const map: Record<number, number> = { 0x62: 8, 0x66: 12, 0x6e: 10, 0x72: 13, 0x74: 9 };
      bytes.push(map[e] ?? e);
      p += 2;
    }
    return Uint8Array.from(bytes);
  }

  private isIgnored(key: Uint8Array): boolean {
    for (const k of this.ignore) if (k.length === key.length && compareUtf8Keys(k, key) === 0) return true;
    return false;
  }

  private number(p: number): number {
    const b = this.b;
    const start = p;
    const digit = (x: number) => x >= 0x30 && x <= 0x39;
    if (b[p] === 0x2d) p++;
    const d = b[p]!;
    if (d === 0x30) {
      p++;
      if (digit(b[p]!)) this.fail(ERR.JSON, p, D.NUMBER);
    } else if (d >= 0x31 && d <= 0x39) {
      p++;
      while (digit(b[p]!)) p++;
    } else this.failAt(p, D.NUMBER);
    if (b[p] === 0x2e) {
      p++;
      if (!digit(b[p]!)) this.failAt(p, D.NUMBER);
      while (digit(b[p]!)) p++;
    }
    if ((b[p]! | 0x20) === 0x65) {
      p++;
      if (b[p] === 0x2b || b[p] === 0x2d) p++;
      if (!digit(b[p]!)) this.failAt(p, D.NUMBER);
      while (digit(b[p]!)) p++;
    }
    const x = Number(String.fromCharCode.apply(null, b.subarray(start, p) as unknown as number[]));
    if (!Number.isFinite(x)) this.fail(ERR.NON_FINITE, start);
    const s = String(x);
    this.reserve(s.length);
    for (let i = 0; i < s.length; i++) this.out[this.o++] = s.charCodeAt(i);
    return p;
  }

  private literal(p: number, word: string): number {
    for (let i = 0; i < word.length; i++) {
      if (this.b[p + i] !== word.charCodeAt(i)) this.fail(ERR.JSON, p, D.LITERAL);
    }
    this.reserve(word.length);
    for (let i = 0; i < word.length; i++) this.out[this.o++] = word.charCodeAt(i);
    return p + word.length;
  }

  /** Reads `"key":`, writes the member prefix, returns [value position, member]. */
  private member(p: number, comma: boolean, ignorable: boolean): [number, Member] {
    const b = this.b;
    if (b[p] !== 0x22) this.failAt(p, D.KEY);
    const keyAt = p;
    const chunk = this.o;
    if (comma) this.put(0x2c);
    const q = this.string(p);
    const key = this.escaped ? this.decodeKey(keyAt + 1, q - 1) : b.slice(keyAt + 1, q - 1);
    this.put(0x3a);
    p = this.skipWs(q);
    if (b[p] !== 0x3a) this.failAt(p, D.COLON);
    p = this.skipWs(p + 1);
    const ignored = ignorable && this.ignore.length > 0 && this.isIgnored(key);
    return [
      p,
      {
        key,
        keyOffset: keyAt,
        chunkStart: ignored || !comma ? chunk : chunk + 1,
        chunkLen: ignored ? -1 : 0,
      },
    ];
  }

  private closeObject(f: Frame): void {
    const ms = f.members;
    if (ms.length < 2) return;
    let sorted = true;
    for (let i = 1; i < ms.length; i++) {
      const c = compareUtf8Keys(ms[i - 1]!.key, ms[i]!.key);
      if (c === 0) this.fail(ERR.DUPLICATE, ms[i]!.keyOffset);
      if (c > 0) sorted = false;
    }
    if (sorted) return;
    const order = ms.slice().sort((x, y) => compareUtf8Keys(x.key, y.key));
    for (let i = 1; i < order.length; i++) {
      if (compareUtf8Keys(order[i - 1]!.key, order[i]!.key) === 0) {
        this.fail(ERR.DUPLICATE, Math.max(order[i - 1]!.keyOffset, order[i]!.keyOffset));
      }
    }
    const copy = this.out.slice(f.contentStart, this.o);
    let w = f.contentStart;
    let first = true;
    for (const m of order) {
      if (m.chunkLen < 0) continue;
      if (!first) this.out[w++] = 0x2c;
      first = false;
      this.out.set(copy.subarray(m.chunkStart - f.contentStart, m.chunkStart - f.contentStart + m.chunkLen), w);
      m.chunkStart = w; // where the chunk lives now (member mode locates its array by it)
      w += m.chunkLen;
    }
    this.o = w;
  }

  /**
   * `elements`: spans of the top-level array's elements. `member`: spans of the elements of
   * the array that is the value of the root object's member with that (UTF-8) name, stored
   * relative to the member's chunk until the root is sorted (as assembly/json.ts does).
   */
  parse(elements: boolean, member?: Uint8Array): CanonicalResult {
    const b = this.b;
    let p = this.skipWs(0);
    const stack: Frame[] = [];
    const spans: number[] = [];
    let elemStart = 0;
    const elemDepth = member ? 2 : 1;
    let elemActive = false;
    let pending: Member | undefined;
    let target: Member | undefined;
    let elemBase = 0;
    const isTarget = (m: Member) => member !== undefined && stack.length === 1 && m.chunkLen >= 0 && compareUtf8Keys(m.key, member) === 0;
    if ((elements || member) && b[p] !== (elements ? 0x5b : 0x7b)) {
      if (p >= this.end) this.fail(ERR.JSON, this.end, D.END);
      this.fail(ERR.NOT_ARRAY, p, member ? 1 : 0);
    }
    for (;;) {
      let c = b[p]!;
      let opened = false;
      const here = pending;
      pending = undefined;
      if (here && c !== 0x5b) this.fail(ERR.NOT_ARRAY, p, 2);
      if (c === 0x22) p = this.string(p);
      else if (c === 0x7b || c === 0x5b) {
        if (stack.length === MAX_DEPTH) this.fail(ERR.DEPTH, p);
        this.put(c);
        p = this.skipWs(p + 1);
        const frame: Frame = { object: c === 0x7b, members: [], contentStart: this.o };
        stack.push(frame);
        if (!frame.object) {
          if (b[p] === 0x5d) {
            p++;
            this.put(0x5d);
            stack.pop();
            if (here) target = here;
          } else {
            if (elements && stack.length === 1) {
              elemActive = true;
              elemStart = this.o;
            } else if (here) {
              elemActive = true;
              elemStart = this.o;
              target = here;
              elemBase = here.chunkStart;
            }
            opened = true;
          }
        } else if (b[p] === 0x7d) {
          p++;
          this.put(0x7d);
          stack.pop();
        } else {
          const [q, m] = this.member(p, false, !this.rootOnly || stack.length === 1);
          frame.members.push(m);
          if (isTarget(m)) pending = m;
          p = q;
          opened = true;
        }
      } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d) p = this.number(p);
      else if (c === 0x74) p = this.literal(p, 'true');
      else if (c === 0x66) p = this.literal(p, 'false');
      else if (c === 0x6e) p = this.literal(p, 'null');
      else this.failAt(p, D.VALUE);
      if (opened) continue;

      // After a complete value.
      let more = false;
      while (!more) {
        const f = stack[stack.length - 1];
        if (!f) {
          p = this.skipWs(p);
          if (p !== this.end) this.fail(ERR.JSON, p, D.TRAILING);
          if (member) {
            if (!target) this.fail(ERR.NOT_ARRAY, 0, 3);
            const base = target.chunkStart;
            for (let i = 0; i < spans.length; i += 2) spans[i]! += base;
          }
          return { out: this.out, length: this.o, spans };
        }
        p = this.skipWs(p);
        c = b[p]!;
        if (!f.object) {
          const spanning = elemActive && stack.length === elemDepth;
          if (spanning) spans.push(elemStart - elemBase, this.o - elemStart);
          if (c === 0x2c) {
            this.put(0x2c);
            p = this.skipWs(p + 1);
            if (spanning) elemStart = this.o;
            more = true;
          } else if (c === 0x5d) {
            this.put(0x5d);
            p++;
            if (spanning) elemActive = false;
            stack.pop();
          } else this.failAt(p, D.ARRAY_SEP);
          continue;
        }
        const m = f.members[f.members.length - 1]!;
        if (m.chunkLen < 0) this.o = m.chunkStart;
        else m.chunkLen = this.o - m.chunkStart;
        if (c === 0x2c) {
          const [q, next] = this.member(this.skipWs(p + 1), true, !this.rootOnly || stack.length === 1);
          f.members.push(next);
          if (isTarget(next)) pending = next;
          p = q;
          more = true;
        } else if (c === 0x7d) {
          this.closeObject(f);
          if (this.o > f.contentStart && this.out[f.contentStart] === 0x2c) {
            this.out.copyWithin(f.contentStart, f.contentStart + 1, this.o);
            this.o--;
            for (const m of f.members) m.chunkStart--;
          }
          this.put(0x7d);
          p++;
          stack.pop();
        } else this.failAt(p, D.OBJECT_SEP);
      }
      p = this.skipWs(p);
    }
  }
}
