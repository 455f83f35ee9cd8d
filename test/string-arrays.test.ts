// Message lists that are plain strings (prompts as the conversation tree keeps them), on each
// backend, against the reference canonicalizer and node:crypto: from JavaScript arrays and from
// their JSON text (as bytes and as a string). The strings are built to stop the core's 16-unit
// steps in every way: escapes (quotes, backslashes, every control character) right after
// non-ASCII units of every UTF-8 width and after surrogate pairs, at every position in a step,
// empty strings, and lone surrogates, which must be rejected however the list arrives.
import { afterEach, describe, expect, it } from 'vitest';
import { backend, hashMany, pathHashes, setBackend, TapedeckError } from '../src/index.ts';
import { errorOf } from './helpers.ts';
import { refDigest, refPathHashes, rng } from './reference.ts';

const ESCAPED = ['\n', '\t', '"', '\\', '\r', '\b', '\f', '\u0000', '\u0001', '\u001f', '\u007f', '/'];
const WIDE = ['é', 'ж', 'ß', '€', '北', '京', '予約', 'Ελ', 'مرحبا', '👍🏽', '𠜎', '\u{10ffff}', '\uffff', '\ue000'];
const ASCII = ['a', 'the ', 'cache ', 'x', 'Zürich ', '12345 ', ' ', 'temperature budget '];

/** A string of about `len` units mixing ASCII, escaped and non-ASCII pieces with the given odds. */
function prompt(r: () => number, len: number, escapes: number, wide: number): string {
  let s = '';
  while (s.length < len) {
    const x = r();
    const pool = x < escapes ? ESCAPED : x < escapes + wide ? WIDE : ASCII;
    s += pool[Math.floor(r() * pool.length)];
  }
  return s;
}

function list(seed: number, count: number): string[] {
  const r = rng(seed);
  return Array.from({ length: count }, (_, i) => (i % 17 === 5 ? '' : prompt(r, Math.floor(r() * (i % 7 === 0 ? 600 : 90)), 0.05 + r() * 0.3, r() * 0.5)));
}

describe('lists of plain strings', () => {
  const active = backend();
  afterEach(() => setBackend(active));

  it('path hashes and hashMany agree with the reference, from arrays and from JSON text', () => {
    for (const [seed, count] of [[1, 1], [2, 2], [3, 40], [4, 700], [5, 3000]] as const) {
      const strings = list(seed, count);
      const want = refPathHashes(strings);
      const json = JSON.stringify(strings);
      const bytes = new TextEncoder().encode(json);
      expect(pathHashes(strings), `seed ${seed}`).toEqual(want);
      expect(pathHashes(bytes), `seed ${seed} bytes`).toEqual(want);
      expect(pathHashes(json), `seed ${seed} text`).toEqual(want);
      expect(hashMany(strings), `seed ${seed}`).toEqual(want.messageHashes);
      expect(hashMany(bytes), `seed ${seed} bytes`).toEqual(want.messageHashes);
    }
  });

  it('an escaped unit at each position of a 16-unit step, after each kind of unit', () => {
    const strings: string[] = [];
    for (const before of ['a', 'é', '€', '👍', '\u{10ffff}']) {
      for (const esc of ['\n', '"', '\\', '\u0000', '\u001f']) {
        for (let at = 0; at < 40; at++) {
          const head = before.repeat(Math.ceil(at / before.length)).slice(0, at);
          // A surrogate pair cut in half by slice() leaves a lone surrogate: those go below.
          if (!head.isWellFormed()) continue;
          strings.push(head + esc + 'tail of the prompt with more than a step of text ' + before);
        }
      }
    }
    expect(pathHashes(strings)).toEqual(refPathHashes(strings));
    expect(pathHashes(new TextEncoder().encode(JSON.stringify(strings)))).toEqual(refPathHashes(strings));
    expect(hashMany(strings)).toEqual(strings.map(refDigest));
  });

  it('several escapes in one 16-unit step, each spelled every way JSON allows, at every position', () => {
    // Two-character escapes (\n, \", \\ ...) are canonical as they are; \/ and \u00XX spellings
    // are not, and a backslash pair may be cut by the end of a step.
    const short: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    const spell = (ch: string, how: number): string => {
      if (how === 1 && ch === '/') return '\\/';
      if (how === 2 || (ch.charCodeAt(0) < 0x20 && !short[ch])) return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
      return short[ch] ?? ch;
    };
    const r = rng(11);
    const strings: string[] = [];
    const texts: string[] = [];
    for (let at = 0; at < 34; at++) {
      for (const gap of [0, 1, 2, 5]) {
        for (const kinds of [['\n', '\t'], ['"', '\\'], ['\\', '\\'], ['/', '\n'], ['\u0001', '"'], ['\b', '\f', '\r']]) {
          const how = Math.floor(r() * 3);
          let s = 'x'.repeat(at);
          let t = s;
          for (const ch of kinds) {
            s += ch + 'y'.repeat(gap);
            t += spell(ch, how) + 'y'.repeat(gap);
          }
          strings.push(s + ' and the rest of the prompt');
          texts.push(`"${t} and the rest of the prompt"`);
        }
      }
    }
    const json = new TextEncoder().encode(`[${texts.join(',')}]`);
    expect(pathHashes(json)).toEqual(refPathHashes(strings));
    expect(hashMany(json)).toEqual(strings.map(refDigest));
    expect(pathHashes(strings)).toEqual(refPathHashes(strings));
  });

  it('empty strings and an empty list', () => {
    for (const strings of [[''], ['', ''], ['', 'a', ''], []]) {
      expect(pathHashes(strings)).toEqual(refPathHashes(strings));
      expect(pathHashes(JSON.stringify(strings))).toEqual(refPathHashes(strings));
      expect(hashMany(strings)).toEqual(strings.map(refDigest));
    }
  });

  it('a lone surrogate is rejected wherever it is, from arrays and from JSON text', () => {
    const long = 'the prompt goes on past a step '.repeat(3);
    const lone = [
      '\ud800',
      '\udc00',
      'é\ud83d\n' + long,
      'ab\ud83d"' + long,
      '北京\udc00\\' + long,
      long + '\ud83d',
      'x'.repeat(15) + '\ud83d' + long,
      '€'.repeat(31) + '\ud83d\n' + long,
      '\udc00\ud83d' + long,
    ];
    for (const bad of lone) {
      const strings = ['fine', 'also "fine"\n', bad, 'after'];
      const at = JSON.stringify(bad);
      expect(errorOf(() => pathHashes(strings)).code, at).toBe('E_LONE_SURROGATE');
      expect(errorOf(() => hashMany(strings)).code, at).toBe('E_LONE_SURROGATE');
      // JSON text: the escape JSON.stringify writes for it, as bytes and as a string.
      const json = JSON.stringify(strings);
      expect(errorOf(() => pathHashes(new TextEncoder().encode(json))).code, at).toBe('E_LONE_SURROGATE');
      expect(errorOf(() => pathHashes(json)).code, at).toBe('E_LONE_SURROGATE');
    }
  });

  it('JSON text with broken UTF-8 anywhere in a string: the same error and offset as the TypeScript engine', () => {
    const r = rng(77);
    const good = new TextEncoder().encode('Привет 北京 café 👍🏽 naïve 𠜎 east "quoted"\n tail');
    const outcome = (bytes: Uint8Array): string => {
      try {
        return pathHashes(bytes).digest;
      } catch (e) {
        if (!(e instanceof TapedeckError)) throw e;
        return `${e.code}@${e.offset}`;
      }
    };
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let broken = 0;
    for (let n = 0; n < 10000; n++) {
      // Text of 0-60 bytes cut from valid text, with 0-2 bytes replaced by anything.
      const start = Math.floor(r() * good.length);
      const body = Uint8Array.from(good.subarray(start, start + Math.floor(r() * 60)));
      for (let k = Math.floor(r() * 3); k > 0 && body.length > 0; k--) body[Math.floor(r() * body.length)] = Math.floor(r() * 256);
      const pad = 'x'.repeat(Math.floor(r() * 20));
      const bytes = new Uint8Array([...new TextEncoder().encode(`["a", "${pad}`), ...body, ...new TextEncoder().encode(`${pad}", "b"]`)]);
      const got = outcome(bytes);
      let valid = true;
      try {
        decoder.decode(body);
      } catch {
        valid = false;
      }
      if (!valid && !got.startsWith('E_')) throw new Error(`invalid UTF-8 accepted: ${Buffer.from(body).toString('hex')}`);
      if (!valid) broken++;
      setBackend('js');
      const want = outcome(bytes);
      setBackend(active);
      expect(got, Buffer.from(body).toString('hex')).toBe(want);
    }
    expect(broken).toBeGreaterThan(2000);
  });
});
