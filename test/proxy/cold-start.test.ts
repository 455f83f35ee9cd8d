// A large tape opens without decoding or re-hashing its recordings: the proxy and createFetch
// file each record by the key stored in its head (exact matching, current key version) and
// decode a recording when they serve it. What must not change: the answers, their order among
// repeats, what a miss says, options that change keys (ignoreArgs) at replay, and tapes written
// before `match` and `route` came first in a record (they are read past the containers).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pack, unpack } from 'msgpackr';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { CountingTape } from '../store/counting-tape.ts';
import { crc32 } from '../../src/store/tape-codec.ts';
import { appendFrames, appendRecords, createTape, decodeFrame, FRAME_HEADER_SIZE, FRAME_MAGIC, payloadJson, payloadMember, peekFrame, recordFrame, scanTape } from '../../src/store/tape-file.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-cold-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(dir, `c${n++}.tape`);

const chat = (q: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }], ...extra });
const post = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });
// Replayed on the host the tape was recorded for, the fake upstream's (a loopback host's port is
// not compared): nothing listens there.
const CHAT_URL = 'http://127.0.0.1:9/v1/chat/completions';

/** Records `bodies` in order through createFetch against the fake upstream; returns the answers. */
async function record(tape: string, bodies: string[]): Promise<string[]> {
  const up = await startUpstream();
  const f = createFetch({ tape, mode: 'record' });
  const out: string[] = [];
  try {
    for (const b of bodies) out.push(await (await f(`${up.url}/v1/chat/completions`, post(b))).text());
  } finally {
    await f.close();
    await up.close();
  }
  return out;
}

describe('opening a tape for replay', () => {
  it("the first miss reads each recording's body as JSON text from the tape, decodes no request, and says and serves what decoding them gives", async () => {
    const tape = fresh();
    const bodies = Array.from({ length: 30 }, (_, i) => chat(`question ${i} é ✓ "quoted"`, { temperature: i / 10, n: 1, stop: ['\n', `end ${i}`], metadata: { i, nested: [i, { k: null }] } }));
    const live = await record(tape, bodies);
    const run = async (withJson: boolean) => {
      const store = new CountingTape(tape, withJson);
      const f = createFetch({ store, mode: 'replay' });
      try {
        const miss = await f(CHAT_URL, post(chat('question 17 é ✓ "quoted" and more', { temperature: 1.7, n: 1 })));
        expect(miss.status).toBe(400);
        const err = (await miss.json()) as { error: { message: string; tapedeck: { closest: unknown } } };
        const answers: string[] = [];
        for (const i of [17, 0, 29]) answers.push(await (await f(CHAT_URL, post(bodies[i]!))).text());
        return { message: err.error.message, closest: err.error.tapedeck.closest, answers, members: store.members, texts: store.texts };
      } finally {
        await f.close();
      }
    };
    const [text, decoded] = [await run(true), await run(false)];
    expect(text.members).toBe(0);
    expect(text.texts).toBe(bodies.length);
    expect(decoded.members).toBe(bodies.length);
    expect(text.message).toContain('question 17');
    expect(text.message).toBe(decoded.message);
    expect(text.closest).toEqual(decoded.closest);
    expect(text.answers).toEqual([live[17], live[0], live[29]]);
    expect(decoded.answers).toEqual(text.answers);
  });


  it('decodes only the recording it serves (not every recording of the tape)', async () => {
    const tape = fresh();
    const bodies = Array.from({ length: 60 }, (_, i) => chat(`question ${i}`));
    const live = await record(tape, bodies);
    const store = new CountingTape(tape);
    const f = createFetch({ store, mode: 'replay' });
    try {
      const res = await f(CHAT_URL, post(bodies[41]!));
      expect(await res.text()).toBe(live[41]);
      expect(store.decoded).toBe(1);
      // The same body again: served from what is known, still one decode.
      expect(await (await f(CHAT_URL, post(bodies[41]!))).text()).toBe(live[41]);
      expect(store.decoded).toBe(1);
    } finally {
      await f.close();
    }
  });

  it('serves repeats in recorded order across the first miss, which keys the rest', async () => {
    const tape = fresh();
    const a = chat('repeated question');
    const live = await record(tape, [a, a, chat('other'), a]);
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const got: string[] = [];
      got.push(await (await f(CHAT_URL, post(a))).text());
      const miss = await f(CHAT_URL, post(chat('never recorded')));
      expect(miss.status).toBe(400);
      const err = (await miss.json()) as { error: { code: string; message: string } };
      expect(err.error.code).toBe('E_MISS');
      // The diagnosis compares with the closest recording, as before.
      expect(err.error.message).toMatch(/never recorded|differs|content/);
      got.push(await (await f(CHAT_URL, post(a))).text());
      got.push(await (await f(CHAT_URL, post(a))).text());
      expect(got).toEqual([live[0], live[1], live[3]]);
      // Past the last one, the last again (repeats allowed by default).
      expect(await (await f(CHAT_URL, post(a))).text()).toBe(live[3]);
    } finally {
      await f.close();
    }
  });

  it('after the first miss, a body equal to a recording but for key order, spacing and dropped arguments still gets its answer', async () => {
    const tape = fresh();
    const q = chat('what is the capital of France');
    const live = await record(tape, [chat('other'), q]);
    const f = createFetch({ tape, mode: 'replay' });
    try {
      expect((await f(CHAT_URL, post(chat('never recorded')))).status).toBe(400);
      const same = JSON.stringify({ user: 'u-7', messages: [{ content: 'what is the capital of France', role: 'user' }], model: 'gpt-4o-mini' }, null, 2);
      const res = await f(CHAT_URL, post(same));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(live[1]);
    } finally {
      await f.close();
    }
  });

  it('the first miss decodes no answer: requests are read on their own, a recording whole only when it is served', async () => {
    const tape = fresh();
    const bodies = Array.from({ length: 40 }, (_, i) => chat(`question ${i}`));
    // One asked twice: a key with two recordings gets its entries when the tape opens.
    const live = await record(tape, [...bodies, bodies[5]!]);
    const store = new CountingTape(tape);
    const f = createFetch({ store, mode: 'replay' });
    try {
      expect(await (await f(CHAT_URL, post(bodies[3]!))).text()).toBe(live[3]);
      expect(store.decoded).toBe(1);
      const miss = await f(CHAT_URL, post(chat('question 17 with a change')));
      expect(miss.status).toBe(400);
      const err = (await miss.json()) as { error: { code: string; message: string } };
      expect(err.error.code).toBe('E_MISS');
      // The diagnosis still names the nearest recorded prompt.
      expect(err.error.message).toContain('question 17');
      expect(store.decoded).toBe(1);
      // After it, recordings are served by the matcher, each decoded as it is served.
      for (const i of [29, 0, 17]) expect(await (await f(CHAT_URL, post(bodies[i]!))).text()).toBe(live[i]);
      expect(store.decoded).toBe(4);
    } finally {
      await f.close();
    }
  });

  it('after the first miss, a recording whose answer does not decode is refused (E_TAPE_CORRUPT, naming what is wrong), never another answer', async () => {
    const tape = fresh();
    const bodies = [chat('first'), chat('second'), chat('third')];
    const live = await record(tape, bodies);
    // The second record's response replaced by a byte msgpack never writes, under a valid
    // checksum (a writer's bug, not a torn write): its request and head still read.
    const scan = await scanTape(tape);
    const values = scan.frames.map((fr) => unpack(scan.bytes.subarray(fr.offset + FRAME_HEADER_SIZE, fr.offset + fr.length)) as Record<string, unknown>);
    const bad = fresh();
    await createTape(bad);
    await appendRecords(bad, [values[0]]);
    const { response: _r, ...rest } = values[1]!;
    const head = recordFrame(rest, 0, bad).subarray(FRAME_HEADER_SIZE);
    expect(head[0]! & 0xf0).toBe(0x80); // a fixmap of the other members
    const payload = Buffer.concat([Buffer.of(head[0]! + 1), head.subarray(1), Buffer.of(0xa8), Buffer.from('response'), Buffer.of(0xc1)]);
    const framed = Buffer.alloc(FRAME_HEADER_SIZE + payload.length);
    framed.set(FRAME_MAGIC, 0);
    framed.writeUInt32BE(payload.length, 4);
    framed.writeUInt32BE(crc32(payload), 8);
    payload.copy(framed, FRAME_HEADER_SIZE);
    await appendFrames(bad, [framed]);
    await appendRecords(bad, [values[2]]);
    const warnings: string[] = [];
    const f = createFetch({ tape: bad, mode: 'replay', onWarning: (m) => warnings.push(m) });
    try {
      expect((await f(CHAT_URL, post(chat('never recorded')))).status).toBe(400);
      const res = await f(CHAT_URL, post(bodies[1]!));
      // The record is intact on disk (its checksum holds) and decodes: not damage, a malformed
      // record, whose error says what in it is wrong.
      expect(res.status).toBe(400);
      const error = ((await res.json()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('E_TAPE_CORRUPT');
      expect(error.message).toContain('is malformed (its response.body is undefined, not bytes)');
      expect(await (await f(CHAT_URL, post(bodies[2]!))).text()).toBe(live[2]);
      expect(await (await f(CHAT_URL, post(bodies[0]!))).text()).toBe(live[0]);
    } finally {
      await f.close();
    }
  });

  it('still finds a recording by the keys the replay options make (ignoreArgs added after recording)', async () => {
    const tape = fresh();
    const live = await record(tape, [chat('what is the weather', { temperature: 0.2 })]);
    const f = createFetch({ tape, mode: 'replay', ignoreArgs: ['temperature'] });
    try {
      const res = await f(CHAT_URL, post(chat('what is the weather', { temperature: 0.9 })));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(live[0]);
    } finally {
      await f.close();
    }
  });

  it("replays a tape whose records keep `match` and `route` after the request and response (earlier versions' order)", async () => {
    const tape = fresh();
    const bodies = [chat('first'), chat('second')];
    const live = await record(tape, bodies);
    // Rewrite each record with the earlier field order: the scalars after the containers.
    const scan = await scanTape(tape);
    const old = scan.frames.map((fr) => {
      const v = unpack(scan.bytes.subarray(fr.offset + FRAME_HEADER_SIZE, fr.offset + fr.length)) as Record<string, unknown>;
      const { match, route, trace, ...rest } = v;
      return { ...rest, match, route, trace };
    });
    const oldTape = fresh();
    await createTape(oldTape);
    await appendRecords(oldTape, old);
    const reread = await scanTape(oldTape);
    const keys = Object.keys(unpack(reread.bytes.subarray(reread.frames[0]!.offset + FRAME_HEADER_SIZE, reread.frames[0]!.offset + reread.frames[0]!.length)) as object);
    expect(keys.indexOf('route')).toBeGreaterThan(keys.indexOf('response'));
    const store = new CountingTape(oldTape);
    const f = createFetch({ store, mode: 'replay' });
    try {
      expect(await (await f(CHAT_URL, post(bodies[1]!))).text()).toBe(live[1]);
      expect(store.decoded).toBe(1);
    } finally {
      await f.close();
    }
  });
});

describe('peekFrame past containers', () => {
  const framed = (value: unknown) => {
    const payload = pack(value);
    const bytes = Buffer.alloc(FRAME_HEADER_SIZE + payload.length);
    payload.copy(bytes, FRAME_HEADER_SIZE);
    return { bytes, frame: { offset: 0, length: bytes.length } };
  };
  // The whole record as the tape decoder reads it (a `__proto__` member given back as one, where
  // msgpackr's own decoder renames it `__proto_`): what a member read alone must agree with.
  const unpackWhole = (bytes: Buffer, frame: { offset: number; length: number }) => decodeFrame(bytes, frame) as Record<string, unknown>;

  it('payloadMember decodes one member as decoding the whole record gives it; a cut record is E_TAPE_CORRUPT or what it still holds', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 20 }), fc.uint8Array({ maxLength: 200 }), fc.string({ maxLength: 12 }), (members, bin, probe) => {
        const value = { v: 1, ...members, b: Buffer.from(bin) };
        const { bytes, frame } = framed(value);
        const whole = unpackWhole(bytes, frame);
        for (const name of [...Object.keys(whole), probe, 'absent member']) {
          expect(payloadMember(bytes, frame.offset, frame.length, name, 'x.tape')).toEqual(Object.hasOwn(whole, name) ? whole[name] : undefined);
        }
        const cut = bytes.subarray(0, FRAME_HEADER_SIZE + ((bytes.length - FRAME_HEADER_SIZE) >> 1));
        for (const name of Object.keys(whole)) {
          let got: unknown;
          try {
            got = payloadMember(cut, 0, cut.length, name, 'x.tape');
          } catch (e) {
            expect((e as { code?: string }).code).toBe('E_TAPE_CORRUPT');
            continue;
          }
          // What it does return is the member as it was written (it lay before the cut).
          expect(got).toEqual(whole[name]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a member holding a __proto__ member reads alone as in the whole record, an own member of that name', () => {
    const value = { v: 1, cached: JSON.parse('{"a":1,"__proto__":{"b":2},"c":3}') as object, b: Buffer.from([1, 2]) };
    const { bytes, frame } = framed(value);
    const whole = unpackWhole(bytes, frame);
    const alone = payloadMember(bytes, frame.offset, frame.length, 'cached', 'x.tape') as Record<string, unknown>;
    expect(alone).toEqual(whole.cached);
    expect(Object.keys(alone)).toEqual(['a', '__proto__', 'c']);
    expect(Object.getPrototypeOf(alone)).toBe(Object.prototype);
  });

  it('payloadJson gives the JSON of a nested member as decoding the whole record gives it, or nothing', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 12 }), fc.jsonValue({ maxDepth: 5 }), fc.uint8Array({ maxLength: 50 }), (members, body, bin) => {
        const value = { v: 1, ...members, request: { method: 'POST', b: Buffer.from(bin), body } };
        const { bytes, frame } = framed(value);
        const whole = unpackWhole(bytes, frame);
        const got = payloadJson(bytes, frame.offset, frame.length, ['request', 'body']);
        if (got !== undefined) expect(JSON.parse(Buffer.from(got).toString())).toEqual((whole.request as { body: unknown }).body);
        else expect(JSON.stringify(body)).toMatch(/__proto__|\\ud[89a-f]/i);
        // Not plain JSON data, absent, or under a member that is not a map: nothing.
        expect(payloadJson(bytes, frame.offset, frame.length, ['request', 'b'])).toBeUndefined();
        expect(payloadJson(bytes, frame.offset, frame.length, ['request', 'absent'])).toBeUndefined();
        expect(payloadJson(bytes, frame.offset, frame.length, ['v', 'body'])).toBeUndefined();
        // A cut record gives nothing or the member as it was written.
        const cut = bytes.subarray(0, FRAME_HEADER_SIZE + ((bytes.length - FRAME_HEADER_SIZE) >> 1));
        const part = payloadJson(cut, 0, cut.length, ['request', 'body']);
        if (part !== undefined) expect(Buffer.from(part).toString()).toBe(Buffer.from(got!).toString());
      }),
      { numRuns: 300 },
    );
    // A member given twice on the path: left to the decode (which keeps one of them).
    const twice = Buffer.concat([Buffer.alloc(FRAME_HEADER_SIZE), Buffer.from([0x82, 0xa1, 0x72, 0x81, 0xa1, 0x62, 0x01, 0xa1, 0x72, 0x81, 0xa1, 0x62, 0x02])]);
    expect(payloadJson(twice, 0, twice.length, ['r', 'b'])).toBeUndefined();
  });

  it('reads a scalar after any msgpack value, and stops at the one it cannot step over', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.uint8Array({ maxLength: 300 }), fc.string(), (value, bin, tail) => {
        const { bytes, frame } = framed({ v: 1, kind: 'x', a: value, b: Buffer.from(bin), c: new Date(0), z: tail });
        expect(peekFrame(bytes, frame, ['kind', 'z'], true)).toEqual({ kind: 'x', z: tail });
        // Without `deep`, reading stops at the first container, as before.
        expect(peekFrame(bytes, frame, ['kind', 'z'])).toEqual({ kind: 'x' });
        // Cut anywhere inside the containers: no scalar is invented, nothing throws.
        const cut = bytes.subarray(0, FRAME_HEADER_SIZE + 12 + ((bytes.length - FRAME_HEADER_SIZE - 12) >> 1));
        const got = peekFrame(cut, { offset: 0, length: cut.length }, ['kind', 'z'], true);
        expect(got.z === undefined || got.z === tail).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
