// A recording made by nock's own recorder without `enable_reqheaders_recording` keeps no request
// headers: Anthropic calls made with `anthropic-beta` and without it import as repeats of one
// request, and a test that sends the call without the beta twice gets the beta answer the second
// time. The import was silent; it now warns, naming the option that keeps them. A recording
// made with the option imports without that warning and keeps the calls apart.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { importRecordings } from '../../src/proxy/import.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-nock-headers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** nock 15's recorder needs Promise.withResolvers (Node 22): added where it is missing. */
function withResolvers(): void {
  const P = Promise as unknown as { withResolvers?: () => unknown };
  P.withResolvers ??= () => {
    let resolve!: (v: unknown) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };
}

const BODY = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });

/**
 * Records with nock's recorder (its own options) two Anthropic calls to a local server that
 * answers with the `anthropic-beta` it got: without the beta, then with it. Returns the JSON file.
 */
async function recordBeta(name: string, headers: boolean): Promise<string> {
  withResolvers();
  const nock = (await import('nock')).default;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: `beta=${req.headers['anthropic-beta'] ?? 'none'}` }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  nock.recorder.rec({ output_objects: true, dont_print: true, enable_reqheaders_recording: headers });
  let defs: unknown[];
  try {
    for (const beta of [undefined, 'output-128k-2025-02-19']) {
      const h: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-api03-nock-secret-0000000000', 'anthropic-version': '2023-06-01' };
      if (beta) h['anthropic-beta'] = beta;
      await (await fetch(`${base}/v1/messages`, { method: 'POST', headers: h, body: BODY })).text();
    }
    for (let i = 0; i < 100 && nock.recorder.play().length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    defs = nock.recorder.play() as unknown[];
  } finally {
    nock.recorder.clear();
    nock.restore();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
  expect(defs).toHaveLength(2);
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(defs, null, 2));
  return file;
}

describe("nock's recorder without enable_reqheaders_recording", () => {
  it('imports with a warning that the request headers are lost (anthropic-beta calls become repeats), naming the option', async () => {
    const file = await recordBeta('no-headers.json', false);
    const warnings: string[] = [];
    const report = await importRecordings(file, join(dir, 'no-headers.tape'), { onWarning: (m) => warnings.push(m) });
    // The two calls are one request now, answered in turn.
    expect(report.records).toBe(2);
    expect(report.routes).toEqual([{ provider: 'anthropic', route: 'POST /v1/messages', records: 2 }]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`${file}: the nock recording keeps no request headers (no definition has "reqheaders": it was recorded without enable_reqheaders_recording)`);
    expect(warnings[0]).toContain("anthropic-beta");
    expect(warnings[0]).toContain('enable_reqheaders_recording: true');
  });

  it('with the option: no such warning, and the two calls are filed apart', async () => {
    const file = await recordBeta('headers.json', true);
    const warnings: string[] = [];
    const report = await importRecordings(file, join(dir, 'headers.tape'), { onWarning: (m) => warnings.push(m) });
    expect(report.records).toBe(2);
    expect(report.routes).toHaveLength(2);
    expect(warnings.filter((w) => w.includes('reqheaders'))).toEqual([]);
  });
});
