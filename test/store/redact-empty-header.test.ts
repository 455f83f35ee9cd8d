// The official Mistral SDK sends `cookie: ""`. An empty value is no secret: stored as it is, so
// the tape holds no mask that `tapedeck rerecord` takes for a secret it cannot send again.
import { describe, expect, it } from 'vitest';
import { heldMasks } from '../../src/drift/rerecord.ts';
import { redactor } from '../../src/store/redact.ts';

describe('an empty secret header', () => {
  it('is stored empty; a non-empty one is still masked', () => {
    const h = redactor({ salt: '0123456789abcdef0123456789abcdef' }).headers({ cookie: '', 'x-custom-secret': '', 'set-cookie': ['', 'sid=abc'] });
    expect(h.cookie).toBe('');
    expect(h['x-custom-secret']).toBe('');
    expect(h['set-cookie']![0]).toBe('');
    expect(h['set-cookie']![1]).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
  });

  it('leaves nothing that rerecord holds back', () => {
    const headers = redactor({ salt: '0123456789abcdef0123456789abcdef' }).headers({ cookie: '', 'content-type': 'application/json' });
    const record = { v: 1, kind: 'http', route: 'POST /v1/chat/completions', request: { method: 'POST', url: '/v1/chat/completions', headers, body: { model: 'mistral-small-latest' } }, response: { status: 200, headers: {}, body: new Uint8Array() } };
    expect(heldMasks(record as never, () => undefined)).toEqual([]);
  });
});
