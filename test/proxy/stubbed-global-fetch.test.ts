// A test that stubs the global fetch (vi.stubGlobal('fetch', ...), `globalThis.fetch = stub`)
// and leaves it in place: a tape opened after it sent its live calls (record and update mode)
// to the stub, and recorded the stub's canned answer as the provider's, over the good recording.
// The tape's live calls now go to Node's own fetch, taken when tapedeck was imported; when the
// global fetch was already replaced at that point (a setup file that stubs it, then imports
// tapedeck), recording is refused with E_FETCH_STUBBED rather than recording the stub. A `fetch`
// option is the user's choice and is used as given. Real createFetch on a temp tape, the real
// OpenAI SDK, against the fake provider.
import OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { installFetchSwitch } from '../../src/proxy/global-fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { upstreamSuite } from './upstream-suite.ts';
import { join } from 'node:path';

const suite = upstreamSuite('stubbed-global-fetch');
const original = globalThis.fetch;

/** A unit test's stand-in for the provider: a canned chat answer; counts its calls. */
function cannedStub(): { fetch: typeof fetch; calls: string[] } {
  const calls: string[] = [];
  const f = (async (input: string | URL | Request) => {
    calls.push(input instanceof Request ? input.url : String(input));
    const answer = { id: 'canned', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'canned answer' }, finish_reason: 'stop' }] };
    return new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { fetch: f, calls };
}

/** The answers' texts on a tape. */
async function recordedTexts(tape: string): Promise<string[]> {
  const dec = new TextDecoder();
  return (await readTape(tape)).records.map((r) => dec.decode((r.value as { response: { body: Uint8Array } }).response.body));
}

const userCalls = (text: string) => suite.upstream.calls.filter((c) => c.body.includes(text));

afterEach(() => {
  globalThis.fetch = original;
  vi.unstubAllGlobals();
  vi.resetModules();
});

describe('the global fetch stubbed after tapedeck was imported', () => {
  it('createFetch records the provider, not the stub', async () => {
    const stub = cannedStub();
    globalThis.fetch = stub.fetch;
    const tape = join(suite.dir, 'after-import.tape');
    const f = createFetch({ tape, mode: 'record' });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: `${suite.upstream.url}/v1`, fetch: f, maxRetries: 0 });
      const c = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'after the stub' }] });
      expect(c.choices[0]!.message.content).toMatch(/^Echo \d+: after the stub$/);
    } finally {
      await f.close();
    }
    expect(stub.calls).toEqual([]);
    expect(userCalls('after the stub')).toHaveLength(1);
    const texts = await recordedTexts(tape);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toContain('Echo');
    expect(texts[0]).not.toContain('canned');
  });

  it('vi.stubGlobal left in place: the tape fetch made after it reaches the provider', async () => {
    const stub = cannedStub();
    vi.stubGlobal('fetch', stub.fetch);
    const tape = join(suite.dir, 'stub-global.tape');
    const f = createFetch({ tape, mode: 'update' });
    try {
      const r = await suite.chat(f, 'next to a stub');
      expect(r.status).toBe(200);
      expect(JSON.stringify(await r.json())).toContain('Echo');
    } finally {
      await f.close();
    }
    expect(stub.calls).toEqual([]);
    expect(userCalls('next to a stub')).toHaveLength(1);
  });

  it("the fetch switch's tape calls reach the provider; other hosts still get the stub", async () => {
    const stub = cannedStub();
    globalThis.fetch = stub.fetch;
    const tape = join(suite.dir, 'switch.tape');
    const f = createFetch({ tape, mode: 'record' });
    const sw = installFetchSwitch({ fetch: f, hosts: [new URL(suite.upstream.url).host] });
    try {
      const r = await suite.chat(globalThis.fetch, 'through the switch');
      expect(JSON.stringify(await r.json())).toContain('Echo');
      // A host the switch does not route keeps the test's stub.
      const other = await globalThis.fetch('http://example.invalid/x');
      expect((await other.json()).id).toBe('canned');
    } finally {
      sw.uninstall();
      await f.close();
    }
    expect(stub.calls).toEqual(['http://example.invalid/x']);
    expect(userCalls('through the switch')).toHaveLength(1);
    expect(await recordedTexts(tape)).toEqual([expect.stringContaining('Echo')]);
  });
});

describe('the global fetch stubbed before tapedeck was imported', () => {
  /** createFetch from a fresh import of the module, made while `stub` is the global fetch. */
  async function importedUnder(stub: typeof fetch): Promise<typeof createFetch> {
    vi.resetModules();
    globalThis.fetch = stub;
    return (await import('../../src/proxy/fetch.ts')).createFetch;
  }

  it('a test double: recording is refused with E_FETCH_STUBBED and nothing reaches the stub or the tape', async () => {
    const stub = cannedStub();
    const create = await importedUnder(vi.fn(stub.fetch) as typeof fetch);
    const tape = join(suite.dir, 'before-import.tape');
    const f = create({ tape, mode: 'record' });
    let status = 0;
    let text = '';
    try {
      // As a provider's error: a 400, which no SDK retries (the same again).
      const r = await f(`${suite.upstream.url}/v1/chat/completions?key=query-secret-123`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stubbed before import' }] }),
      });
      status = r.status;
      text = await r.text();
    } finally {
      await f.close().catch(() => undefined);
    }
    expect(status).toBe(400);
    expect(text).toContain('E_FETCH_STUBBED');
    expect(text).toMatch(/replaced by a test double when llm-tapedeck was imported/);
    expect(text).toContain('createFetch({ fetch })');
    // The URL it names leaves out the query, where a key may be.
    expect(text).toContain(`${suite.upstream.url}/v1/chat/completions`);
    expect(text).not.toContain('query-secret-123');
    expect(stub.calls).toEqual([]);
    expect(userCalls('stubbed before import')).toHaveLength(0);
    const texts = await readTape(tape).then(
      (t) => t.records.length,
      () => 0,
    );
    expect(texts).toBe(0);
  });

  it('a fetch option is used as given', async () => {
    const stub = cannedStub();
    const create = await importedUnder(stub.fetch);
    const tape = join(suite.dir, 'explicit.tape');
    const f = create({ tape, mode: 'record', fetch: original });
    try {
      const r = await suite.chat(f, 'explicit fetch');
      expect(JSON.stringify(await r.json())).toContain('Echo');
    } finally {
      await f.close();
    }
    expect(stub.calls).toEqual([]);
    expect(userCalls('explicit fetch')).toHaveLength(1);
  });

  it("another fetch put in place on purpose (undici's, a polyfill) is recorded through, said once in a warning", async () => {
    const calls: string[] = [];
    // A fetch of its own that reaches the network: not a test double.
    const polyfill = (async (input: string | URL | Request, init?: RequestInit) => {
      calls.push(String(input));
      return original(input, init);
    }) as typeof fetch;
    const warnings: string[] = [];
    const on = (w: Error) => warnings.push(w.message);
    process.on('warning', on);
    try {
      const create = await importedUnder(polyfill);
      const tape = join(suite.dir, 'polyfill.tape');
      const f = create({ tape, mode: 'record' });
      try {
        const r = await suite.chat(f, 'through a polyfill');
        expect(JSON.stringify(await r.json())).toContain('Echo');
      } finally {
        await f.close();
      }
      await new Promise((r) => setImmediate(r));
      expect(calls).toHaveLength(1);
      expect(userCalls('through a polyfill')).toHaveLength(1);
      expect(warnings.join('\n')).toContain('the global fetch had been replaced when llm-tapedeck was imported');
      expect(await recordedTexts(tape)).toEqual([expect.stringContaining('Echo')]);
    } finally {
      process.off('warning', on);
    }
  });
});
