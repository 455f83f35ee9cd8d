// SHA-256, digests, path hashes and trace tokens against node:crypto references.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend, hashJSON, hashMany, hashValue, pathHashes, sha256, traceToken } from '../src/index.ts';
import { errorOf } from './helpers.ts';
import { refDigest, refPathHashes, refSha256Hex, refTraceToken, rng, utf8 } from './reference.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe(`sha256 (${backend()})`, () => {
  it('known answers (FIPS 180-4 examples)', () => {
    expect(hex(sha256(''))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hex(sha256('abc'))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hex(sha256('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq'))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('every length 0..1100 against node:crypto', () => {
    const data = randomBytes(1100);
    for (let n = 0; n <= 1100; n++) {
      const part = data.subarray(0, n);
      expect(hex(sha256(part)), `length ${n}`).toBe(refSha256Hex(part));
    }
  });

  it('random large inputs', () => {
    for (const n of [65_536, 1_000_003, 3 * 1024 * 1024 + 17]) {
      const data = randomBytes(n);
      expect(hex(sha256(data)), `length ${n}`).toBe(refSha256Hex(data));
    }
  });

  it('streaming: every split point of update()', () => {
    for (const n of [0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 200]) {
      const data = randomBytes(n);
      const want = refSha256Hex(data);
      for (let cut = 0; cut <= n; cut++) {
        const h = sha256.create().update(data.subarray(0, cut)).update(data.subarray(cut)).digest();
        expect(hex(h), `n=${n} cut=${cut}`).toBe(want);
      }
    }
  });

  it('streaming: random multi-splits and string chunks', () => {
    const r = rng(5);
    for (let t = 0; t < 50; t++) {
      const data = randomBytes(Math.floor(r() * 5000));
      const h = sha256.create();
      let at = 0;
      while (at < data.length) {
        const step = Math.min(data.length - at, Math.floor(r() * 300));
        h.update(data.subarray(at, at + step));
        at += step;
      }
      expect(hex(h.digest())).toBe(refSha256Hex(data));
    }
    expect(hex(sha256.create().update('é').update('😂').digest())).toBe(refSha256Hex('é😂'));
  });

  it('streaming does not keep a reference to the caller\'s buffer', () => {
    const buf = new Uint8Array([1, 2, 3]);
    const h = sha256.create().update(buf);
    buf[0] = 9;
    expect(hex(h.digest())).toBe(refSha256Hex(new Uint8Array([1, 2, 3])));
  });
});

function conversation(n: number, seed: number): unknown[] {
  const r = rng(seed);
  const msgs: unknown[] = [{ role: 'system', content: 'You are helpful. Ünïcödé ✓ 😂' }];
  for (let i = 1; i < n; i++) {
    const k = r();
    if (k < 0.4) msgs.push({ role: 'user', content: `question ${i}: ${'lorem ipsum '.repeat(Math.floor(r() * 20))}` });
    else if (k < 0.7)
      msgs.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'search', arguments: JSON.stringify({ q: `x${i}`, k: i % 7, t: 0.7 }) } }],
      });
    else if (k < 0.85) msgs.push({ role: 'tool', tool_call_id: `call_${i}`, content: JSON.stringify({ hits: [i, i * 1.5, -i] }) });
    else msgs.push({ role: 'user', content: [{ type: 'text', text: `€ ${i}` }, { type: 'image_url', image_url: { url: `https://x/${i}.png`, detail: 'low' } }] });
  }
  return msgs;
}

describe(`digests and path hashes (${backend()})`, () => {
  it('hashValue/hashJSON equal SHA-256 of the reference canonical form', () => {
    const v = { b: [1, 2.5, 'x'], a: { 'é': null, '😂': true } };
    expect(hashValue(v)).toBe(refDigest(v));
    expect(hashJSON(JSON.stringify(v))).toBe(refDigest(v));
    expect(hashJSON(utf8(JSON.stringify(v, null, 3)))).toBe(refDigest(v));
  });

  for (const n of [0, 1, 2, 3, 4, 5, 7, 8, 9, 63, 100, 1001]) {
    it(`pathHashes of ${n} messages (object, string and bytes) match the reference chain`, () => {
      const msgs = conversation(n, n + 1);
      const want = refPathHashes(msgs);
      expect(pathHashes(msgs)).toEqual(want);
      expect(pathHashes(JSON.stringify(msgs))).toEqual(want);
      expect(pathHashes(utf8(JSON.stringify(msgs, null, 1)))).toEqual(want);
      expect(hashMany(msgs)).toEqual(want.messageHashes);
      expect(hashMany(utf8(JSON.stringify(msgs)))).toEqual(want.messageHashes);
    });
  }

  it('message sizes around SHA-256 block boundaries (multi-buffer lanes of unequal length)', () => {
    const msgs: unknown[] = [];
    for (let len = 0; len < 300; len++) msgs.push('x'.repeat(len));
    msgs.push('y'.repeat(100_000));
    for (let len = 0; len < 70; len++) msgs.push({ k: 'z'.repeat(len) });
    expect(pathHashes(msgs)).toEqual(refPathHashes(msgs));
  });

  it('long elements (hashed by node:crypto on Node) and short ones (in wasm lanes) give the same chain', () => {
    // The wasm engines pick who hashes the elements by their average canonical size; both sides
    // of that choice, and the member form, must give the reference digests.
    const r = rng(7);
    for (const size of [40, 300, 511, 512, 700, 5000]) {
      const msgs = Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'é'.repeat(Math.floor(r() * 4)) + 'w'.repeat(size), n: i, ts: i }));
      const stripped = msgs.map(({ ts: _ts, ...m }) => m);
      const want = refPathHashes(stripped);
      expect(pathHashes(msgs, { ignoreKeys: ['ts'] })).toEqual(want);
      expect(pathHashes(utf8(JSON.stringify(msgs)), { ignoreKeys: ['ts'] })).toEqual(want);
      expect(hashMany(utf8(JSON.stringify(msgs)), { ignoreKeys: ['ts'] })).toEqual(want.messageHashes);
      const view = pathHashes(utf8(JSON.stringify({ z: 1, messages: stripped, a: 'x'.repeat(size) })), { member: 'messages' });
      expect(view.messageHashes).toEqual(want.messageHashes);
      expect(view.pathHashes).toEqual(want.pathHashes);
      expect(view.digest).toBe(refDigest({ z: 1, messages: stripped, a: 'x'.repeat(size) }));
    }
  });

  it('ignoreKeys apply to each message and to the whole digest', () => {
    const msgs = [{ role: 'user', content: 'a', ts: 1 }, { role: 'assistant', content: 'b', ts: 2 }];
    const stripped = msgs.map(({ ts: _ts, ...m }) => m);
    expect(pathHashes(msgs, { ignoreKeys: ['ts'] })).toEqual(refPathHashes(stripped));
    expect(pathHashes(JSON.stringify(msgs), { ignoreKeys: ['ts'] })).toEqual(refPathHashes(stripped));
  });

  it('path hashes depend on the whole prefix', () => {
    const a = pathHashes([{ c: 1 }, { c: 2 }, { c: 3 }]);
    const b = pathHashes([{ c: 0 }, { c: 2 }, { c: 3 }]);
    expect(a.messageHashes[2]).toBe(b.messageHashes[2]);
    expect(a.pathHashes[2]).not.toBe(b.pathHashes[2]);
  });
});

describe(`trace tokens (${backend()})`, () => {
  const base = { documentId: 'doc-42', documentVersion: '1', model: 'gpt-4o-mini', systemPromptVersion: 'v1', selectedIds: ['c3', 'a1', 'b2'] };
  it('match the reference and are order-invariant', () => {
    expect(traceToken(base)).toBe(refTraceToken(base));
    expect(traceToken({ ...base, selectedIds: ['b2', 'c3', 'a1'] })).toBe(traceToken(base));
    expect(traceToken({ ...base, selectedIds: [] })).toBe(refTraceToken({ ...base, selectedIds: [] }));
  });
  it('with one id or none (a recording\'s token), non-ASCII and empty components: the reference\'s', () => {
    const texts = ['', 'a', 'POST /v1/chat/completions', 'ü ✓ 😀', '\uffff\ue000', 'x'.repeat(300)];
    for (const a of texts) {
      for (const b of texts.slice(0, 4)) {
        for (const ids of [[], [a], [b]]) {
          const t = { documentId: a, documentVersion: b, model: `${b}${a}`, systemPromptVersion: 'tapedeck-http-1', selectedIds: ids };
          expect(traceToken(t)).toBe(refTraceToken(t));
        }
      }
    }
  });
  it('sort ids by code point (UTF-8 bytes), not UTF-16 units', () => {
    const t = { ...base, selectedIds: ['\uffff', '😂', 'a', '\ue000'] };
    expect(traceToken(t)).toBe(refTraceToken(t));
  });
  it('every component changes the token; separators cannot collide', () => {
    const seen = new Set([traceToken(base)]);
    for (const k of ['documentId', 'documentVersion', 'model', 'systemPromptVersion'] as const) seen.add(traceToken({ ...base, [k]: `${base[k]}x` }));
    seen.add(traceToken({ ...base, selectedIds: ['a1', 'b2'] }));
    expect(seen.size).toBe(6);
    expect(traceToken({ ...base, selectedIds: ['a,b', 'c'] })).not.toBe(traceToken({ ...base, selectedIds: ['a', 'b,c'] }));
  });
  it('reject NUL inside a component', () => {
    expect(() => traceToken({ ...base, model: 'a\0b' })).toThrow(expect.objectContaining({ code: 'E_ARG', path: '$.model' }));
    expect(() => traceToken({ ...base, selectedIds: ['ok', 'x\0'] })).toThrow(expect.objectContaining({ code: 'E_ARG' }));
  });
});

describe(`published vectors test/vectors/hashes.json (${backend()})`, () => {
  const vectors = JSON.parse(readFileSync(join(import.meta.dirname, 'vectors/hashes.json'), 'utf8')) as {
    digest: { json: string; canonical: string; sha256: string }[];
    paths: { messages: unknown[]; messageHashes: string[]; pathHashes: string[]; digest: string }[];
    traceTokens: { input: Parameters<typeof traceToken>[0]; token: string }[];
  };
  it('digest vectors', () => {
    expect(vectors.digest.length).toBeGreaterThan(10);
    for (const v of vectors.digest) {
      expect(hashJSON(v.json), v.json).toBe(v.sha256);
      expect(refSha256Hex(v.canonical)).toBe(v.sha256);
    }
  });
  it('path vectors', () => {
    for (const v of vectors.paths) expect(pathHashes(v.messages)).toEqual({ messageHashes: v.messageHashes, pathHashes: v.pathHashes, digest: v.digest });
  });
  it('trace token vectors', () => {
    for (const v of vectors.traceTokens) expect(traceToken(v.input)).toBe(v.token);
  });
});

describe(`pathHashes with { member } (${backend()})`, () => {
  const view = (msgs: unknown[]) => ({ tools: [{ name: 'z' }], model: 'gpt-4o', messages: msgs, options: { max_tokens: 5 } });
  it('digest of the whole object and hashes of its member array, in one call', () => {
    for (const n of [0, 1, 2, 5, 40]) {
      const v = view(conversation(n, 100 + n));
      const want = refPathHashes(v.messages);
      const got = pathHashes(v, { member: 'messages' });
      expect(got).toEqual({ messageHashes: want.messageHashes, pathHashes: want.pathHashes, digest: refDigest(v) });
      expect(pathHashes(JSON.stringify(v), { member: 'messages' })).toEqual(got);
      expect(pathHashes(utf8(JSON.stringify(v, null, 2)), { member: 'messages' })).toEqual(got);
    }
  });

  it('finds the member wherever sorting moves it, after ignored members, and under an escaped name', () => {
    const msgs = [{ role: 'user', content: 'a', ts: 1 }, { content: 'b', role: 'assistant' }];
    const stripped = msgs.map(({ ts: _t, ...m }) => m);
    const text = '{"ts":1,"zzz":[1,2],"m\\u0065ssages":' + JSON.stringify(msgs) + ',"aaa":{"ts":3,"b":1}}';
    const got = pathHashes(text, { member: 'messages', ignoreKeys: ['ts'] });
    const want = refPathHashes(stripped);
    expect(got.messageHashes).toEqual(want.messageHashes);
    expect(got.pathHashes).toEqual(want.pathHashes);
    expect(got.digest).toBe(refDigest({ zzz: [1, 2], messages: stripped, aaa: { b: 1 } }));
    // Only the root's member counts: a nested "messages" is not it.
    expect(pathHashes('{"x":{"messages":[1]},"messages":[2,3]}', { member: 'messages' }).messageHashes).toEqual([refDigest(2), refDigest(3)]);
  });

  it('a root of two members in reverse order, the shorter first or second, with the member either one', () => {
    const msgs = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'é'.repeat(70) }];
    const want = refPathHashes(msgs);
    for (const other of [1, 'x'.repeat(3), 'y'.repeat(200), { z: [msgs] }]) {
      for (const v of [{ zz: other, messages: msgs }, { messages: msgs, aa: other }, { ts: 0, zz: other, messages: msgs }]) {
        const whole = refDigest({ ...v, ts: undefined });
        for (const input of [v, JSON.stringify(v), utf8(JSON.stringify(v, null, 1))]) {
          const got = pathHashes(input, { member: 'messages', ignoreKeys: ['ts'] });
          expect(got).toEqual({ messageHashes: want.messageHashes, pathHashes: want.pathHashes, digest: whole });
        }
      }
    }
  });

  it('errors: not an object, member not an array, member missing', () => {
    const err = errorOf;
    expect(err(() => pathHashes('[1]', { member: 'messages' }))).toMatchObject({ code: 'E_NOT_ARRAY', offset: 0 });
    expect(err(() => pathHashes('{"messages": {"a":1}}', { member: 'messages' }))).toMatchObject({ code: 'E_NOT_ARRAY', offset: 13 });
    expect(err(() => pathHashes('{"other": []}', { member: 'messages' }))).toMatchObject({ code: 'E_NOT_ARRAY', offset: 0 });
    expect(err(() => pathHashes([1, 2], { member: 'messages' }))).toMatchObject({ code: 'E_NOT_ARRAY' });
    expect(pathHashes('{"messages": []}', { member: 'messages' })).toEqual({ messageHashes: [], pathHashes: [], digest: refDigest({ messages: [] }) });
  });
});
