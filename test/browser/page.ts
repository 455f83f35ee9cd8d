// The page under test: the browser entry as a user's bundler would take it (dist/browser, with
// package.json's "browser" map applied by esbuild), the real OpenAI SDK, and the same script
// Node runs. Exposed on window for the test to drive with page.evaluate.
import OpenAI from 'openai';
import * as tapedeck from '../../dist/browser/index.js';
import { changedPrompt, keyWorkload, openaiScript } from './script.ts';

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
  async loadTape(url: string) {
    const tape = await tapedeck.loadTape(url);
    return { format: tape.format, header: tape.header, count: tape.records.length, warnings: tape.warnings };
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
  client,
  openaiScript,
  changedPrompt,
};

window.tapedeck = tapedeck;
window.suite = suite;
