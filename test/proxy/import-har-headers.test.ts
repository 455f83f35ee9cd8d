// An imported HAR entry's request headers: the reader gives the entries that list exactly the
// same headers (and body mime type) one frozen map, and builds the others. Against a plain
// reference written here (names lowercased, repeats as arrays in order, HTTP/2 pseudo-headers
// left out, content-type from postData.mimeType where none is listed, content-encoding
// dropped), for runs of entries that repeat a list or change it by one value, one name's case,
// the order, a repeat, the mime type or a content-encoding; and the deck redacts a frozen map
// once while a map that can change is redacted again every time.
import { describe, expect, it } from 'vitest';
import { Deck } from '../../src/proxy/deck.ts';
import { readHar } from '../../src/store/import/har.ts';
import { redactor } from '../../src/store/redact.ts';
import { rng } from '../reference.ts';

type Header = { name: string; value: string };

/** The reference: the map a header list and mime type make. */
function reference(list: Header[], mime: string | undefined): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = {};
  for (const { name, value } of list) {
    if (name.startsWith(':')) continue;
    const k = name.toLowerCase();
    const had = h[k];
    h[k] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  if (mime && h['content-type'] === undefined) h['content-type'] = mime;
  delete h['content-encoding'];
  return h;
}

const NAMES = ['accept', 'Accept', 'authorization', 'content-type', 'content-encoding', 'user-agent', ':path', 'x-note', 'X-Note'];
const VALUES = ['application/json', 'Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123', 'gzip', 'text/plain', '', 'a', 'b'];

describe('HAR request headers', () => {
  it('are the reference map for every entry, one frozen map shared by entries that list the same headers', () => {
    const r = rng(4711);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const entries: unknown[] = [];
    const want: Record<string, string | string[]>[] = [];
    let list: Header[] = [];
    let mime: string | undefined = 'application/json';
    for (let i = 0; i < 600; i++) {
      const change = r();
      if (i === 0 || change < 0.1) list = Array.from({ length: Math.floor(r() * 6) }, () => ({ name: pick(NAMES), value: pick(VALUES) }));
      else if (change < 0.2 && list.length > 0) list = list.map((h, k) => (k === Math.floor(r() * list.length) ? { ...h, value: `${h.value}!` } : h));
      else if (change < 0.25 && list.length > 0) list = list.map((h, k) => (k === 0 ? { ...h, name: h.name.toUpperCase() } : h));
      else if (change < 0.3) list = [...list].reverse();
      else if (change < 0.35 && list.length > 0) list = [...list, list[0]!];
      else if (change < 0.4) mime = pick([undefined, '', 'application/json', 'text/plain']);
      else if (change < 0.45) list = [...list, { name: 'Content-Encoding', value: 'br' }];
      // Fresh objects every entry, as a parse of the file makes them.
      const copy = list.map((h) => ({ ...h }));
      entries.push({
        request: { method: 'POST', url: 'https://api.example.com/v1/x', headers: copy, ...(r() < 0.9 ? { postData: { ...(mime !== undefined ? { mimeType: mime } : {}), text: `{"n":${i}}` } } : {}) },
        response: { status: 200, headers: [], content: { size: 0, text: '' } },
      });
      const postData = (entries[i] as { request: { postData?: { mimeType?: string } } }).request.postData;
      want.push(reference(list, postData?.mimeType));
    }
    const read = readHar(JSON.stringify({ log: { entries } }), 'headers.har');
    const got = [...read.exchanges].map((x) => x.request.headers);
    expect(read.bad).toEqual([]);
    expect(got).toEqual(want);
    let shared = 0;
    for (let i = 0; i < got.length; i++) {
      expect(Object.isFrozen(got[i])).toBe(true);
      for (const v of Object.values(got[i]!)) if (Array.isArray(v)) expect(Object.isFrozen(v)).toBe(true);
      if (i > 0 && got[i] === got[i - 1]) shared++;
    }
    // Most entries repeat the list before them: the map is shared, not rebuilt.
    expect(shared).toBeGreaterThan(200);
  });
});

describe('Deck prepared URLs', () => {
  it('are each URL redacted as on its own, the same URL in a row or not', async () => {
    const salt = '0123456789abcdef0123456789abcdef';
    const deck = await Deck.open({ mode: 'passthrough', redact: { salt } }, { kind: 'fetch' });
    const fresh = redactor({ salt });
    try {
      const urls = ['/v1/x?token=aaa', '/v1/x?token=aaa', '/v1/x?token=bbb', '/v1/x?key=AIzaSecret', '/v1/x?token=aaa', '/v1/x', '/v1/x?token=bbb'];
      for (const url of urls) {
        const p = deck.prepareRequest({ method: 'GET', url, headers: {}, body: new Uint8Array(0) });
        expect(p.url).toBe(fresh.url(url));
        expect(p.url).not.toMatch(/aaa|bbb|AIzaSecret/);
      }
    } finally {
      await deck.close();
    }
  });
});

describe('Deck stored request headers', () => {
  it('redacts a frozen map once, and a map that can change every time it is given', async () => {
    const deck = await Deck.open({ mode: 'passthrough', redact: { salt: '0123456789abcdef0123456789abcdef' } }, { kind: 'fetch' });
    try {
      const frozen = Object.freeze({ accept: 'application/json', authorization: 'Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123', connection: 'keep-alive' });
      const first = deck.storedRequestHeaders(frozen);
      expect(first).toEqual({ accept: 'application/json', authorization: '[REDACTED]' });
      expect(deck.storedRequestHeaders(frozen)).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
      // Can change: redacted again after each change, never served the first redaction.
      const open: Record<string, string | string[]> = { accept: 'application/json' };
      expect(deck.storedRequestHeaders(open)).toEqual({ accept: 'application/json' });
      open['x-api-key'] = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz';
      expect(deck.storedRequestHeaders(open)['x-api-key']).toBe('[REDACTED]');
      const list = ['a'];
      const aroundOpen = Object.freeze({ 'x-note': list });
      expect(deck.storedRequestHeaders(aroundOpen)).toEqual({ 'x-note': ['a'] });
      list.push('Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123');
      const again = deck.storedRequestHeaders(aroundOpen)['x-note'] as string[];
      expect(again[1]).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
      // The frozen map after the others: the same redaction as before.
      expect(deck.storedRequestHeaders(frozen)).toEqual(first);
    } finally {
      await deck.close();
    }
  });
});
