// A text request body that is not UTF-8 (a latin-1 upload labelled text/plain; charset=iso-8859-1)
// is stored as the bytes sent. Decoded as UTF-8, every byte that is not UTF-8 became U+FFFD on the
// tape: two different requests were stored as one body, which `tapedeck rerecord` would send and
// anything keying the stored request again would key alike; a miss compared against that text.
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/index.ts';
import { listenLoopback } from './fake-upstream.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('text-body-bytes');
let api: Awaited<ReturnType<typeof listenLoopback>>;
beforeAll(async () => {
  // An upload route that answers with the hex of the bytes it got.
  api = await listenLoopback(
    createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ got: Buffer.concat(parts).toString('hex') })));
    }),
  );
});
afterAll(() => api.close());

const latin1 = (s: string) => Buffer.from(s, 'latin1');
const send = (f: typeof fetch, body: Buffer) => f(`${api.url}/v1/notes`, { method: 'POST', headers: { 'content-type': 'text/plain; charset=iso-8859-1' }, body });

describe('a text body that is not UTF-8', () => {
  it('is stored as the bytes sent, each request its own, and replays', async () => {
    const tape = join(suite.dir, 'latin1.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    expect(((await (await send(rec, latin1('café'))).json()) as { got: string }).got).toBe('636166e9');
    expect(((await (await send(rec, latin1('cafè'))).json()) as { got: string }).got).toBe('636166e8');
    await rec.close();
    const onTape = readFileSync(tape);
    expect(onTape.includes(latin1('café'))).toBe(true);
    expect(onTape.includes(latin1('cafè'))).toBe(true);
    expect(onTape.includes(Buffer.from('caf\uFFFD'))).toBe(false);

    const replay = createFetch({ tape, mode: 'replay', summary: false });
    expect(((await (await send(replay, latin1('cafè'))).json()) as { got: string }).got).toBe('636166e8');
    expect(((await (await send(replay, latin1('café'))).json()) as { got: string }).got).toBe('636166e9');
    // A third body: its miss compares it with a recording of 4 bytes, as sent.
    const miss = await send(replay, latin1('cafê'));
    expect(miss.status).toBe(400);
    expect(((await miss.json()) as { error: { message: string } }).error.message).toMatch(/from byte 3 \(both 4 bytes\)/);
    await replay.close();
  });
});
