// Well-known credential formats were stored in clear and `tapedeck scan` called the tape clean:
// a PEM private key block, Google OAuth `ya29.` tokens, fine-grained GitHub `github_pat_` tokens,
// Stripe `sk_live_`/`rk_live_`/`sk_test_` keys, GitLab `glpat-`, npm `npm_` tokens, and the
// secret part of Slack and Discord webhook URLs. Each is masked (keyed: two stay two) in a prompt,
// in an answer's raw bytes, and found by the scan; prose near them is left alone.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const salt = '00112233445566778899aabbccddeeff';
const r = redactor({ salt });

const PEM_BODY = 'MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7Vq1w2e3r4t5y6u7i8o9p0';
const PEM = `-----BEGIN PRIVATE KEY-----\n${PEM_BODY}\nQ1w2E3r4T5y6U7i8O9p0aSdFgHjKl\n-----END PRIVATE KEY-----`;
const OPENSSH = `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDxUpPemBodyZ1x\n-----END OPENSSH PRIVATE KEY-----\n`;

const TOKENS: Record<string, string> = {
  ya29: 'ya29.a0bfJCoUYbDRrkw9ARagBrDm7Q1w2E3r4T5y6U7i8O9p0',
  ghpat: 'github_pat_11gWxdzmF2dymW3jRQ0a1b2c3_d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6',
  stripeLive: 'sk_live_51HqZ8kLmN0pQrStUvWxYz1234567890',
  stripeRestricted: 'rk_live_51HqZ8kLmN0pQrStUvWxYz1234567890',
  stripeTest: 'sk_test_4eC39HqLyjWDarjtT1zdp7dc12345',
  glpat: 'glpat-xR4nD0mT0k3nV4lu3Q1w',
  npm: 'npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
  slack: 'https://hooks.slack.com/services/T01ABCDEF/B02GHIJKL/SlackHookSecretQ1w2E3r4T5y6',
  discord: 'https://discord.com/api/webhooks/112233445566778899/DiscordHookSecretQ1w2E3r4T5y6U7i8O9p0aSdFgHjKlZxCvBnMq1w2e3r4t5y6u7i8',
};
const SECRET_PART: Record<string, string> = { slack: 'SlackHookSecretQ1w2E3r4T5y6', discord: 'DiscordHookSecretQ1w2E3r4T5y6U7i8O9p0' };

describe('well-known credential formats', () => {
  for (const [name, token] of Object.entries(TOKENS)) {
    it(`${name}: masked in a prompt, keyed, and found by scan`, () => {
      const prompt = `here is my token ${token} please keep it`;
      const out = r.text(prompt);
      expect(out).not.toContain(SECRET_PART[name] ?? token);
      expect(out).toMatch(/\[REDACTED:[0-9a-f]{16}\]/);
      expect(out.startsWith('here is my token ')).toBe(true);
      expect(out.endsWith(' please keep it')).toBe(true);
      // Keyed: another token of the format is another mask.
      const other = r.text(`here is my token ${token.slice(0, -4)}ZZZZ please keep it`);
      expect(other).not.toBe(out);
      expect(secretsInValue({ messages: [{ role: 'user', content: prompt }] }).length).toBeGreaterThan(0);
      // An answer's raw bytes (a streamed or JSON body) too.
      const body = new TextEncoder().encode(`data: {"delta":"${token}"}\n\n`);
      expect(new TextDecoder().decode(r.bytes(body, 'text/event-stream'))).not.toContain(SECRET_PART[name] ?? token);
    });
  }

  it('a PEM private key block: its body masked, the markers kept, in a prompt and in JSON text', () => {
    const out = r.text(`here is my key:\n${PEM}\nthanks`);
    expect(out).not.toContain(PEM_BODY);
    expect(out).not.toContain('Q1w2E3r4T5y6U7i8O9p0aSdFgHjKl');
    expect(out).toContain('-----BEGIN PRIVATE KEY-----');
    expect(out).toContain('-----END PRIVATE KEY-----');
    expect(out).toMatch(/\[REDACTED:[0-9a-f]{16}\]/);
    const ssh = r.text(OPENSSH);
    expect(ssh).not.toContain('UpPemBodyZ1x');
    expect(ssh).not.toContain('b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ');
    // An answer's JSON text (the newlines escaped), judged by bytes.
    const json = new TextEncoder().encode(JSON.stringify({ choices: [{ message: { content: `sure:\n${PEM}` } }] }));
    expect(new TextDecoder().decode(r.bytes(json, 'application/json'))).not.toContain(PEM_BODY);
    // A request body is redacted before it is keyed only when the cheap test says it may hold one.
    expect(r.mayHaveSecrets(JSON.stringify({ input: PEM }))).toBe(true);
    expect(r.value({ input: PEM }).input).not.toContain(PEM_BODY);
    expect(secretsInValue({ input: `key:\n${PEM}` }).length).toBeGreaterThan(0);
    // Masking a masked block again changes nothing.
    expect(r.text(out)).toBe(out);
    expect(secretsInValue({ input: out })).toEqual([]);
  });

  it('prose that names the formats is left alone', () => {
    for (const s of [
      'Stripe keys start with sk_live_ and GitLab tokens with glpat-, npm tokens with npm_.',
      'A PEM file begins with -----BEGIN PRIVATE KEY----- and ends with -----END PRIVATE KEY-----.',
      'see https://hooks.slack.com/services/ for the webhook docs',
      'the npm_config_cache_directory_location variable',
    ]) expect(r.text(s)).toBe(s);
  });
});

describe('a new-format token streamed a few characters an event', () => {
  it('is masked on the tape, and the stream replays', async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { createFetch } = await import('../../src/proxy/fetch.ts');
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-new-formats-'));
    const token = TOKENS.ghpat!;
    const text = `your token is ${token} ok`;
    const upstream = (async () => {
      const enc = new TextEncoder();
      const events = text.match(/.{1,3}/gs)!.map((p) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] })}\n\n`);
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          for (const e of events) c.enqueue(enc.encode(e));
          c.enqueue(enc.encode('data: [DONE]\n\n'));
          c.close();
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    }) as typeof fetch;
    try {
      const tape = join(dir, 's.tape');
      const rec = createFetch({ tape, mode: 'record', fetch: upstream });
      await (await rec('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }) })).text();
      await rec.close();
      const bytes = readFileSync(tape).toString('latin1');
      expect(bytes).not.toContain(token.slice(12, 24));
      const play = createFetch({ tape, mode: 'replay' });
      const again = await (await play('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }) })).text();
      expect(again).toContain('REDACTED');
      await play.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
