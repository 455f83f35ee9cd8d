// Keys cut across the events of a stream, at random places, in random text (escapes, quotes,
// backslashes, non-ASCII letters and emoji), in three framings. The oracle is the text itself:
// the stream's deltas, joined after redaction, must read as the whole text with the key replaced
// by its mask, and no 6 characters of the key's secret part may be left in the bytes.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { maskSplitTexts, redactStream, splitCredentials, unitEnds } from '../../src/store/stream-redact.ts';
import { rng } from '../reference.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });

const WORDS = ['the', 'answer', 'is', 'café', '漢字', '🙂', 'say "hi"', 'a\\b', 'line\nbreak', 'tab\there', '42', 'ok.', '—'];
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function token(next: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += ALNUM[Math.floor(next() * ALNUM.length)];
  return s;
}

/** A credential of one of the formats, and where its secret part starts. */
function credential(next: () => number): { key: string; from: number } {
  const k = Math.floor(next() * 4);
  if (k === 0) return { key: `sk-proj-${token(next, 40)}`, from: 8 };
  if (k === 1) return { key: `Bearer ${token(next, 32)}`, from: 7 };
  if (k === 2) return { key: `AIza${token(next, 35)}`, from: 4 };
  return { key: `gsk_${token(next, 48)}`, from: 4 };
}

/** Text cut into pieces of 1-9 code points. */
function cut(text: string, next: () => number): string[] {
  const cps = [...text];
  const out: string[] = [];
  for (let i = 0; i < cps.length; ) {
    const n = 1 + Math.floor(next() * 9);
    out.push(cps.slice(i, i + n).join(''));
    i += n;
  }
  return out;
}

type Framing = 'openai' | 'anthropic' | 'ollama';

function streamOf(pieces: string[], framing: Framing): { body: Uint8Array; type: string } {
  const enc = new TextEncoder();
  if (framing === 'openai') {
    const ev = (delta: object) => `data: ${JSON.stringify({ id: 'chatcmpl-9', object: 'chat.completion.chunk', model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
    return { body: enc.encode(ev({ role: 'assistant', content: '' }) + pieces.map((p) => ev({ content: p })).join('') + 'data: [DONE]\n\n'), type: 'text/event-stream' };
  }
  if (framing === 'anthropic') {
    const ev = (name: string, data: object) => `event: ${name}\r\ndata: ${JSON.stringify({ type: name, ...data })}\r\n\r\n`;
    return { body: enc.encode(ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) + pieces.map((p) => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: p } })).join('') + ev('message_stop', {})), type: 'text/event-stream; charset=utf-8' };
  }
  return { body: enc.encode(pieces.map((p) => `${JSON.stringify({ model: 'llama3', message: { role: 'assistant', content: p }, done: false })}\n`).join('') + '{"done":true}\n'), type: 'application/x-ndjson' };
}

/** The stream's text as an SDK joins it. */
function joined(body: Uint8Array, framing: Framing): string {
  const text = new TextDecoder().decode(body);
  const docs = framing === 'ollama' ? text.split('\n').filter((l) => l.startsWith('{')) : [...text.matchAll(/^data: (\{.*)$/gm)].map((m) => m[1]!.replace(/\r$/, ''));
  return docs
    .map((d) => JSON.parse(d) as Record<string, any>)
    .map((e) => (framing === 'openai' ? (e.choices?.[0]?.delta?.content ?? '') : framing === 'anthropic' ? (e.delta?.text ?? '') : (e.message?.content ?? '')))
    .join('');
}

describe('a key cut across a stream at random places', () => {
  it('reads, joined after redaction, as the text with the key masked; no piece of the key is left', () => {
    const framings: Framing[] = ['openai', 'anthropic', 'ollama'];
    for (let seed = 1; seed <= 300; seed++) {
      const next = rng(seed);
      const framing = framings[seed % 3]!;
      const { key, from } = credential(next);
      const words = Array.from({ length: 4 + Math.floor(next() * 8) }, () => WORDS[Math.floor(next() * WORDS.length)]!);
      const at = Math.floor(next() * (words.length + 1));
      words.splice(at, 0, key);
      const text = words.join(' ');
      const { body, type } = streamOf(cut(text, next), framing);
      const out = redactStream(body, type, r);
      const expected = text.replace(key, r.mask(key));
      const got = joined(out!.body, framing);
      // The key may lie whole inside one piece (the text scan's case, left to it here).
      if (out!.body === body) {
        expect(got, `seed ${seed}`).toBe(text);
        expect(text.includes(key)).toBe(true);
        continue;
      }
      expect(got, `seed ${seed}`).toBe(expected);
      const bytes = Buffer.from(out!.body).toString('utf8');
      for (let i = from; i + 6 <= key.length; i++) expect(bytes.includes(key.slice(i, i + 6)), `seed ${seed}: ${key.slice(i, i + 6)}`).toBe(false);
      // As many units as before: the chunk boundaries map one to one.
      expect(unitEnds(out!.body, framing === 'ollama' ? 'ndjson' : 'sse').length).toBe(unitEnds(body, framing === 'ollama' ? 'ndjson' : 'sse').length);
    }
  });

  it('masks most keys as split ones: a cut lands inside nearly every key', () => {
    let split = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const next = rng(seed);
      const { key } = credential(next);
      const { body, type } = streamOf(cut(`see ${key} there`, next), 'openai');
      if (redactStream(body, type, r)!.body !== body) split++;
    }
    expect(split).toBeGreaterThan(90);
  });

  it('leaves streams without a key byte for byte, and a text that only looks cut (ids, model names repeated) alone', () => {
    const { body, type } = streamOf(cut('nothing secret here, only words and café 🙂', rng(7)), 'openai');
    expect(redactStream(body, type, r)!.body).toBe(body);
    // The same long token-like id in every event joins into a long run: no text arrives in pieces there.
    const same = new TextEncoder().encode(Array.from({ length: 5 }, () => `data: {"id":"sk-abcdefghij","d":"x"}\n\n`).join(''));
    expect(redactStream(same, 'text/event-stream', r)!.body).toBe(same);
  });

  it('finds the same split keys from parsed events (the scan, realtime frames) as from the stream text', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = rng(seed);
      const { key } = credential(next);
      const pieces = cut(`x ${key} y`, next);
      const events = pieces.map((p) => ({ kind: '', docs: [{ type: 'response.output_text.delta', delta: p }] }));
      const found = splitCredentials(events);
      const masked = maskSplitTexts(events.map((e) => JSON.stringify(e.docs[0])), (v) => r.mask(v));
      const { body, type } = streamOf(pieces, 'openai');
      const lexed = redactStream(body, type, r)!.body !== body;
      expect(found.length === 1, `seed ${seed}`).toBe(lexed);
      expect(masked.size > 0).toBe(lexed);
      if (lexed) expect(found[0]!.text).toBe(key);
    }
  });

  it('reads member names spelled with escapes (quotes, backslashes, \\u escapes) as the parse does', () => {
    // Names holding `\"` and `\\` before the text's member: a lexer that ends a name at an
    // escaped quote, or hashes two names as one, would group the pieces wrongly and miss the key.
    const NAMES = ['say "x"', 'a\\', '\\"', 'q\u0000', 'content', 'contenu', 'é"\\'];
    for (let seed = 1; seed <= 200; seed++) {
      const next = rng(seed);
      const { key } = credential(next);
      const pieces = cut(`x ${key} y`, next);
      const name = NAMES[Math.floor(next() * NAMES.length)]!;
      const other = NAMES[Math.floor(next() * NAMES.length)]!;
      // The other member holds a different value in each event (a counter's text): a stream of its own.
      const docs = pieces.map((p, i) => ({ [other]: `n${i}`, deep: [{ [`${other}"`]: ['"', '\\'] }], delta: { [name]: p } }));
      const events = docs.map((d) => ({ kind: '', docs: [d] }));
      const found = splitCredentials(events);
      const body = new TextEncoder().encode(docs.map((d) => `data: ${JSON.stringify(d)}\n\n`).join(''));
      const out = redactStream(body, 'text/event-stream', r)!;
      expect(out.body !== body, `seed ${seed} (${JSON.stringify(name)}, ${JSON.stringify(other)})`).toBe(found.length === 1);
      const text = new TextDecoder().decode(out.body);
      const got = [...text.matchAll(/^data: (.*)$/gm)].map((m) => (JSON.parse(m[1]!) as { delta: Record<string, string> }).delta[name]).join('');
      expect(got, `seed ${seed}`).toBe(found.length === 1 ? `x ${r.mask(key)} y` : `x ${key} y`);
    }
  });
});
