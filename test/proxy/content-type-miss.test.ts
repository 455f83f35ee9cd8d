// A JSON body sent with a content type that keys it the other way (a page's fetch with a string
// body goes out as text/plain; an SDK sends application/json) missed with "the one recording
// for POST /v1/chat/completions has another request" or "none of the N recordings ... has this
// body", though a recording held these very bytes: the miss now names the content type.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startUpstream, type Upstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-ct-miss-'));
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  rmSync(dir, { recursive: true, force: true });
});

const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
const other = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Something else' }] });
const send = (f: typeof fetch, contentType: string, b = body) => f(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': contentType }, body: b });

async function recordWith(name: string, contentType: string): Promise<string> {
  const tape = join(dir, name);
  const rec = createFetch({ tape, mode: 'record' });
  await (await send(rec, contentType)).text();
  await (await send(rec, contentType, other)).text();
  await rec.close();
  return tape;
}

describe('a miss whose only change is the content type', () => {
  it('recorded as text/plain, replayed as application/json: says so', async () => {
    const tape = await recordWith('text.tape', 'text/plain;charset=UTF-8');
    const f = createFetch({ tape, mode: 'replay' });
    try {
      expect((await send(f, 'text/plain;charset=UTF-8')).status).toBe(200);
      const res = await send(f, 'application/json');
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain(`the body is a recording's, but sent with content-type \\"application/json\\", recorded with content-type \\"text/plain;charset=UTF-8\\"`);
      expect(text).toContain('send the content type the recording was made with');
    } finally {
      await f.close();
    }
  });

  it('recorded as application/json, replayed as text/plain: says so', async () => {
    const tape = await recordWith('json.tape', 'application/json');
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const res = await send(f, 'text/plain;charset=UTF-8');
      expect(res.status).toBe(400);
      expect(await res.text()).toContain(`the body is a recording's, but sent with content-type \\"text/plain;charset=UTF-8\\", recorded with content-type \\"application/json\\"`);
    } finally {
      await f.close();
    }
  });

  it('another body with the other content type is not told as one', async () => {
    const tape = join(dir, 'json.tape');
    const f = createFetch({ tape, mode: 'replay' });
    try {
      const res = await send(f, 'text/plain', JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Never recorded' }] }));
      expect(res.status).toBe(400);
      expect(await res.text()).not.toContain("the body is a recording's");
    } finally {
      await f.close();
    }
  });
});
