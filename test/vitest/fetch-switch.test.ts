// The fetch switch: globalThis.fetch routed through a real tape (createFetch on a temp file) for
// listed hosts, other hosts passed through or blocked, everything restored afterwards.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { installFetchSwitch, type FetchSwitch } from '../../src/proxy/global-fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-switch-'));
const original = globalThis.fetch;
let routed: Upstream;
let other: Upstream;
const switches: FetchSwitch[] = [];
const chat = (content: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }) });

beforeAll(async () => {
  routed = await startUpstream();
  other = await startUpstream();
});
afterEach(() => {
  for (const s of switches.splice(0)) s.uninstall();
  // Every test leaves the global fetch as it found it.
  expect(globalThis.fetch).toBe(original);
});
afterAll(async () => {
  await routed.close();
  await other.close();
  rmSync(dir, { recursive: true, force: true });
});

function install(...args: Parameters<typeof installFetchSwitch>): FetchSwitch {
  const s = installFetchSwitch(...args);
  switches.push(s);
  return s;
}

/** A fetch that notes which URLs reached it and answers 200 (a routing target, not an upstream). */
function target(name: string, seen: string[]) {
  return async (input: string | URL | Request) => {
    seen.push(`${name} ${input instanceof Request ? input.url : String(input)}`);
    return new Response(name);
  };
}

describe('installFetchSwitch', () => {
  it('records and replays listed hosts through the tape, passes others through untouched, and restores fetch', async () => {
    const tapePath = join(dir, 'routed.tape');
    const tape = createFetch({ tape: tapePath, mode: 'update' });
    const sw = install({ fetch: tape, hosts: [new URL(routed.url).host] });
    expect(globalThis.fetch).not.toBe(original);
    const a = await fetch(`${routed.url}/v1/chat/completions`, chat('routed'));
    expect(a.headers.get('x-tapedeck-match')).toBe('recorded');
    expect(((await a.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('Echo 1: routed');
    const b = await fetch(`${other.url}/v1/chat/completions`, chat('not routed'));
    expect(b.headers.get('x-tapedeck-match')).toBeNull();
    expect(other.calls).toHaveLength(1);
    // The same request again: replayed from the tape, the upstream not called.
    const again = await fetch(`${routed.url}/v1/chat/completions`, chat('routed'));
    expect(again.headers.get('x-tapedeck-match')).toBe('exact');
    expect(routed.calls).toHaveLength(1);
    sw.uninstall();
    expect(sw.installed).toBe(false);
    expect(globalThis.fetch).toBe(original);
    await tape.close();
    const recs = (await readTape(tapePath)).records;
    expect(recs.map((r) => (r.value as { route: string }).route)).toEqual(['POST /v1/chat/completions']);
  });

  it('a tape fetch created after install reaches the network (no loop back into the tape)', async () => {
    // createFetch captures globalThis.fetch as its upstream: here that is the switch itself.
    let calls = 0;
    const sw = install({
      fetch: (i, init) => (++calls > 3 ? Promise.reject(new Error('the tape called itself')) : tape(i, init)),
    });
    const tape = createFetch({ tape: join(dir, 'late.tape'), mode: 'update' });
    const before = routed.calls.length;
    const r = await fetch(`${routed.url}/v1/chat/completions`, chat('late tape'));
    expect(r.headers.get('x-tapedeck-match')).toBe('recorded');
    expect(routed.calls.length).toBe(before + 1);
    expect(calls).toBe(1);
    sw.uninstall();
    await tape.close();
  });

  it('blockNetwork refuses unlisted hosts before anything is sent; allowHosts lets some through', async () => {
    const seen: string[] = [];
    install({ fetch: target('tape', seen), hosts: ['api.openai.com'], blockNetwork: true, allowHosts: [new URL(other.url).host] });
    const before = routed.calls.length;
    const err = await fetch(`${routed.url}/v1/models`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_NETWORK_BLOCKED');
    expect((err as TapedeckError).message).toContain(new URL(routed.url).host);
    expect(routed.calls.length).toBe(before);
    expect((await fetch(`${other.url}/v1/models`)).status).toBe(200);
    expect(await (await fetch('https://api.openai.com/v1/models')).text()).toBe('tape');
    expect(seen).toEqual(['tape https://api.openai.com/v1/models']);
  });

  it('data: and blob: URLs are read by the platform fetch, never routed or blocked (the SDKs fetch data:, before an upload)', async () => {
    const seen: string[] = [];
    install({ fetch: target('tape', seen), blockNetwork: true });
    expect(await (await fetch('data:,')).text()).toBe('');
    expect(await (await fetch('data:text/plain,hi')).text()).toBe('hi');
    const blob = URL.createObjectURL(new Blob(['blob text']));
    try {
      expect(await (await fetch(blob)).text()).toBe('blob text');
    } finally {
      URL.revokeObjectURL(blob);
    }
    install({ fetch: target('listed', seen), hosts: ['api.openai.com'], blockNetwork: true });
    expect(await (await fetch('data:,x')).text()).toBe('x');
    expect(seen).toEqual([]);
  });

  it('host patterns: name, host:port, *.domain, RegExp, IPv6', async () => {
    const seen: string[] = [];
    install({ fetch: target('tape', seen), hosts: ['api.example.com', '127.0.0.1:1', '*.openai.com', /^anthropic\./, '::1'], blockNetwork: true });
    const urls = [
      'https://api.example.com/a',
      'https://api.example.com:8443/b', // a name without a port matches any port
      'http://127.0.0.1:1/c',
      'https://eu.api.openai.com/d',
      'https://anthropic.example/e',
      'http://[::1]:9/f',
    ];
    for (const u of urls) await fetch(u);
    expect(seen).toEqual(urls.map((u) => `tape ${u}`));
    for (const u of ['http://127.0.0.1:2/x', 'https://openai.com/x', 'https://notapi.example.com/x', 'https://api.example.com.evil.test/x']) {
      await expect(fetch(u), u).rejects.toMatchObject({ code: 'E_NETWORK_BLOCKED' });
    }
  });

  it('nests: the newest switch routes, uninstalling it hands back to the older one, the last out restores fetch', async () => {
    const seen: string[] = [];
    const outer = install({ fetch: target('outer', seen) });
    const inner = install({ fetch: target('inner', seen) });
    await fetch('https://x.test/1');
    // run() binds a switch to an async context, whatever was installed later.
    await outer.run(() => fetch('https://x.test/2'));
    inner.uninstall();
    await fetch('https://x.test/3');
    outer.uninstall();
    expect(globalThis.fetch).toBe(original);
    expect(seen).toEqual(['inner https://x.test/1', 'outer https://x.test/2', 'outer https://x.test/3']);
  });

  it('run() keeps concurrent scopes apart', async () => {
    const seen: string[] = [];
    const a = install({ fetch: target('a', seen) });
    const b = install({ fetch: target('b', seen) });
    const tick = () => new Promise((r) => setImmediate(r));
    await Promise.all([
      a.run(async () => {
        await tick();
        await fetch('https://x.test/a1');
        await tick();
        await fetch('https://x.test/a2');
      }),
      b.run(async () => {
        await fetch('https://x.test/b1');
        await tick();
        await fetch('https://x.test/b2');
      }),
    ]);
    expect(seen.filter((s) => s.startsWith('a ')).map((s) => s.slice(-2))).toEqual(['a1', 'a2']);
    expect(seen.filter((s) => s.startsWith('b ')).map((s) => s.slice(-2))).toEqual(['b1', 'b2']);
  });

  it('a fetch replaced on top of the switch stays after uninstall; the switch then passes everything through', async () => {
    const seen: string[] = [];
    const sw = install({ fetch: target('tape', seen) });
    const captured = globalThis.fetch; // an SDK that captured the switched fetch
    const theirs = target('theirs', seen) as typeof fetch;
    globalThis.fetch = theirs;
    sw.uninstall();
    expect(globalThis.fetch).toBe(theirs);
    globalThis.fetch = original;
    expect((await captured(`${other.url}/v1/models`)).status).toBe(200);
    expect(seen).toEqual([]);
  });

  it('the OpenAI SDK built after install records through the tape, then replays with the upstream stopped', async () => {
    const tapePath = join(dir, 'sdk.tape');
    const up = await startUpstream();
    const host = new URL(up.url).host;
    const run = async (mode: 'update' | 'replay') => {
      const tape = createFetch({ tape: tapePath, mode });
      const sw = installFetchSwitch({ fetch: tape, hosts: [host], blockNetwork: true });
      try {
        // No fetch option: the client takes the global fetch when it is built.
        const client = new OpenAI({ baseURL: `${up.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
        const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'switched' }] });
        return r.choices[0]!.message.content;
      } finally {
        sw.uninstall();
        await tape.close();
      }
    };
    expect(await run('update')).toBe('Echo 1: switched');
    await up.close();
    expect(await run('replay')).toBe('Echo 1: switched');
    expect(up.calls).toHaveLength(1);
  });

  it('refuses a missing fetch and bad host patterns', () => {
    expect(() => installFetchSwitch({} as never)).toThrow(expect.objectContaining({ code: 'E_ARG' }));
    expect(() => installFetchSwitch({ fetch: original, hosts: [''] })).toThrow(expect.objectContaining({ code: 'E_ARG' }));
    expect(globalThis.fetch).toBe(original);
  });
});
