// A secret parameter in a URL fragment inside a prompt or answer
// (`https://app/cb#access_token=…&token_type=bearer`, the OAuth implicit flow's redirect) or after
// a `;` separator (`?a=1;access_token=…`) was stored in clear and missed by scan. Both are masked
// by name as `?access_token=` is, keyed; other parameters and plain fragments are kept.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });

describe('secret parameters of a URL fragment and after ;', () => {
  it('are masked in text, keyed, other parts kept', () => {
    const out = r.text('open https://app.example.com/cb#access_token=QsPromptFrag5Q1w2E3r4&token_type=bearer&expires_in=3600 now');
    expect(out).not.toContain('QsPromptFrag5Q1w2E3r4');
    expect(out).toMatch(/^open https:\/\/app\.example\.com\/cb#access_token=%5BREDACTED%3A[0-9a-f]{16}%5D&token_type=bearer&expires_in=3600 now$/);
    expect(r.text('open https://app.example.com/cb#access_token=OtherFrag5Q1w2E3r4x&token_type=bearer&expires_in=3600 now')).not.toBe(out);
    const semi = r.text('see https://api.example.com/x?a=1;access_token=QsSemi7Q1w2E3r4 ok');
    expect(semi).not.toContain('QsSemi7Q1w2E3r4');
    expect(semi).toContain('?a=1;access_token=');
    expect(r.text(out)).toBe(out);
  });

  it('in a JSON body: redacted before keying; found by scan', () => {
    const body = { input: 'https://app.example.com/cb#access_token=QsPromptFrag5Q1w2E3r4&token_type=bearer' };
    expect(r.mayHaveSecrets(JSON.stringify(body))).toBe(true);
    expect(JSON.stringify(r.value(body))).not.toContain('QsPromptFrag5Q1w2E3r4');
    expect(secretsInValue(body).length).toBeGreaterThan(0);
  });

  it('plain fragments are kept', () => {
    for (const s of ['see https://docs.example.com/page#section-2 and https://x.example.com/#/route?tab=1', 'https://a.example.com/x#token_type=bearer'])
      expect(r.text(s)).toBe(s);
  });
});

describe('a ; inside a secret value', () => {
  it('stays in the value, which is masked whole', () => {
    const r2 = redactor({ salt: '00112233445566778899aabbccddeeff' });
    const out = r2.text('see https://api.example.com/x?token=abcdefgh12;ijklmnop34 ok');
    expect(out).not.toContain('ijklmnop34');
    expect(out).not.toContain('abcdefgh12');
  });
});
