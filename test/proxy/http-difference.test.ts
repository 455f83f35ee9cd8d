// A miss on a request whose body is not JSON (text, bytes, a form) says what differs from the
// closest recording of its route: where the body parts from it, which form field, which header
// listed in matchHeaders, or that the body is the same and the tape was keyed with other options.
// It used to say "none of the N recordings has this body" in every case, even for the very body
// recorded.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch, type FetchOptions } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { httpDifference } from '../../src/proxy/http-difference.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-http-difference-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});
let seq = 0;
const tapePath = () => join(dir, `t${++seq}.tape`);

type Body = string | Uint8Array | URLSearchParams;
const post = (body: Body, headers: Record<string, string> = {}): RequestInit => ({ method: 'POST', body, headers });

/** Records each request on a new tape, then returns the miss message of `asked` replayed with `opts`. */
async function missOf(recorded: RequestInit[], asked: RequestInit, opts: Partial<FetchOptions> = {}, recordOpts: Partial<FetchOptions> = {}): Promise<string> {
  const tape = tapePath();
  const rec = createFetch({ tape, mode: 'record', ...recordOpts });
  try {
    for (const init of recorded) expect((await rec(`${up.url}/v1/files`, init)).status).toBe(200);
  } finally {
    await rec.close();
  }
  const play = createFetch({ tape, mode: 'replay', summary: false, ...opts });
  try {
    const r = await play(`${up.url}/v1/files`, asked);
    expect(r.status).toBe(400);
    return ((await r.json()) as { error: { message: string } }).error.message;
  } finally {
    await play.close();
  }
}

describe('the miss of a non-JSON request names what differs', () => {
  it('a text body: the character where it parts from the closest recording, with both excerpts', async () => {
    const text = (w: string) => `The quick brown fox jumps over the lazy ${w}. `.repeat(3);
    const msg = await missOf([post(text('dog'), { 'content-type': 'text/plain' }), post('something else entirely', { 'content-type': 'text/plain' })], post(text('cat'), { 'content-type': 'text/plain' }));
    expect(msg).toBe('tapedeck miss: the body differs from the closest recording\'s at character 41: "…er the lazy cat. The qui…" here, "…er the lazy dog. The qui…" there\nRe-record: createFetch({ mode: \'record\' })');
  });

  it('a binary body: the byte it parts from the closest recording at', async () => {
    const a = new Uint8Array(300).map((_, i) => (i * 7) & 0xff);
    const b = a.slice();
    b[123] ^= 0x80;
    const msg = await missOf([post(a, { 'content-type': 'application/octet-stream' })], post(b, { 'content-type': 'application/octet-stream' }));
    expect(msg).toContain("the body differs from the closest recording's from byte 123 (both 300 bytes)");
  });

  it('a form: the field whose value differs, not the bytes', async () => {
    const msg = await missOf([post(new URLSearchParams({ grant_type: 'client_credentials', scope: 'read write' }))], post(new URLSearchParams({ grant_type: 'client_credentials', scope: 'read' })));
    expect(msg).toContain('field "scope" is "read", the closest recording\'s "read write"');
  });

  it('the same body with another value of a header in matchHeaders: the header, both values', async () => {
    const msg = await missOf([post('same body', { 'content-type': 'text/plain', 'x-tenant': 'acme' })], post('same body', { 'content-type': 'text/plain', 'x-tenant': 'globex' }), { matchHeaders: ['X-Tenant'] }, { matchHeaders: ['X-Tenant'] });
    expect(msg).toContain('header "x-tenant" (matchHeaders) is "globex", the recording with this body has "acme"');
  });

  it('the same body, recorded without the matchHeaders or bodyMatch this replay keys with: says so, not that the body differs', async () => {
    const recorded = [post('same body', { 'content-type': 'text/plain' })];
    const headersMiss = await missOf(recorded, post('same body', { 'content-type': 'text/plain' }), { matchHeaders: ['x-tenant'] });
    expect(headersMiss).toContain('tapedeck miss: a recording with this body was keyed with other matchHeaders or bodyMatch: replay with its options');
    const routeMiss = await missOf(recorded, post('another body', { 'content-type': 'text/plain' }), { bodyMatch: 'route' });
    expect(routeMiss).toContain("tapedeck miss: with bodyMatch 'route', a recording of the route was keyed with other matchHeaders or bodyMatch: replay with its options");
  });

  /** Records `init` once, replays it twice with strictOrder: the second call's miss message. */
  async function usedUp(init: RequestInit): Promise<string> {
    const tape = tapePath();
    const rec = createFetch({ tape, mode: 'record' });
    try {
      await rec(`${up.url}/v1/files`, init);
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay', summary: false, strictOrder: true });
    try {
      expect((await play(`${up.url}/v1/files`, init)).status).toBe(200);
      const r = await play(`${up.url}/v1/files`, init);
      expect(r.status).toBe(400);
      return ((await r.json()) as { error: { message: string } }).error.message;
    } finally {
      await play.close();
    }
  }
  const USED_UP = "tapedeck miss: the one recording of this request is already used; re-record: createFetch({ mode: 'record' }), or drop strictOrder: true";

  it('strictOrder: the one recording of the request was replayed already', async () => {
    expect(await usedUp(post('once', { 'content-type': 'text/plain' }))).toBe(USED_UP);
  });

  it('strictOrder: a JSON body that is no LLM call says the same, not that the one recording has another request', async () => {
    expect(await usedUp(post(JSON.stringify({ purpose: 'batch', filename: 'a.jsonl' }), { 'content-type': 'application/json' }))).toBe(USED_UP);
  });

  it('the proxy says the same', async () => {
    const tape = tapePath();
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    try {
      await fetch(`${rec.url}/v1/files`, post('alpha beta gamma', { 'content-type': 'text/plain' }));
    } finally {
      await rec.close();
    }
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      const r = await fetch(`${play.url}/v1/files`, post('alpha beta delta', { 'content-type': 'text/plain' }));
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/^tapedeck miss: the body differs from the closest recording's at character 12: "alpha beta delta" here, "alpha beta gamma" there/);
    } finally {
      await play.close();
    }
  });
});

describe('httpDifference against an independent oracle', () => {
  // A small deterministic generator: the same cases every run.
  let s = 0x2545f491;
  const rand = (n: number) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };

  it('the byte offset named is where the two bodies first differ (Buffer.compare of their prefixes)', () => {
    for (let t = 0; t < 300; t++) {
      const a = new Uint8Array(1 + rand(200)).map(() => rand(256));
      a[0] = 0x01; // a control character: never read as text, so the byte sentence
      const b = a.slice(0, rand(a.length + 1));
      const tail = new Uint8Array(rand(20)).map(() => rand(256));
      const rec = new Uint8Array([...b, ...tail]);
      let first = 0;
      while (first < a.length && first < rec.length && Buffer.compare(a.subarray(0, first + 1), rec.subarray(0, first + 1)) === 0) first++;
      const d = httpDifference({ bytes: a, contentType: 'application/octet-stream', matchHeaders: {} }, [{ headers: {}, body: rec }]);
      if (first === a.length && first === rec.length) expect(d).toContain('a recording with this body');
      else expect(d).toMatch(new RegExp(`from byte ${first.toLocaleString('en-US')} \\((?:both )?${a.length.toLocaleString('en-US')} byte`));
    }
  });

  it('the character named in a text is where the two texts first differ, multi-byte characters counted once', () => {
    const chars = ['a', 'b', 'é', '中', '😀', ' '];
    for (let t = 0; t < 300; t++) {
      const mine = Array.from({ length: 1 + rand(40) }, () => chars[rand(chars.length)]!).join('');
      const cut = Array.from(mine).slice(0, rand(Array.from(mine).length + 1)).join('');
      const theirs = cut + Array.from({ length: rand(5) }, () => chars[rand(chars.length)]!).join('');
      if (theirs === mine) continue;
      // The oracle: code units up to the first differing one, counted back to a whole character.
      let i = 0;
      while (i < mine.length && mine[i] === theirs[i]) i++;
      if (i > 0 && (mine.charCodeAt(i - 1) & 0xfc00) === 0xd800) i--;
      const d = httpDifference({ bytes: new TextEncoder().encode(mine), contentType: 'text/plain', matchHeaders: {} }, [{ headers: {}, body: theirs }]);
      expect(d).toContain(`at character ${(i + 1).toLocaleString('en-US')}: `);
    }
  });
});
