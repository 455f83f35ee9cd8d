// A key format used as a JSON member's NAME (`metadata: { "xai-…": 1 }`) reaches the tape as
// surely as one used as a value: redaction masks it, keeps two such members two, and
// `tapedeck scan` reports one it finds.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const X = 'xai-QWERTYUIOPASDFGHJKLZXCVBNM0123456789qwertyuiopasdfghjklzxcvbnm0123';
const G = 'gsk_QWERTYUIOPASDFGHJKLZXCVBNM0123456789qwertyuiopasdf';
const SALT = '0123456789abcdef0123456789abcdef';

describe('a credential as a member name', () => {
  it('is masked (keyed), the value and the members around it kept in order', () => {
    const out = redactor({ salt: SALT }).value({ model: 'm', metadata: { before: 1, [X]: 2, after: 3 } });
    expect(JSON.stringify(out)).not.toContain('xai-QWERTY');
    const names = Object.keys(out.metadata);
    expect(names[0]).toBe('before');
    expect(names[1]).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
    expect(names[2]).toBe('after');
    expect(Object.values(out.metadata)).toEqual([1, 2, 3]);
  });

  it('two different keys stay two members, with a salt and without one', () => {
    for (const r of [redactor({ salt: SALT }), redactor()]) {
      const out = r.value({ [X]: 1, [G]: 2 }) as Record<string, number>;
      expect(Object.keys(out)).toHaveLength(2);
      expect(Object.values(out)).toEqual([1, 2]);
      expect(JSON.stringify(out)).not.toMatch(/xai-QWERTY|gsk_QWERTY/);
    }
  });

  it('does not take the name of another member', () => {
    const out = redactor().value({ '[REDACTED]': 'already', [X]: 'key' }) as Record<string, string>;
    expect(out['[REDACTED]']).toBe('already');
    expect(Object.values(out)).toEqual(['already', 'key']);
  });

  it('is masked past the recursion limit too', () => {
    let deep: Record<string, unknown> = { [X]: 1 };
    for (let i = 0; i < 1100; i++) deep = { d: deep };
    expect(JSON.stringify(redactor().value(deep))).not.toContain('xai-QWERTY');
  });

  it('is masked in a raw JSON body (bytes)', () => {
    const body = new TextEncoder().encode(JSON.stringify({ metadata: { [X]: 1 } }));
    const out = new TextDecoder().decode(redactor({ salt: SALT }).bytes(body, 'application/json'));
    expect(out).not.toContain('xai-QWERTY');
    expect(JSON.parse(out)).toEqual({ metadata: { [Object.keys(JSON.parse(out).metadata)[0]!]: 1 } });
  });

  it('is reported by tapedeck scan', () => {
    const found = secretsInValue({ request: { body: { metadata: { [X]: 1 } } } });
    expect(found).toHaveLength(1);
    expect(found[0]!.kind).toBe('key format');
    expect(found[0]!.path).toContain('(name)');
    expect(found[0]!.excerpt).not.toContain('QWERTY');
    // The path names the member by its first characters, as a finding is shown.
    expect(found[0]!.path).not.toContain('QWERTY');
    expect(found[0]!.path).toBe('$.request.body.metadata["xai-…"] (name)');
  });
});
