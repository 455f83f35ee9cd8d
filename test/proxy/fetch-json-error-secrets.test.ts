// createFetch's strict-JSON errors (E_JSON, E_DUPLICATE_KEY, ...) quote the body around the
// fault, 24 bytes either side: a key near the fault (a trailing comma after a message that pastes
// one, a Python dict sent with str()) was quoted in part in the answer, which the SDK raises and a
// failing test prints to the CI log. The quote is masked as the tape would mask it, as the
// proxy's is (json-error-secrets.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-fetch-json-error-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = 'sk-proj-Q7fK2mP9xL4vR8tN3wB6yZ1cH5jD0gS2aE7uI9oF';

/** The longest piece of the key (from 6 characters) that a text holds. */
function longestPiece(text: string): number {
  let best = 0;
  for (let n = 6; n <= KEY.length; n++) for (let i = 0; i + n <= KEY.length; i++) if (text.includes(KEY.slice(i, i + n))) best = n;
  return best;
}

/** What the answer to `body` says: its status, and the error's code and message. */
async function post(mode: 'replay' | 'record', body: string | Uint8Array, headers: Record<string, string> = {}, redact?: object): Promise<{ status: number; code: string; message: string }> {
  const f = createFetch({ tape: join(dir, `${mode}.tape`), mode, summary: false, onWarning: () => {}, ...(redact ? { redact } : {}), fetch: (async () => Response.json({ id: 'x' })) as typeof fetch });
  try {
    const res = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const json = (await res.json()) as { error: { message: string; code: string } };
    return { status: res.status, code: json.error.code, message: json.error.message };
  } finally {
    await f.close();
  }
}

describe("createFetch's strict-JSON error about a body that holds a key", () => {
  it('quotes the text after a key without it (a trailing comma)', async () => {
    const r = await post('replay', `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"key ${KEY}"}],}`);
    expect([r.status, r.code]).toEqual([400, 'E_JSON']);
    expect(r.message).toMatch(/Invalid JSON at byte \d+ \(line 1, column \d+\): ….*REDACTED.*"\}\],⟪here⟫\}…: expected a double-quoted object key/);
    expect(longestPiece(r.message)).toBe(0);
  });

  it('quotes the text before a key without it (a Python dict sent with str())', async () => {
    const r = await post('replay', `{'api_key': '${KEY}', 'model': 'gpt-4o-mini'}`);
    expect(r.code).toBe('E_JSON');
    expect(r.message).toContain("{⟪here⟫'api_key': '[REDACTED");
    expect(longestPiece(r.message)).toBe(0);
  });

  it('masks a gzip body as the reader read it', async () => {
    const r = await post('replay', gzipSync(`{"messages":[{"role":"user","content":"${KEY}"}],}`), { 'content-encoding': 'gzip' });
    expect(r.code).toBe('E_JSON');
    expect(longestPiece(r.message)).toBe(0);
  });

  it('masks a duplicate key error in record mode, checked before anything goes upstream', async () => {
    const r = await post('record', `{"model":"m","messages":[{"role":"user","content":"${KEY}"}],"messages":1}`);
    expect(r.code).toBe('E_DUPLICATE_KEY');
    expect(longestPiece(r.message)).toBe(0);
  });

  it('quotes a body without secrets as before, and keeps the key when told to keep secrets', async () => {
    expect((await post('replay', '{"model":"gpt-4o-mini","messages":[],}')).message).toContain('…-4o-mini","messages":[],⟪here⟫}…');
    const kept = await post('replay', `{"messages":[{"role":"user","content":"${KEY}"}],}`, {}, { keepSecrets: true });
    expect(longestPiece(kept.message)).toBeGreaterThan(6);
  });
});

describe("a page's strict-JSON error", () => {
  it('is E_JSON as in Node, and keeps its quote: the page wrote the body itself, and the answer goes only to its own code (docs/browser.md)', async () => {
    const root = join(import.meta.dirname, '../..');
    const out = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    expect(Object.keys(out.metafile.inputs)).toContain('dist/proxy/json-error-excerpt.browser.js');
    type Entry = { createReplayFetch: (o: object) => ((u: string, i?: RequestInit) => Promise<Response>) & { close(): Promise<void> } };
    const page = (await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0]!.text).toString('base64')}`)) as Entry;
    const tape = { name: 'mem', format: 'json' as const, header: { formatVersion: 1, created: 'x', tapedeckVersion: 'y' }, records: [], warnings: [] };
    const f = page.createReplayFetch({ tape, onWarning: () => {} });
    const res = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"messages":[{"role":"user","content":"${KEY}"}],}` });
    const json = (await res.json()) as { error: { message: string; code: string } };
    await f.close();
    expect(json.error.code).toBe('E_JSON');
    expect(json.error.message).toContain('⟪here⟫');
  });
});
