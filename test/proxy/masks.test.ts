// Redaction never merges two requests: values the redactor masks that are not provider
// credentials are stored as keyed masks under the tape's salt, so two values stay two keys and
// one value one key; provider credentials never take part in a key. On tapes, through the proxy
// and createFetch, and for ReplayCache; Redis single node and cluster in test/redis/masks.test.ts.
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';
import { redactor } from '../../src/store/redact.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { allValues, checkDistinct, V } from './distinct-masks.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-masks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A fetch that sends to the proxy at `base` whatever URL it is given (path and query kept). */
const via = (base: string) => Object.assign((u: string | URL | Request, init?: RequestInit) => fetch(`${base}${new URL(String(u)).pathname}${new URL(String(u)).search}`, init), { close: async () => {} });

function noValueStored(tape: string): void {
  const bytes = readFileSync(tape);
  for (const v of allValues()) expect(bytes.includes(Buffer.from(v)), v).toBe(false);
}

describe('masked values stay distinct keys', () => {
  it('through createFetch on a tape: each value replays its own answer, credentials do not split keys', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'fetch.tape');
    try {
      await checkDistinct(up.url, createFetch({ tape, mode: 'record' }), () => createFetch({ tape, mode: 'replay' }));
    } finally {
      await up.close();
    }
    noValueStored(tape);
    // The salt is in the header; the masks are keyed under it and stay distinct.
    const { header } = await readTape(tape);
    expect(header.salt).toMatch(/^[0-9a-f]{32}$/);
    const text = readFileSync(tape, 'latin1');
    const masks = new Set(text.match(/\[REDACTED:[0-9a-f]{16}\]|%5BREDACTED%3A[0-9a-f]{16}%5D/g));
    expect(masks.size).toBeGreaterThanOrEqual(12);
    // tapedeck export -> import keeps the salt, so the imported tape replays the same way.
    const imported = join(dir, 'imported.tape');
    await importTapeJSON(await exportTapeJSON(tape), imported);
    expect((await readTape(imported)).header.salt).toBe(header.salt);
    const again = join(dir, 'again.tape');
    const up2 = await startUpstream();
    try {
      // Recorded again (fresh salt) then replayed from the import of the first tape: the import
      // must answer exactly as the first tape did, so it is replayed against the first's calls.
      await checkDistinct(up2.url, createFetch({ tape: again, mode: 'record' }), () => createFetch({ tape: imported, mode: 'replay' }));
    } finally {
      await up2.close();
    }
  });

  it('through the proxy on a tape: the same', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'proxy.tape');
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    let play: Awaited<ReturnType<typeof startProxy>> | undefined;
    try {
      const recorder = Object.assign(via(rec.url), { close: () => rec.close() });
      await checkDistinct(up.url, recorder as never, () => {
        const f = Object.assign(
          async (u: string | URL | Request, init?: RequestInit) => {
            play ??= await startProxy({ tape, mode: 'replay', port: 0 });
            return via(play.url)(u, init);
          },
          { close: async () => play?.close() },
        );
        return f as never;
      });
    } finally {
      await up.close();
    }
    noValueStored(tape);
  });

  it('a tape whose header was lost (a 0-byte file) gets a fresh header and salt before the first record', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'empty.tape');
    writeFileSync(tape, '');
    try {
      await checkDistinct(up.url, createFetch({ tape, mode: 'record', onWarning: () => {} }), () => createFetch({ tape, mode: 'replay' }));
    } finally {
      await up.close();
    }
    expect((await readTape(tape)).header.salt).toMatch(/^[0-9a-f]{32}$/);
  });

  it('two tapes get different salts: equal values do not look equal across tapes', async () => {
    const a = redactor({ salt: '0123456789abcdef0123456789abcdef' });
    const b = redactor({ salt: 'fedcba9876543210fedcba9876543210' });
    expect(a.mask('same')).toBe(a.mask('same'));
    expect(a.mask('same')).not.toBe(a.mask('other'));
    expect(a.mask('same')).not.toBe(b.mask('same'));
    // Credentials keep the one mask whatever the salt.
    expect(a.headers({ authorization: 'Bearer x' })).toEqual(b.headers({ authorization: 'Bearer y' }));
    expect(a.url('/m?key=AIzaSyA0123456789abcdefghijklmnopqrstu')).toBe(b.url('/m?key=AIzaSyB9876543210zyxwvutsrqponmlkjihgf'));
    // A `?key=` that is no credential (a lookup key) is keyed like any other value.
    expect(a.url('/m?key=one')).not.toBe(a.url('/m?key=two'));
    expect(a.url('/m?token=one')).not.toBe(a.url('/m?token=two'));
    // Redacting what was stored changes nothing (a mask is not masked again).
    const once = a.value({ client_secret: 's1', q: '/m?token=t', text: `key ${V.prompts[0]}` });
    expect(a.value(once)).toEqual(once);
    expect(a.url(a.url('/m?token=one&key=k'))).toBe(a.url('/m?token=one&key=k'));
    expect(a.headers(a.headers({ cookie: 'c=1', authorization: 'Bearer x' }))).toEqual(a.headers({ cookie: 'c=1', authorization: 'Bearer x' }));
    // The documented form: the first 16 hex digits of HMAC-SHA256(salt bytes, UTF-8 value).
    const want = createHmac('sha256', Buffer.from('0123456789abcdef0123456789abcdef', 'hex')).update('same').digest('hex').slice(0, 16);
    expect(a.mask('same')).toBe(`[REDACTED:${want}]`);
  });

  it('ReplayCache: two prompts differing only in a pasted key are two recordings, stored as two masks', async () => {
    const tape = join(dir, 'cache.tape');
    const req = (k: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `use ${k}` }] });
    const w = await ReplayCache.open(tape, { mode: 'record' });
    await w.put(req(V.prompts[0]!), { n: 0 });
    await w.put(req(V.prompts[1]!), { n: 1 });
    await w.close();
    const r = await ReplayCache.open(tape, { mode: 'replay' });
    const second = (await r.getRecord(req(V.prompts[1]!)))!;
    const first = (await r.getRecord(req(V.prompts[0]!)))!;
    expect([first.value, second.value]).toEqual([{ n: 0 }, { n: 1 }]);
    const stored = [first.request, second.request].map((x) => JSON.stringify(x));
    await r.close();
    expect(stored[0]).toMatch(/\[REDACTED:[0-9a-f]{16}\]/);
    expect(stored[0]).not.toBe(stored[1]);
    noValueStored(tape);
  });

  it('matchHeaders never keys a credential header', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'match-headers.tape');
    const send = (f: typeof fetch, key: string, team: string) => f(`${up.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-team': team, 'content-type': 'text/plain' }, body: 'hello' });
    try {
      const rec = createFetch({ tape, mode: 'record', matchHeaders: ['authorization', 'x-team'] });
      const a = await (await send(rec, V.bearer[0]!, 'red')).text();
      const b = await (await send(rec, V.bearer[0]!, 'blue')).text();
      await rec.close();
      const play = createFetch({ tape, mode: 'replay', matchHeaders: ['authorization', 'x-team'] });
      expect(await (await send(play, V.bearer[1]!, 'blue')).text()).toBe(b);
      expect(await (await send(play, V.bearer[1]!, 'red')).text()).toBe(a);
      await play.close();
    } finally {
      await up.close();
    }
  });
});
