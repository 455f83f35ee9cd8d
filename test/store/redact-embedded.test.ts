// JSON text inside a string (an MCP tool's result listing the environment, a model quoting a
// config file) is no hiding place: its members with secret names get their string values masked
// where they stand, the text around them byte for byte, through the redactor and through a
// recording on a tape; two different secrets stay two masks, and a request carrying one replays.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { redactor } from '../../src/store/redact.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-embedded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
const env = { PATH: '/usr/local/bin:/usr/bin', MY_DB_PASSWORD: 'hunter2hunter2', GITHUB_ACCESS_TOKEN: 'plain-looking-value-1234', HOME: '/root' };

describe('JSON text inside strings', () => {
  it('masks secret-named members in place, keeps the rest of the text byte for byte', () => {
    const text = JSON.stringify(env, null, 2);
    const out = r.value({ content: [{ type: 'text', text }] }) as { content: { text: string }[] };
    const got = out.content[0]!.text;
    expect(got).not.toContain('hunter2hunter2');
    expect(got).not.toContain('plain-looking-value-1234');
    // Only the two values changed: the same text with each replaced by its mask.
    const masks = [...got.matchAll(/\[REDACTED:[0-9a-f]{16}\]/g)].map((m) => m[0]);
    expect(masks).toHaveLength(2);
    expect(masks[0]).not.toBe(masks[1]);
    expect(got).toBe(text.replace('hunter2hunter2', masks[0]!).replace('plain-looking-value-1234', masks[1]!));
    expect(JSON.parse(got)).toMatchObject({ PATH: env.PATH, HOME: env.HOME });
    // Masked again: unchanged.
    expect(r.value(out)).toEqual(out);
  });

  it('leaves text without a secret-named member alone, and ordinary names that only contain a word', () => {
    for (const s of ['{"model": "gpt-4o", "token": "abc", "next_page_token": "p2-cursor-value"}', 'the "password": field is documented in the manual', 'a plain sentence long enough to be scanned']) {
      expect((r.value({ text: s }) as { text: string }).text).toBe(s);
    }
  });

  it('the raw body that holds such text is no longer taken for one redaction cannot change', () => {
    const body = JSON.stringify({ messages: [{ role: 'tool', content: JSON.stringify({ client_secret: 'cs-live-0000000000' }) }] });
    expect(body).toContain('\\"client_secret\\":');
    expect(r.mayHaveSecrets(body)).toBe(true);
    // Pretty-printed inside the string: the line break and indent are escapes in the raw body.
    const pretty = JSON.stringify({ messages: [{ role: 'tool', content: '{"client_secret":\n\t"cs-live-0000000000"}' }] });
    expect(r.value(JSON.parse(pretty))).not.toEqual(JSON.parse(pretty));
    expect(r.mayHaveSecrets(pretty)).toBe(true);
  });

  it('the raw-body test says yes for every body whose embedded members value() masks (random spellings and spacing)', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const names = ['password', 'DB_PASSWORD', 'client-secret', 'api__key_', 'x-api-key', 'Access_Token', 'region', 'path', 'token', 'keys', 'note'];
    const spaces = ['', ' ', '\n', '\t ', ' \r\n  '];
    let changed = 0;
    for (let i = 0; i < 400; i++) {
      const members = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => `"${pick(names)}"${pick(spaces.map((x) => x.replace(/\\n/g, '\n').replace(/\\t/g, '\t').replace(/\\r/g, '\r')))}:${pick([' ', ''])}${pick(['"v' + i + '-secret-value"', '42', 'true', '"" '])}`);
      const inner = `{${members.join(',')}}`;
      const body = JSON.stringify({ messages: [{ role: 'tool', content: pick([inner, `result: ${inner} (done)`]) }] });
      const parsed: unknown = JSON.parse(body);
      if (r.value(parsed) === parsed) continue;
      changed++;
      expect(r.mayHaveSecrets(body), body).toBe(true);
      expect(r.mayHaveSecrets(Buffer.from(body).toString('latin1')), body).toBe(true);
    }
    expect(changed).toBeGreaterThan(100);
  });

  it('a recording never stores such a secret, in the request or the answer, and replays', async () => {
    const tape = join(dir, 'embedded.tape');
    const answer = { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `Your config: ${JSON.stringify({ api_key: 'my-own-service-key-123456', region: 'eu' })}` }, finish_reason: 'stop' }] };
    const upstream = (async () => new Response(JSON.stringify(answer), { headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What does this env say?' }, { role: 'tool', tool_call_id: 'c', content: JSON.stringify(env) }] });
    const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body };
    const rec = createFetch({ tape, mode: 'record', fetch: upstream, summary: false });
    await (await rec('https://api.openai.com/v1/chat/completions', post)).text();
    await rec.close();
    const bytes = readFileSync(tape).toString('latin1');
    for (const secret of ['hunter2hunter2', 'plain-looking-value-1234', 'my-own-service-key-123456']) expect(bytes).not.toContain(secret);
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      const res = await play('https://api.openai.com/v1/chat/completions', post);
      expect(res.headers.get('x-tapedeck-match')).toBe('exact');
      const text = ((await res.json()) as typeof answer).choices[0]!.message.content;
      expect(text).toMatch(/^Your config: \{"api_key":"\[REDACTED:[0-9a-f]{16}\]","region":"eu"\}$/);
    } finally {
      await play.close();
    }
  });
});
