// Cloudflare AI Gateway's universal endpoint takes a JSON array of provider calls, each with the
// headers to send that provider (`headers: { authorization: 'Bearer sk-…' }`). Those are the
// provider's credentials, in the body: stored with a keyed mask, as any secret-named member is,
// they decided the key, so a tape recorded with one developer's key missed in CI with its
// placeholder key, and with a teammate's. The `headers` map of a provider call described in a
// JSON body is judged as headers are now: its credential headers are `[REDACTED]`, whoever's key
// was sent; other members, and a `headers` map of anything else, stay keyed.
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { listenLoopback } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-universal-'));
let gateway: Awaited<ReturnType<typeof listenLoopback>>;
let n = 0;
beforeAll(async () => {
  gateway = await listenLoopback(
    createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        n++;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: `chatcmpl-${n}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `answer ${n}` }, finish_reason: 'stop' }] }));
      });
    }),
  );
});
afterAll(async () => {
  await gateway.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A universal-endpoint call: OpenAI first, Anthropic as the fallback, each with its key. */
const universal = (openaiKey: string, anthropicKey: string, extra: Record<string, unknown> = {}) => [
  { provider: 'openai', endpoint: 'chat/completions', headers: { authorization: `Bearer ${openaiKey}`, 'content-type': 'application/json' }, query: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }, ...extra },
  { provider: 'anthropic', endpoint: 'v1/messages', headers: { 'x-api-key': anthropicKey, 'anthropic-version': '2023-06-01' }, query: { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] } },
];
const post = async (f: typeof fetch, body: unknown) => {
  const res = await f(`${gateway.url}/v1/acct/gw`, { method: 'POST', headers: { 'content-type': 'application/json', 'cf-aig-authorization': 'Bearer cfut_gatewaytoken0123456789' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
};

describe("provider credentials in a gateway's JSON body", () => {
  it('replay with another key answers the recording; neither key reaches the tape', async () => {
    const tape = join(dir, 'universal.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    let recorded;
    try {
      recorded = await post(rec, universal('sk-proj-DeveloperOneKey0123456789abcdef', 'sk-ant-api03-DeveloperOneAnthropicKey0123'));
    } finally {
      await rec.close();
    }
    expect(recorded.status).toBe(200);
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      expect(await post(play, universal('sk-replay', 'sk-ant-replay'))).toEqual(recorded);
    } finally {
      await play.close();
    }
    const bytes = readFileSync(tape).toString('latin1');
    for (const s of ['DeveloperOneKey', 'DeveloperOneAnthropicKey', 'gatewaytoken0123']) expect(bytes).not.toContain(s);
  });

  it('other secret members still decide the key: two values stay two requests', async () => {
    const tape = join(dir, 'secrets.tape');
    const rec = createFetch({ tape, mode: 'record', summary: false });
    try {
      await post(rec, universal('sk-a', 'sk-b', { metadata: { password: 'first-password-1' } }));
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      expect((await post(play, universal('sk-a', 'sk-b', { metadata: { password: 'second-password-2' } }))).status).toBe(400);
      // `authorization` outside a headers map is a secret-named member like any other.
      expect((await post(play, [{ ...universal('sk-a', 'sk-b')[0], authorization: 'Bearer other' }])).status).toBe(400);
    } finally {
      await play.close();
    }
  });

  it("an MCP tool's headers (no provider call) keep their keyed mask: another server token is another request", async () => {
    const tape = join(dir, 'mcp.tape');
    const body = (token: string) => ({ model: 'gpt-4.1', input: 'List my repos', tools: [{ type: 'mcp', server_label: 'gh', server_url: 'https://mcp.example/sse', headers: { Authorization: `Bearer ${token}` } }] });
    const rec = createFetch({ tape, mode: 'record', summary: false });
    try {
      await post(rec, body('ghp_userOneToken0123456789abcdefABCDEF01'));
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay', summary: false });
    try {
      expect((await post(play, body('ghp_userOneToken0123456789abcdefABCDEF01'))).status).toBe(200);
      expect((await post(play, body('ghp_userTwoToken0123456789abcdefABCDEF02'))).status).toBe(400);
    } finally {
      await play.close();
    }
  });
});
