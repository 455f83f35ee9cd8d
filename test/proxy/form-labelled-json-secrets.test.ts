// JSON sent with a form's label (curl -d without a content type, axios given a string, a fetch
// so labelled) reaches an API that reads it as JSON: its secrets must be masked as a JSON body's
// are, and a real form must be keyed as it always was.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { normalizeBody } from '../../src/store/http-body.ts';
import { redactor } from '../../src/store/redact.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-form-json-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const GROQ = 'gsk_ZXCVBNMASDFGHJKLQWERTYUIOP0123456789zxcvbnmasdfg';
const OPENROUTER = 'sk-or-v1-0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef';
const SALT = '0123456789abcdef0123456789abcdef';
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
/** An upstream that answers every call with a small JSON body. */
const upstream = (async () => new Response('{"id":"x","choices":[]}', { status: 200, headers: { 'content-type': 'application/json' } })) as typeof fetch;

describe('a JSON body labelled as a form', () => {
  it('has its secret members and key-format strings masked, in key and stored body', () => {
    const body = enc(JSON.stringify({ model: 'm', api_key: 'CFFORMSECRET_0123456789abcdef', nested: { password: 'hunter2hunter2' }, messages: [{ role: 'user', content: `keys ${GROQ} and ${OPENROUTER}` }] }));
    const n = normalizeBody(FORM, body, redactor({ salt: SALT }));
    const stored = n.stored as string;
    for (const secret of ['CFFORMSECRET', 'hunter2', 'gsk_ZXCVBNM', 'sk-or-v1-0123']) {
      expect(stored).not.toContain(secret);
      expect(dec(n.bytes)).not.toContain(secret);
    }
    const parsed = JSON.parse(stored) as { api_key: string; model: string };
    expect(parsed.api_key).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
    expect(parsed.model).toBe('m');
  });

  it('keeps two requests two: different secrets give different keys', () => {
    const r = redactor({ salt: SALT });
    const a = normalizeBody(FORM, enc(JSON.stringify({ model: 'm', api_key: 'first-secret-value-0001' })), r).bytes;
    const b = normalizeBody(FORM, enc(JSON.stringify({ model: 'm', api_key: 'second-secret-value-002' })), r).bytes;
    expect(dec(a)).not.toBe(dec(b));
  });

  it('leaves a real form keyed and stored as before (secret fields masked, the rest byte for byte)', () => {
    const n = normalizeBody(FORM, enc('model=x&client_secret=s3cr3tvalue&q=%7B1%7D'), redactor());
    expect(n.stored).toBe('model=x&client_secret=%5BREDACTED%5D&q=%7B1%7D');
  });

  it('with keepSecrets, is stored as sent', () => {
    const text = JSON.stringify({ model: 'm', api_key: 'KEPTSECRET_0123456789abcdef' });
    expect(normalizeBody(FORM, enc(text), redactor({ keepSecrets: true })).stored).toBe(text);
  });

  it('through createFetch: no secret reaches the tape, and the call replays', async () => {
    const tape = join(dir, 'cf-form.tape');
    const body = JSON.stringify({ model: 'llama-3.3-70b-versatile', api_key: 'CFFORMSECRET_0123456789abcdef', messages: [{ role: 'user', content: `my groq key is ${GROQ}` }] });
    const rec = createFetch({ tape, mode: 'record', summary: false, fetch: upstream });
    await (await rec('http://127.0.0.1:9/openai/v1/chat/completions', { method: 'POST', headers: FORM, body })).text();
    await rec.close();
    const raw = readFileSync(tape, 'latin1');
    expect(raw.includes('CFFORMSECRET')).toBe(false);
    expect(raw.includes('gsk_ZXCVBNM')).toBe(false);
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const r = await play('http://127.0.0.1:9/openai/v1/chat/completions', { method: 'POST', headers: FORM, body });
      expect(r.status).toBe(200);
      expect(await r.text()).toBe('{"id":"x","choices":[]}');
    } finally {
      await play.close();
    }
  });
});
