// An answer the upstream stalls in the middle of, still being recorded when the fetch closes
// (its caller gone): past the shutdown timeout it is cut and left off the tape. What the run
// says of it must be what happened: the warning says the upstream had not finished answering
// (not that it never answered), and the summary counts the answer as not recorded, as the
// next replay will miss it.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { formatFetchSummary } from '../../src/proxy/fetch-summary.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-close-mid-answer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A provider that sends its stream's first event, then nothing more. */
async function stallingUpstream(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"delta":{"content":"Hel"}}]}\n\n');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

describe('a fetch closed in the middle of an answer it records', () => {
  it('warns that the upstream had not finished, and its summary counts the answer as not recorded', async () => {
    const up = await stallingUpstream();
    const warnings: string[] = [];
    let summary = '';
    const f = createFetch({ tape: join(dir, 'stall.tape'), mode: 'record', shutdownTimeoutMs: 200, onWarning: (m) => warnings.push(m), summary: (t) => (summary = t) });
    try {
      const ctl = new AbortController();
      const res = await f(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }), signal: ctl.signal });
      const reader = res.body!.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain('Hel');
      ctl.abort();
      await f.close();
    } finally {
      up.server.closeAllConnections();
      up.server.close();
    }
    const cut = warnings.filter((w) => w.includes('POST /v1/chat/completions'));
    expect(cut).toHaveLength(1);
    // Its caller had aborted it (read on for its record): said as such.
    expect(cut[0]).toMatch(/^tapedeck: POST \/v1\/chat\/completions: This tapedeck fetch was closed while it still read an answer its caller had aborted \(read on to record it\), and the upstream had not finished within the shutdown timeout \(200 ms\); not recorded\./);
    expect(cut[0]).not.toContain('before the upstream answered');
    expect(cut[0]).toContain('shutdownTimeoutMs');
    expect(summary).toMatch(/\(record\): 0 replayed, 0 recordings added \(1 answer not recorded\), 0 misses/);
    expect((await f.stats()).recorded).toBe(0);
  });

  it('the summary says nothing of answers not recorded when there were none', () => {
    expect(formatFetchSummary({ tape: 't.tape', mode: 'record', replayed: 0, added: 2, misses: [], unused: 0 })).toBe('tapedeck: t.tape (record): 0 replayed, 2 recordings added, 0 misses, 0 unused recordings');
    expect(formatFetchSummary({ tape: 't.tape', mode: 'record', replayed: 0, added: 2, misses: [], unused: 0, notRecorded: 2 })).toBe('tapedeck: t.tape (record): 0 replayed, 2 recordings added (2 answers not recorded), 0 misses, 0 unused recordings');
  });
});
