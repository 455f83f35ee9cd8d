// The page under test: the browser entry as a user's bundler would take it (dist/browser, with
// package.json's "browser" map applied by esbuild), the real OpenAI SDK, and the same script
// Node runs. Exposed on window for the test to drive with page.evaluate.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import * as tapedeck from '../../dist/browser/index.js';
import { anthropicScript, changedPrompt, keyWorkload, oddBodies, openaiScript } from './script.ts';

declare global {
  interface Window {
    tapedeck: typeof tapedeck;
    suite: typeof suite;
  }
}

const client = (fetch: typeof globalThis.fetch) => new OpenAI({ apiKey: 'sk-replay-only', baseURL: 'https://api.openai.com/v1', dangerouslyAllowBrowser: true, fetch, maxRetries: 0 });

const suite = {
  /** Keys of the shared workload with one backend: request keys, path hashes and whole digests. */
  keys(backend: tapedeck.BackendName) {
    tapedeck.setBackend(backend);
    return keyWorkload().map((body) => {
      const k = tapedeck.requestKeys(body);
      return { key: k.key, signature: k.signature, digest: tapedeck.hashJSON(JSON.stringify(body)), value: tapedeck.hashValue(body) };
    });
  },
  async loadTape(url: string, as: 'url' | 'response' | 'bytes' | 'arraybuffer' = 'url') {
    const source = as === 'url' ? url : as === 'response' ? await fetch(url) : as === 'bytes' ? new Uint8Array(await (await fetch(url)).arrayBuffer()) : await (await fetch(url)).arrayBuffer();
    const tape = await tapedeck.loadTape(source);
    return { name: tape.name, format: tape.format, header: tape.header, count: tape.records.length, offsets: tape.records.map((r) => r.offset), warnings: tape.warnings };
  },
  async errorOf(fn: () => Promise<unknown>) {
    try {
      await fn();
      return undefined;
    } catch (e) {
      const err = e as { code?: string; message: string; name: string };
      return { name: err.name, code: err.code, message: err.message };
    }
  },
  /** The shared OpenAI script, replayed from a tape loaded by URL. */
  async replay(url: string, opts: Omit<tapedeck.ReplayFetchOptions, 'tape'> = {}) {
    const f = tapedeck.createReplayFetch({ ...opts, tape: await tapedeck.loadTape(url) });
    try {
      return await openaiScript(client(f));
    } finally {
      await f.close();
    }
  },
  /** The shared Anthropic script, replayed from a tape loaded by URL. */
  async replayAnthropic(url: string) {
    const f = tapedeck.createReplayFetch({ tape: await tapedeck.loadTape(url) });
    return anthropicScript(new Anthropic({ apiKey: 'sk-ant-replay-only', baseURL: 'https://api.anthropic.com', dangerouslyAllowBrowser: true, fetch: f, maxRetries: 0 }));
  },
  /** A prompt that was never recorded, as the SDK reports it. */
  async miss(url: string) {
    const f = tapedeck.createReplayFetch({ tape: await tapedeck.loadTape(url) });
    return changedPrompt(client(f));
  },
  /** The raw streamed answer: its bytes, how many reads it took and when each arrived. */
  async rawStream(url: string, timing: tapedeck.Timing) {
    const f = tapedeck.createReplayFetch({ tape: await tapedeck.loadTape(url), timing });
    const res = await f('https://api.openai.com/v1/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', temperature: 0, stream: true, messages: [{ role: 'user', content: 'Stream me a story' }] }),
    });
    const reader = res.body!.getReader();
    const parts: string[] = [];
    const at: number[] = [];
    const t0 = performance.now();
    const dec = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(dec.decode(value, { stream: true }));
      at.push(performance.now() - t0);
    }
    return { text: parts.join(''), reads: parts.length, at, match: res.headers.get('x-tapedeck-match') };
  },
  /**
   * Faults asked for in a page: the chaos option's error, and a plain recorded request sent with
   * `x-tapedeck-chaos: none` (no fault) and with `429` (a fault): status, match and error code.
   */
  async chaosAsked(url: string) {
    const tape = await tapedeck.loadTape(url);
    const option = await window.suite.errorOf(async () => tapedeck.createReplayFetch({ tape, chaos: { faults: { 429: 1 } } } as never));
    const f = tapedeck.createReplayFetch({ tape });
    const send = async (value: string) => {
      const res = await f('https://api.openai.com/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-tapedeck-chaos': value },
        body: JSON.stringify({ model: 'gpt-4o-mini', temperature: 0, stream: true, messages: [{ role: 'user', content: 'Stream me a story' }] }),
      });
      await res.arrayBuffer();
      return { status: res.status, match: res.headers.get('x-tapedeck-match'), error: res.headers.get('x-tapedeck-error') };
    };
    return { option, none: await send('none'), forced: await send('429') };
  },
  /** Bodies no recording answers (malformed JSON, text, forms): each answer's status and text. */
  async oddBodies(url: string) {
    const f = tapedeck.createReplayFetch({ tape: await tapedeck.loadTape(url) });
    try {
      return await oddBodies(f);
    } finally {
      await f.close();
    }
  },
  /** Passthrough: the tape is not consulted, the given fetch answers. */
  async passthrough(url: string) {
    const seen: string[] = [];
    const live: typeof fetch = async (input) => {
      seen.push(input instanceof Request ? input.url : String(input));
      return new Response(JSON.stringify({ id: 'live', object: 'chat.completion', created: 0, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'live answer' }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } });
    };
    const f = tapedeck.createReplayFetch({ tape: await tapedeck.loadTape(url), mode: 'passthrough', fetch: live });
    const r = await client(f).chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Hello there, héllo ✓' }] });
    return { content: r.choices[0]!.message.content, seen };
  },
  /**
   * Passthrough when the live API fails: a fetch that cannot connect, and a call its caller
   * aborts while the API has not answered.
   */
  async passthroughFailures(url: string) {
    const tape = await tapedeck.loadTape(url);
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const init = { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-live' }, body };
    const down = tapedeck.createReplayFetch({ tape, mode: 'passthrough', fetch: async () => Promise.reject(new TypeError('Failed to fetch')) });
    const r = await down('https://api.openai.com/v1/chat/completions?key=secret', init);
    const unreachable = { status: r.status, error: ((await r.json()) as { error: { code: string; message: string; hint?: string } }).error };
    await down.close();
    let seenSignal: AbortSignal | undefined;
    const hanging: typeof fetch = (_input, given) =>
      new Promise((_resolve, reject) => {
        seenSignal = given?.signal ?? undefined;
        given?.signal?.addEventListener('abort', () => reject(given.signal!.reason), { once: true });
      });
    const slow = tapedeck.createReplayFetch({ tape, mode: 'passthrough', fetch: hanging });
    const caller = new AbortController();
    const aborted = slow('https://api.openai.com/v1/chat/completions', { ...init, signal: caller.signal }).then(
      () => 'answered',
      (e: unknown) => (e instanceof Error ? e.name : String(e)),
    );
    await new Promise((r) => setTimeout(r, 20));
    caller.abort();
    const whenAborted = await aborted;
    const fetchSawSignal = seenSignal instanceof AbortSignal;
    await slow.close();
    return { unreachable, whenAborted, fetchSawSignal };
  },
  /** Registers the replaying service worker and calls the API with plain fetch, as a page would. */
  async viaServiceWorker() {
    const reg = await navigator.serviceWorker.register('/sw.js', { type: 'module', scope: '/' });
    await navigator.serviceWorker.ready;
    if (!navigator.serviceWorker.controller) {
      await new Promise<void>((r) => navigator.serviceWorker.addEventListener('controllerchange', () => r(), { once: true }));
    }
    const call = async (content: string, stream = false) => {
      const res = await fetch('https://api.openai.com/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-not-needed' },
        body: JSON.stringify({ model: 'gpt-4o-mini', temperature: 0, ...(stream ? { stream: true } : {}), messages: [{ role: 'user', content }] }),
      });
      return { status: res.status, match: res.headers.get('x-tapedeck-match'), text: await res.text() };
    };
    const plain = await call('Hello there, héllo ✓');
    const streamed = await call('Stream me a story', true);
    const miss = await call('never recorded');
    const odd = await oddBodies(fetch);
    await reg.unregister();
    return { plain, streamed, miss, odd };
  },
};

window.tapedeck = tapedeck;
window.suite = suite;
