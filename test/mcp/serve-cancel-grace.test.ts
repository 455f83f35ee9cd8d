// `tapedeck serve` replaying MCP over Streamable HTTP took the 2000 ms default for how late a
// client may cancel a call recorded as cancelled: only `tapedeck mcp` had --cancel-grace. The
// proxy now takes cancelGraceMs (--cancel-grace). With the real server-everything and SDK client.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { serveOptions } from '../../src/proxy/cli.ts';
import { startProxy } from '../../src/proxy/index.ts';
import { TapedeckError } from '../../src/errors.ts';
import { everythingHttp, tmp } from './helpers.ts';

const LONG = { name: 'trigger-long-running-operation', arguments: { duration: 3, steps: 3 } };
const CANCEL_AFTER_MS = 200;

/** A slow call, cancelled after CANCEL_AFTER_MS unless `cancel` is false: how it ended, and when. */
async function session(url: string, cancel: boolean): Promise<{ code?: number; message: string; ms: number }> {
  const client = new Client({ name: 'agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  try {
    const ac = new AbortController();
    const timer = cancel ? setTimeout(() => ac.abort('user cancelled'), CANCEL_AFTER_MS) : undefined;
    const t0 = Date.now();
    const out = await client.callTool(LONG, undefined, { signal: ac.signal, timeout: 20_000 }).then(
      () => ({ message: 'answered' }),
      (e: unknown) => ({ ...(e instanceof McpError ? { code: e.code } : {}), message: String((e as Error).message) }),
    );
    const ms = Date.now() - t0;
    clearTimeout(timer);
    // The SDK posts the cancellation after the call rejects; closing at once would abort that post.
    if (cancel) await new Promise((r) => setTimeout(r, 300));
    return { ...out, ms };
  } finally {
    await client.close();
  }
}

describe('tapedeck serve --cancel-grace', () => {
  it('replays a call recorded as cancelled with the grace given, not the default', async () => {
    const dir = tmp('serve-cancel-grace');
    const tape = join(dir, 'cancel.tape');
    const up = await everythingHttp();
    try {
      const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
      try {
        expect((await session(rec.url, true)).message).toContain('user cancelled');
      } finally {
        await rec.close();
      }
    } finally {
      await up.stop();
    }
    const replay = await startProxy({ tape, mode: 'replay', port: 0, cancelGraceMs: serveOptions(['--tape', tape, '--cancel-grace', '150']).cancelGraceMs });
    try {
      const r = await session(replay.url, false);
      expect(r).toMatchObject({ code: -32050 });
      const m = /recorded as cancelled by the client after (\d+) ms; this run did not cancel it \(waited (\d+) ms\)/.exec(r.message);
      expect(m).not.toBeNull();
      // The recorded time is shown rounded, the wait is counted from it unrounded: within 1 ms.
      expect(Math.abs(Number(m![2]) - Number(m![1]) - 150)).toBeLessThanOrEqual(1);
      // Well before the default grace (2000 ms) would have ended the wait.
      expect(r.ms).toBeLessThan(Number(m![1]) + 1500);
    } finally {
      await replay.close();
    }
  });

  it('refuses a value that is not whole milliseconds from 0, with the flag named', () => {
    expect(serveOptions(['--tape', 'x.tape', '--cancel-grace', '0']).cancelGraceMs).toBe(0);
    for (const bad of ['-1', '1.5', 'soon']) {
      let err: unknown;
      try {
        serveOptions(['--tape', 'x.tape', '--cancel-grace', bad]);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_ARG');
      expect((err as TapedeckError).message).toContain('--cancel-grace');
    }
  });

  it('createHandler refuses a bad cancelGraceMs when it is made', async () => {
    await expect(startProxy({ tape: join(tmp('serve-cancel-grace-bad'), 't.tape'), mode: 'replay', port: 0, cancelGraceMs: -5 })).rejects.toMatchObject({ code: 'E_ARG', message: expect.stringContaining('cancelGraceMs') });
  });
});
