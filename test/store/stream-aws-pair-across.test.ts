// An AWS access key id in a streamed answer's text and its secret access key in another event's
// member (a tool call's arguments after the text) were stored with the id masked and the secret
// as sent: each text stream of the answer was read alone, and no event held the two. The secret
// is masked now, keyed as the id's secret is elsewhere (two secrets stay two recordings).
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { redactAnswerBody } from '../../src/store/stream-redact.ts';
import { awsKeys } from './aws-keys.ts';

const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
const { newSecret, newId } = awsKeys(9311, { slash: true });
const ID = newId();
const SECRET = newSecret();
const OTHER = newSecret();
const enc = new TextEncoder();
const dec = new TextDecoder();
const ev = (d: unknown) => `event: content_block_delta\ndata: ${JSON.stringify(d)}\n\n`;

/** An Anthropic stream: the id in the text, the secret in a tool call's input after it, whole or cut in two. */
const stream = (secret: string, cut: boolean) =>
  ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `I will configure the client with access key id ${ID}` } }) +
  (cut
    ? ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: `{"secret": "${secret.slice(0, 17)}` } }) + ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: `${secret.slice(17)}"}` } })
    : ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: `{"s": "${secret}"}` } }));

describe('an AWS secret in another event of a streamed answer than its id', () => {
  it('is masked, keyed, whole or cut across events', () => {
    for (const cut of [false, true]) {
      const out = dec.decode(redactAnswerBody(enc.encode(stream(SECRET, cut)), 'text/event-stream', r).body);
      expect(out).not.toContain(ID);
      for (let i = 0; i + 10 <= SECRET.length; i++) expect(out, out).not.toContain(SECRET.slice(i, i + 10));
      const other = dec.decode(redactAnswerBody(enc.encode(stream(OTHER, cut)), 'text/event-stream', r).body);
      expect(other).not.toBe(out);
    }
    expect(dec.decode(redactAnswerBody(enc.encode(stream(SECRET, false)), 'text/event-stream', r).body)).toContain(r.mask(SECRET));
  });

  it('leaves a 40-character string of a stream without an id as it is', () => {
    const body = ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'no key here' } }) + ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: `{"s": "${SECRET}"}` } });
    expect(dec.decode(redactAnswerBody(enc.encode(body), 'text/event-stream', r).body)).toBe(body);
  });
});

describe('tapedeck scan of a streamed answer recorded before', () => {
  it('reports the secret in another event than its id', async () => {
    const { secretsInValue } = await import('../../src/store/secret-scan.ts');
    const rec = { v: 1, kind: 'http', request: { method: 'POST', url: '/v1/messages', headers: {}, body: { q: 'hi' } }, response: { status: 200, headers: { 'content-type': 'text/event-stream' }, body: stream(SECRET, false) } };
    expect(secretsInValue(rec).map((f) => f.excerpt)).toContain(`"${SECRET.slice(0, 4)}…" (40 chars)`);
  });
});
