// Secret-named members in tool-call arguments streamed a few characters an event (Anthropic's
// input_json_delta, OpenAI's delta.tool_calls[].function.arguments): no single event holds
// `"password":"…"` whole, so each event's own redaction saw nothing and the value reached the
// tape, while the same arguments answered whole were masked. The joined text is read as JSON.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { redactAnswerBody, splitCredentials } from '../../src/store/stream-redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
const PW = 'PLANTEDARGPW08zzqxQ7vR2';
const KEY = 'PLANTEDARGKEY09zzqxM4tL8';
const ARGS = JSON.stringify({ host: 'db.internal', password: PW, api_key: KEY });
const enc = new TextEncoder();
const dec = new TextDecoder();

function pieces(s: string, n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += n) out.push(s.slice(i, i + n));
  return out;
}

function anthropic(n: number, args = ARGS): Uint8Array {
  const ev = (t: string, d: object) => `event: ${t}\ndata: ${JSON.stringify({ type: t, ...d })}\n\n`;
  let s = ev('message_start', { message: { id: 'msg_1', role: 'assistant', content: [] } });
  s += ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'connect_db', input: {} } });
  for (const p of pieces(args, n)) s += ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: p } });
  s += ev('content_block_stop', { index: 0 }) + ev('message_stop', {});
  return enc.encode(s);
}

function openai(n: number, args = ARGS): Uint8Array {
  const chunk = (delta: object) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta }] })}\n\n`;
  let s = chunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'connect_db', arguments: '' } }] });
  for (const p of pieces(args, n)) s += chunk({ tool_calls: [{ index: 0, function: { arguments: p } }] });
  return enc.encode(s + 'data: [DONE]\n\n');
}

/** The stream's pieces of one text stream joined, as an SDK joins them. */
function joined(body: Uint8Array, pick: (d: any) => string | undefined): string {
  return [...dec.decode(body).matchAll(/^data: (\{.*\})$/gm)].map((m) => pick(JSON.parse(m[1]!)) ?? '').join('');
}

describe('secret members in streamed tool-call arguments', () => {
  const cases = [
    { name: 'Anthropic input_json_delta', body: anthropic, pick: (d: any) => d.delta?.partial_json },
    { name: 'OpenAI tool_calls arguments', body: openai, pick: (d: any) => d.choices?.[0]?.delta?.tool_calls?.[0]?.function?.arguments },
  ];
  for (const c of cases) {
    it(`masks them where the value begins, the joined arguments still JSON (${c.name})`, () => {
      for (const n of [1, 2, 3, 6, 7, 11, 40]) {
        const body = c.body(n);
        const out = redactAnswerBody(body, 'text/event-stream', r).body;
        const text = dec.decode(out);
        expect(text, `${n}-char pieces`).not.toContain('PLANTED');
        expect(JSON.parse(joined(out, c.pick)), `${n}-char pieces`).toEqual({ host: 'db.internal', password: r.mask(PW), api_key: r.mask(KEY) });
        // Recorded again, nothing changes (a mask is not masked again).
        expect(redactAnswerBody(out, 'text/event-stream', r).body).toBe(out);
      }
    });

    it(`is reported by tapedeck scan (${c.name})`, () => {
      const found = secretsInValue({ response: { body: c.body(6) } }).filter((f) => f.kind === 'secret member');
      expect(found.map((f) => f.excerpt)).toEqual([`"PLAN…" (${PW.length} chars)`, `"PLAN…" (${KEY.length} chars)`]);
      const clean = redactAnswerBody(c.body(6), 'text/event-stream', r).body;
      expect(secretsInValue({ response: { body: clean } })).toEqual([]);
    });
  }

  it('leaves members of other names and values that are no JSON member alone', () => {
    const plain = openai(5, JSON.stringify({ host: 'db.internal', passage: PW, api_kex: KEY, note: 'password: not a member' }));
    expect(redactAnswerBody(plain, 'text/event-stream', r).body).toBe(plain);
    expect(secretsInValue({ response: { body: plain } })).toEqual([]);
  });
});
