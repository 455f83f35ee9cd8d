// How a miss reads through each SDK and method, as its users see it: the status and error class
// the SDK raises, a first line that says what differs and how to re-record, nothing the SDK adds
// (LangChain's "model not found" troubleshooting link), no retries, a short body for the SDKs
// that show the whole body (openai-python's str(e), the AI SDK's responseBody), and for streams
// an error the consumer of the stream receives.
import { APICallError } from 'ai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';
import { startUpstream } from './fake-upstream.ts';
import { PythonStatusError } from './python-requests.ts';
import { clients } from './sdk-clients.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-sdk-misses-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WHAT = 'tapedeck miss: message 0 (user) text differs from the closest recording';

describe.each(clients)('$name', (client) => {
  const tape = join(dir, `${client.name.replace(/\W+/g, '-')}.tape`);
  let proxy: ProxyServer;
  beforeAll(async () => {
    const upstream = await startUpstream({ gapMs: 0 });
    const rec = createFetch({ tape, mode: 'record' });
    try {
      await client.call(rec, upstream.url, 'What is the capital of France?', false);
      await client.call(rec, upstream.url, 'What is the capital of France?', true);
    } finally {
      await rec.close();
      await upstream.close();
    }
    proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    return () => proxy.close();
  });

  it.each([
    { via: 'createFetch', streamed: false },
    { via: 'createFetch', streamed: true },
    { via: 'proxy', streamed: false },
    { via: 'proxy', streamed: true },
    // Python code reaches tapedeck through the proxy only.
  ].filter((c) => client.sdk !== 'python' || c.via === 'proxy'))('$via, streamed $streamed: the error reads well', async ({ via, streamed }) => {
    const play = via === 'createFetch' ? createFetch({ tape, mode: 'replay' }) : undefined;
    let requests = 0;
    const counted = (async (input: RequestInfo | URL, init?: RequestInit) => {
      requests++;
      return (play ?? fetch)(input, init);
    }) as typeof fetch;
    try {
      // createFetch on the host the tape was recorded for (a loopback host's port is not compared).
      const err = await client.call(counted, proxy && via === 'proxy' ? proxy.url : 'http://127.0.0.1:9', 'What is the capital of Germany?', streamed).then(
        () => undefined,
        (e: unknown) => e,
      );
      // The consumer of a stream gets the error too (the AI SDK's as a stream part).
      expect(err).toBeInstanceOf(Error);
      const e = err as Error & { status?: number };
      // One request: a miss is never retried (the SDK's retries would only delay it).
      expect(requests).toBe(1);
      const first = e.message.split('\n')[0]!;
      expect(e.message).not.toMatch(/Troubleshooting URL|MODEL_NOT_FOUND|No output generated/);
      expect(e.message).not.toContain('Closest recordings');
      if (client.sdk === 'python') {
        // str(e) of openai-python: the status, then the body's repr, all of it short.
        expect(e).toBeInstanceOf(PythonStatusError);
        expect(e.message.startsWith(`Error code: 400 - {'error': {'message': '${WHAT}; re-record:`), e.message).toBe(true);
        expect(e.message).not.toContain('\\n');
        expect(e.message.length, e.message).toBeLessThan(600);
      } else if (client.sdk === 'ai-sdk') {
        expect(APICallError.isInstance(e)).toBe(true);
        const a = e as APICallError;
        expect([a.statusCode, a.isRetryable]).toEqual([400, false]);
        expect(first.startsWith(`${WHAT}; re-record: `), first).toBe(true);
        // The body rides along in logs and test reports: a few hundred bytes, no report.
        expect(a.responseBody!.length, a.responseBody).toBeLessThan(1000);
      } else {
        expect(e.constructor.name).toBe('BadRequestError');
        expect(e.status).toBe(400);
        expect(first.startsWith(`400 ${WHAT}; re-record: `), first).toBe(true);
        expect(first.length).toBeLessThanOrEqual(160);
        expect(e.message.split('\n').slice(1)).toEqual(['  request:   "What is the capital of Germany?"', '  recording: "What is the capital of France?"']);
      }
      const fix = via === 'proxy' ? 're-record: restart tapedeck serve with --mode record' : "re-record: createFetch({ mode: 'record' })";
      expect(e.message).toContain(fix);
    } finally {
      await play?.close();
    }
  });
});
