// An Azure SAS token pasted into a prompt without its URL (`sv=…&sp=…&sig=…`), and a Google OAuth
// refresh token (`1//0g…`) in a prompt or an answer, were stored as typed: the SAS rule read only
// a URL's query, and no key format knew the refresh token. Both are masked now, keyed (two
// different ones stay two requests), the rest of the SAS token kept readable, in request bodies,
// answers and streams, and `tapedeck scan` reports them in tapes recorded before.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { redactAnswerBody } from '../../src/store/stream-redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { rng } from '../reference.ts';

const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
const g = rng(7031);
const pick = (chars: string, n: number): string => Array.from({ length: n }, () => chars[Math.floor(g() * chars.length)]!).join('');
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URLSAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';
const enc = new TextEncoder();
const dec = new TextDecoder();

/** A SAS signature as Azure writes it in a token: base64 of an HMAC-SHA256, percent-encoded. */
const newSig = (): string => encodeURIComponent(pick(B64, 43) + '=');
const sas = (sig: string): string => `sv=2022-11-02&ss=b&srt=sco&sp=rwdlacupx&se=2026-01-01T00:00:00Z&st=2025-01-01T00:00:00Z&spr=https&sig=${sig}`;
const newRefresh = (): string => `1//0g${pick(URLSAFE, 98)}`;

const SIG = newSig();
const OTHER_SIG = newSig();
const TOKEN = newRefresh();
const OTHER_TOKEN = newRefresh();
const chat = (content: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content }] });

describe('an Azure SAS token without its URL', () => {
  it('has its signature masked, keyed, and the rest kept', () => {
    const out = JSON.stringify(r.value(chat(`Use this SAS token: ${sas(SIG)} to upload.`)));
    expect(out).not.toContain(SIG.slice(0, 20));
    expect(out).toContain(`sig=${r.mask(SIG)}`);
    expect(out).toContain('sv=2022-11-02&ss=b&srt=sco&sp=rwdlacupx');
    expect(JSON.stringify(r.value(chat(`Use this SAS token: ${sas(OTHER_SIG)} to upload.`)))).not.toBe(out);
  });

  it('is masked in a raw body, an answer and a stream', () => {
    const body = r.bytes(enc.encode(JSON.stringify(chat(sas(SIG)))), 'application/json');
    expect(dec.decode(body)).not.toContain(SIG.slice(0, 20));
    const answer = { choices: [{ message: { role: 'assistant', content: `Your token is ${sas(SIG)}` } }] };
    expect(dec.decode(redactAnswerBody(enc.encode(JSON.stringify(answer)), 'application/json', r).body)).not.toContain(SIG.slice(0, 20));
    const sse = `data: ${JSON.stringify({ delta: `token ${sas(SIG)} ok` })}\n\ndata: [DONE]\n\n`;
    expect(dec.decode(redactAnswerBody(enc.encode(sse), 'text/event-stream', r).body)).not.toContain(SIG.slice(0, 20));
  });

  it('is found by scan in a tape recorded before, and a masked one is not', () => {
    const rec = { v: 1, kind: 'http', request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: chat(sas(SIG)) } };
    expect(secretsInValue(rec).length).toBeGreaterThan(0);
    expect(secretsInValue(r.value(rec))).toEqual([]);
  });

  it('leaves text with a short or masked sig= as it is', () => {
    for (const t of ['the sig=abc parameter of the token', `sig=${encodeURIComponent(r.mask(SIG))} and sv=2022-11-02`]) expect(r.text(t)).toBe(t);
  });
});

describe('a Google OAuth refresh token', () => {
  it('is masked, keyed, in a prompt, a raw body with escaped slashes, an answer and a stream', () => {
    const out = JSON.stringify(r.value(chat(`refresh_token is ${TOKEN} please refresh`)));
    expect(out).not.toContain(TOKEN.slice(5, 30));
    expect(out).toContain(r.mask(TOKEN));
    expect(JSON.stringify(r.value(chat(`refresh_token is ${OTHER_TOKEN} please refresh`)))).not.toBe(out);
    const raw = JSON.stringify(chat(`token ${TOKEN}`)).replace(/\//g, '\\/');
    const masked = dec.decode(r.bytes(enc.encode(raw), 'application/json'));
    expect(masked).not.toContain(TOKEN.slice(5, 30));
    expect(masked).toContain(r.mask(TOKEN));
    const answer = { choices: [{ message: { role: 'assistant', content: `Saved ${TOKEN}.` } }] };
    expect(dec.decode(redactAnswerBody(enc.encode(JSON.stringify(answer)), 'application/json', r).body)).not.toContain(TOKEN.slice(5, 30));
    const sse = `data: ${JSON.stringify({ delta: `it is ${TOKEN}` })}\n\ndata: [DONE]\n\n`;
    expect(dec.decode(redactAnswerBody(enc.encode(sse), 'text/event-stream', r).body)).not.toContain(TOKEN.slice(5, 30));
  });

  it('is found by scan in a tape recorded before', () => {
    const rec = { v: 1, kind: 'http', request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: chat(TOKEN) } };
    expect(secretsInValue(rec).length).toBeGreaterThan(0);
    expect(secretsInValue(r.value(rec))).toEqual([]);
  });

  it('leaves dates and paths with 1/ alone', () => {
    for (const t of ['on 11/01/2025 we met at https://example.com/1//0g', 'see docs/v1/1//0gshort path']) expect(r.text(t)).toBe(t);
  });
});
