// An end-to-end suite (Playwright's webServer, a compose file) points an app at `tapedeck serve`;
// the app may catch the SDK's error and render a friendly message, so the test still passes.
// What is left to fail the run is the proxy itself: `/__tapedeck/stats` counts the misses, and
// must also say which requests missed, what differed and how to record them, for a global
// teardown to put in the report.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-stats-missed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ask = (client: OpenAI, content: string) => client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

describe('/__tapedeck/stats', () => {
  it('names each missed request, what differed and the fix, beside the count', async () => {
    const tape = join(dir, 'app.tape');
    const up = await startUpstream();
    const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    try {
      await ask(new OpenAI({ apiKey: 'sk-test', baseURL: `${rec.url}/v1`, maxRetries: 0 }), 'Tell me a joke');
    } finally {
      await rec.close();
      await up.close();
    }
    const proxy = await startProxy({ tape, port: 0, onMiss: () => {} });
    try {
      const client = new OpenAI({ apiKey: 'replay', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
      await ask(client, 'Tell me a joke');
      // The app under test swallows this one.
      await expect(ask(client, 'Tell me two jokes')).rejects.toThrow(/tapedeck miss/);
      const stats = await (await fetch(`${proxy.url}/__tapedeck/stats`)).json();
      expect(stats.misses).toBe(1);
      expect(stats.hits).toBe(1);
      expect(stats.missed).toHaveLength(1);
      expect(stats.missed[0]).toMatch(/^POST \/v1\/chat\/completions: message 0 \(user\) text differs from the closest recording; re-record: restart tapedeck serve with --mode record/);
      expect(proxy.handler.stats().missed).toEqual(stats.missed);
    } finally {
      await proxy.close();
    }
  });

  it('keeps a bounded number of lines however many requests miss', async () => {
    const proxy = await startProxy({ tape: join(dir, 'none.tape'), port: 0, onMiss: () => {}, onWarning: () => {} });
    try {
      const client = new OpenAI({ apiKey: 'replay', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
      for (let i = 0; i < 60; i++) await expect(ask(client, `question ${i}`)).rejects.toThrow(/tapedeck miss/);
      const stats = proxy.handler.stats();
      expect(stats.misses).toBe(60);
      expect(stats.missed).toHaveLength(50);
      expect(stats.missed![0]).toMatch(/^POST \/v1\/chat\/completions: .*no tape at/);
    } finally {
      await proxy.close();
    }
  });
});
