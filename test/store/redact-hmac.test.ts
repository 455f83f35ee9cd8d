// The redactor's HMAC-SHA-256 against node:crypto's, an independent implementation: keys
// shorter than, as long as and longer than the 64-byte block, messages of every length around it.
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hmacSha256 } from '../../src/store/redact.ts';

describe('hmacSha256', () => {
  it('equals node:crypto createHmac for keys and messages around the block size', () => {
    for (const keyLength of [0, 1, 16, 32, 63, 64, 65, 100, 200]) {
      for (const messageLength of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000]) {
        const key = randomBytes(keyLength);
        const message = randomBytes(messageLength);
        const want = createHmac('sha256', key).update(message).digest('hex');
        expect(Buffer.from(hmacSha256(key, message)).toString('hex'), `${keyLength}/${messageLength}`).toBe(want);
      }
    }
  });
});
