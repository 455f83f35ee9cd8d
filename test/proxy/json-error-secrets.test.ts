// A malformed JSON body that holds a key near its fault: the strict reader's error quotes 24 bytes
// either side, and the proxy's answer carried that piece of the key (20 characters of an OpenAI
// key after a trailing comma; the start of one in a Python dict sent with str()), which the
// client's failing test prints to the CI log. The quote is masked as the tape would mask it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-json-error-'));
const KEY = 'sk-proj-Q7fK2mP9xL4vR8tN3wB6yZ1cH5jD0gS2aE7uI9oF';
let proxy: ProxyServer;

beforeAll(async () => {
  proxy = await startProxy({ tape: join(dir, 'x.tape'), mode: 'replay', port: 0, onWarning: () => {} });
});
afterAll(async () => {
  await proxy.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The longest piece of the key (from 6 characters) that a text holds. */
function longestPiece(text: string): number {
  let best = 0;
  for (let n = 6; n <= KEY.length; n++) for (let i = 0; i + n <= KEY.length; i++) if (text.includes(KEY.slice(i, i + n))) best = n;
  return best;
}

async function post(body: string | Uint8Array, headers: Record<string, string> = {}): Promise<{ status: number; message: string; code: string }> {
  const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'python-requests/2.32.3', ...headers }, body });
  const json = (await res.json()) as { error: { message: string; code: string } };
  return { status: res.status, message: json.error.message, code: json.error.code };
}

describe('a strict-JSON error about a body that holds a key', () => {
  it('quotes the text after a key without it (a trailing comma)', async () => {
    const r = await post(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"key ${KEY}"}],}`);
    expect([r.status, r.code]).toEqual([400, 'E_JSON']);
    expect(r.message).toMatch(/^Invalid JSON at byte \d+ \(line 1, column \d+\): ….*REDACTED.*"\}\],⟪here⟫\}…: expected a double-quoted object key/);
    expect(longestPiece(r.message)).toBe(0);
  });

  it('quotes the text before a key without it (a Python dict sent with str())', async () => {
    const r = await post(`{'api_key': '${KEY}', 'model': 'gpt-4o-mini'}`);
    expect(r.code).toBe('E_JSON');
    expect(r.message).toContain("{⟪here⟫'api_key': '[REDACTED");
    expect(longestPiece(r.message)).toBe(0);
  });

  it('masks a gzip body as the reader read it', async () => {
    const gz = await post(gzipSync(`{"messages":[{"role":"user","content":"${KEY}"}],}`), { 'content-encoding': 'gzip' });
    expect(gz.code).toBe('E_JSON');
    expect(longestPiece(gz.message)).toBe(0);
  });

  it('masks a duplicate key error too (record mode checks before anything goes upstream)', async () => {
    const rec = await startProxy({ upstream: 'http://127.0.0.1:9', tape: join(dir, 'rec.tape'), mode: 'record', port: 0, onWarning: () => {} });
    try {
      const res = await fetch(`${rec.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"model":"m","messages":[{"role":"user","content":"${KEY}"}],"messages":1}` });
      const json = (await res.json()) as { error: { message: string; code: string } };
      expect(json.error.code).toBe('E_DUPLICATE_KEY');
      expect(longestPiece(json.error.message)).toBe(0);
    } finally {
      await rec.close();
    }
  });

  it('quotes a body without secrets as before', async () => {
    const r = await post('{"model":"gpt-4o-mini","messages":[],}');
    expect(r.message).toContain('…-4o-mini","messages":[],⟪here⟫}…');
  });
});
