// An imported HAR entry's headers: the reader gives the entries that list exactly the same
// request headers (and body mime type) one frozen map, and builds the others (names lowercased
// as made for the last list where a name is the same in its place). Against a plain
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

/** The reference: the map a header list makes. */
function listed(list: Header[]): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = {};
  for (const { name, value } of list) {
    if (name.startsWith(':')) continue;
    const k = name.toLowerCase();
    const had = h[k];
    h[k] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return h;
}

/** The reference for a request: its list, the body's mime type, no content-encoding. */
function reference(list: Header[], mime: string | undefined): Record<string, string | string[]> {
  const h = listed(list);
  if (mime && h['content-type'] === undefined) h['content-type'] = mime;
  delete h['content-encoding'];
  return h;
}

/** A header list changed as consecutive entries change theirs: a value, a name's case, the order, a repeat, a new name. */
function changed(list: Header[], r: () => number, pick: <T>(xs: readonly T[]) => T): Header[] {
  const change = r();
  if (list.length === 0 || change < 0.1) return Array.from({ length: Math.floor(r() * 6) }, () => ({ name: pick(NAMES), value: pick(VALUES) }));
  if (change < 0.2) return list.map((h, k) => (k === Math.floor(r() * list.length) ? { ...h, value: `${h.value}!` } : h));
  if (change < 0.25) return list.map((h, k) => (k === 0 ? { ...h, name: h.name.toUpperCase() } : h));
  if (change < 0.3) return [...list].reverse();
  if (change < 0.35) return [...list, list[0]!];
  if (change < 0.4) return [...list, { name: 'Content-Encoding', value: 'br' }];
  return list;
}

const NAMES = ['accept', 'Accept', 'authorization', 'content-type', 'content-encoding', 'user-agent', ':path', 'x-note', 'X-Note'];
const VALUES = ['application/json', 'Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123', 'gzip', 'text/plain', '', 'a', 'b'];

describe('HAR headers', () => {
  it('are the reference maps for every entry, one frozen request map shared by entries that list the same headers', () => {
    const r = rng(4711);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const entries: unknown[] = [];
    const want: Record<string, string | string[]>[] = [];
    const wantAnswers: Record<string, string | string[]>[] = [];
    let list: Header[] = [];
    let answerList: Header[] = [];
    let mime: string | undefined = 'application/json';
    for (let i = 0; i < 600; i++) {
      list = changed(list, r, pick);
      answerList = changed(answerList, r, pick);
      if (r() < 0.05) mime = pick([undefined, '', 'application/json', 'text/plain']);
      // Fresh objects every entry, as a parse of the file makes them.
      const copy = list.map((h) => ({ ...h }));
      entries.push({
        request: { method: 'POST', url: 'https://api.example.com/v1/x', headers: copy, ...(r() < 0.9 ? { postData: { ...(mime !== undefined ? { mimeType: mime } : {}), text: `{"n":${i}}` } } : {}) },
        response: { status: 200, headers: answerList.map((h) => ({ ...h })), content: { size: 0, text: '' } },
      });
      const postData = (entries[i] as { request: { postData?: { mimeType?: string } } }).request.postData;
      want.push(reference(list, postData?.mimeType));
      wantAnswers.push(listed(answerList));
    }
    const read = readHar(JSON.stringify({ log: { entries } }), 'headers.har');
    const xs = [...read.exchanges];
    const got = xs.map((x) => x.request.headers);
    expect(read.bad).toEqual([]);
    expect(got).toEqual(want);
    expect(xs.map((x) => x.response.headers)).toEqual(wantAnswers);
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
