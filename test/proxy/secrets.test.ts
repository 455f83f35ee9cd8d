// The secret search: every credential spelling of every provider the proxy serves, sent in every
// place real APIs and clients put them (headers, query, JSON at any depth, forms, multipart,
// text, gzip bodies, echoed in JSON and SSE answers), recorded through the proxy and createFetch;
// then the tape's bytes are searched for each secret and for fragments of it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { REDACTED, redactor } from '../../src/store/redact.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { OAUTH_TOKENS, startUpstream } from './fake-upstream.ts';
import { serve } from './serve-cli.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-secrets-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Distinct, realistic-looking values; none repeats another's characters at length 12+.
const S = {
  openai: 'sk-proj-' + 'Qa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9Pz0XcVbNmLkJh', // OpenAI
  anthropic: 'sk-ant-api03-' + 'Mn8Bv7Cx6Zl5Kj4Hg3Fd2Sa1Qp0OiUyTrEwQaZs', // Anthropic
  azure: '3f9c2a7e5b1d4c8f9a0b6e2d7c1f3a5b', // Azure OpenAI api-key (header and ?api-key=)
  azureQuery: '8e1d5c9b3a7f2e6d0c4b8a1f5e9d3c7b',
  apim: 'c0ffee5a1b2c3d4e5f60718293a4b5c6', // Azure API Management subscription key
  apimQuery: 'feed1234abcd5678ef90a1b2c3d4e5f6',
  google: 'AIza' + 'SyD9x8W7v6U5t4S3r2Q1p0O9n8M7l6K5j4I', // Gemini x-goog-api-key
  googleQuery: 'AIza' + 'SyQ1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J',
  awsKeyId: 'AKIA' + 'Q7W3E5R7T9Y1U3I5',
  awsSignature: '5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
  awsSession: 'IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD6sessiontokenvalue',
  awsQuerySignature: 'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
  awsQueryKeyId: 'ASIA' + 'Z9X8C7V6B5N4M3L2',
  // SigV4's date and payload hash: no secrets, but signature inputs that have no business on disk.
  awsDate: '20260317T101112Z',
  awsPayloadHash: '9f2c81d0be34a7a6c51e0f4d2b8a97e36c1d5f0a8b2e4c6d8f0a1b3c5d7e9f01',
  bedrockApiKey: 'ABSKQmVkcm9ja0FQSUtleS1hYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0',
  mistral: 'Mi5tRaLkEy0123456789abcdefGHIJKLmn',
  cohere: 'co4HereKeyZYXWVUTSRQPONMLKJIHGFEDCBA9876',
  groq: 'gsk_' + 'Gr0qKeyAbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH',
  accessToken: 'ya29.a0AfH6SMBaccessTokenValue_987654321',
  apiKeyCamel: 'camelCaseApiKeyValue-5e8f2a1c9d',
  clientSecretCamel: 'GOCSPX-clientSecretCamelValue42',
  formSecret: 'form-client-secret-7f3e9a1b5c',
  formPassword: 'hunter2-form-password-abc',
  deepPassword: 'deep-password-300-levels-7d1e',
  multipartKey: 'multipart-field-api-key-4b7c9e',
  multipartFileKey: 'sk-' + 'FileKeyInsideUpload0123456789abcdef',
  textBearer: 'TextBodyBearerTokenValue1234567890',
  gzipSecret: 'gzip-body-apiKey-value-3c5e7a9f',
  promptKey: 'gsk_' + 'PromptPastedKeyZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210',
  refreshToken: '1//0gRefreshTokenValue-ABCDEFGHIJKLMNOP',
  password: 'top-level-password-value-5555',
  // Answered by the upstream in two chunks (an OAuth token endpoint).
  oauthAccess: OAUTH_TOKENS.access_token,
  oauthRefresh: OAUTH_TOKENS.refresh_token,
  // Given to ReplayCache put as the raw answer bytes.
  rawAccess: 'raw-body-access-token-9Kd2Lq7Wm4',
  rawBearer: 'RawTextBearerValue0123456789abcdef',
};

function deep(levels: number, leaf: Record<string, unknown>): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < levels; i++) v = { level: v };
  return v;
}

/** Every secret, and 12-character fragments of the longer ones (a partial mask is still a leak). */
function needles(): string[] {
  const out = new Set<string>();
  for (const v of Object.values(S)) {
    out.add(v);
    for (let i = 0; i + 12 <= v.length; i += 6) {
      const frag = v.slice(i, i + 12);
      // Fragments that are only a provider prefix are not secret (and may legitimately be
      // left in a masked record, like "sk-ant-api03").
      if (!/^(?:sk-ant-api03|sk-proj-|AIzaSy|GOCSPX-)/.test(frag)) out.add(frag);
    }
  }
  return [...out];
}

async function recordEverything(base: string, send: typeof fetch): Promise<void> {
  const json = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', ...extra });
  const chat = (content: string, more: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content }], ...more });
  const ok = async (r: Promise<Response>, what: string) => {
    const res = await r;
    await res.arrayBuffer();
    expect(res.status, what).toBeLessThan(400);
  };
  // Credential headers, one provider at a time (each its own request: one Authorization each).
  const headerSets: Record<string, string>[] = [
    { authorization: `Bearer ${S.openai}`, 'openai-organization': 'org-Zq9secretorg' },
    { 'x-api-key': S.anthropic, 'anthropic-version': '2023-06-01' },
    { 'api-key': S.azure },
    { 'Ocp-Apim-Subscription-Key': S.apim },
    { 'x-goog-api-key': S.google },
    {
      authorization: `AWS4-HMAC-SHA256 Credential=${S.awsKeyId}/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=${S.awsSignature}`,
      'x-amz-security-token': S.awsSession,
      'x-amz-date': S.awsDate,
      'x-amz-content-sha256': S.awsPayloadHash,
    },
    { authorization: `Bearer ${S.bedrockApiKey}` },
    { authorization: `Bearer ${S.mistral}` },
    { authorization: `bearer ${S.cohere}` },
    { authorization: `Bearer ${S.groq}` },
  ];
  for (const [i, h] of headerSets.entries()) await ok(send(`${base}/v1/chat/completions`, { method: 'POST', headers: json(h), body: chat(`header set ${i}`) }), `headers ${i}`);
  // Query parameters: Azure OpenAI, Azure API Management, Google, a SigV4 presigned URL.
  await ok(send(`${base}/v1/chat/completions?api-version=2024-10-21&api-key=${S.azureQuery}`, { method: 'POST', headers: json(), body: chat('azure query') }), 'azure query');
  await ok(send(`${base}/v1/chat/completions?subscription-key=${S.apimQuery}`, { method: 'POST', headers: json(), body: chat('apim query') }), 'apim query');
  await ok(send(`${base}/v1/models?key=${S.googleQuery}`), 'google query');
  await ok(
    send(`${base}/v1/models?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=${S.awsQueryKeyId}%2F20260101%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=${S.awsQuerySignature}`),
    'sigv4 query',
  );
  // JSON fields: camelCase, snake_case, and a password 300 levels deep; echoed back by /v1/echo.
  const fields = { accessToken: S.accessToken, apiKey: S.apiKeyCamel, clientSecret: S.clientSecretCamel, refresh_token: S.refreshToken, password: S.password, nested: deep(300, { password: S.deepPassword }) };
  await ok(send(`${base}/v1/echo`, { method: 'POST', headers: json(), body: JSON.stringify(fields) }), 'json echo');
  await ok(send(`${base}/v1/chat/completions`, { method: 'POST', headers: json(), body: chat('fields in an llm request', { metadata: { apiKey: S.apiKeyCamel }, user: 'u1' }) }), 'llm fields');
  // A key pasted into a prompt, answered as JSON and as a stream that echoes it.
  await ok(send(`${base}/v1/chat/completions`, { method: 'POST', headers: json(), body: chat(`my key is ${S.promptKey} ok`) }), 'prompt json');
  await ok(send(`${base}/v1/chat/completions`, { method: 'POST', headers: json(), body: chat(`stream my key ${S.promptKey} back`, { stream: true }) }), 'prompt sse');
  // A form body (an OAuth client-credentials call).
  await ok(
    send(`${base}/v1/files`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=client_credentials&client_id=app&client_secret=${S.formSecret}&password=${S.formPassword}` }),
    'form',
  );
  // Multipart: a key in a field, another inside the uploaded file.
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('api_key', S.multipartKey);
  form.append('file', new Blob([`config\nOPENAI_API_KEY=${S.multipartFileKey}\n`], { type: 'text/plain' }), 'env.txt');
  await ok(send(`${base}/v1/files`, { method: 'POST', body: form }), 'multipart');
  // Plain text and a gzip-compressed JSON body.
  await ok(send(`${base}/v1/files`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: `curl -H "Authorization: Bearer ${S.textBearer}"` }), 'text');
  await ok(
    send(`${base}/v1/chat/completions`, { method: 'POST', headers: json({ 'content-encoding': 'gzip' }), body: gzipSync(chat('gzip body', { apiKey: S.gzipSecret })) }),
    'gzip',
  );
  // An OAuth token answer (secret members) that arrives in two chunks.
  await ok(send(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=app' }), 'oauth');
}

/** The needles found in the tape's bytes or in its `tapedeck export` JSON. */
async function searchTape(tape: string): Promise<string[]> {
  const bytes = readFileSync(tape);
  const exported = await exportTapeJSON(tape);
  return needles().filter((n) => bytes.includes(Buffer.from(n)) || exported.includes(n));
}

describe('the secret search', () => {
  it('through the proxy: no secret and no fragment of one reaches the tape, and the recordings replay', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'proxy.tape');
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    try {
      await recordEverything(proxy.url, fetch);
    } finally {
      await proxy.close();
      await up.close();
    }
    // The upstream got the real credentials.
    expect(up.calls.some((c) => c.headers['ocp-apim-subscription-key'] === S.apim)).toBe(true);
    expect(await searchTape(tape)).toEqual([]);
    expect(readFileSync(tape).includes(Buffer.from(REDACTED))).toBe(true);

    // Redacted requests still find their recordings.
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      await recordEverything(play.url, fetch);
      expect(play.handler.stats().misses).toBe(0);
    } finally {
      await play.close();
    }
  });

  it('a secret member spelled with doubled separators, an escape or a Kelvin sign: not on the tape, and the request replays', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'spelled.tape');
    const values = ['Zq8Wx7Ec6Rv5Tb4Yn3Um2', 'Lk9Jh8Gf7Ds6Ap5Oi4Uy3', 'Mn1Bv2Cx3Zl4Kj5Hg6Fd7'];
    // JSON texts as a client could send them: the names fold to api_key / client_secret /
    // access_token, at the top level (part of the request key).
    const bodies = [
      `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"api__key":"${values[0]}"}`,
      `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"client\\u005fsecret":"${values[1]}"}`,
      `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"access_to\u212aen":"${values[2]}"}`,
    ];
    const send = async (base: string) => {
      const answers: string[] = [];
      for (const body of bodies) {
        const res = await fetch(`${base}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        answers.push(await res.text());
        expect(res.status).toBe(200);
      }
      return answers;
    };
    const proxy = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0 });
    let recorded: string[];
    try {
      recorded = await send(proxy.url);
    } finally {
      await proxy.close();
      await up.close();
    }
    const bytes = readFileSync(tape);
    for (const v of values) expect(bytes.includes(Buffer.from(v)), v).toBe(false);
    const play = await startProxy({ tape, mode: 'replay', port: 0 });
    try {
      expect(await send(play.url)).toEqual(recorded);
      expect(play.handler.stats().misses).toBe(0);
    } finally {
      await play.close();
    }
  });

  it('through createFetch: the same', async () => {
    const up = await startUpstream();
    const tape = join(dir, 'fetch.tape');
    const f = createFetch({ tape, mode: 'record', fetch: globalThis.fetch });
    try {
      await recordEverything(up.url, f);
    } finally {
      await f.close();
      await up.close();
    }
    expect(await searchTape(tape)).toEqual([]);
  });

  it('ReplayCache put: the raw answer bytes are redacted like the value', async () => {
    const tape = join(dir, 'raw.tape');
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    const req = (n: number) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `raw ${n}` }] });
    const json = JSON.stringify({ access_token: S.rawAccess, token_type: 'Bearer', expires_in: 3600 });
    await cache.put(req(1), { ok: true }, { raw: { body: new TextEncoder().encode(json), contentType: 'application/json' } });
    await cache.put(req(2), { ok: true }, { raw: { body: json } }); // no content type: sniffed
    await cache.put(req(3), { ok: true }, { raw: { body: `curl -H "Authorization: Bearer ${S.rawBearer}"`, contentType: 'text/plain' } });
    await cache.close();
    expect(await searchTape(tape)).toEqual([]);
    const again = await ReplayCache.open(tape, { mode: 'replay' });
    const rec = await again.getRecord(req(1));
    expect(JSON.parse(new TextDecoder().decode(rec!.raw!.body)).token_type).toBe('Bearer');
    await again.close();
  });

  it('--upstream with user:password: the password is never printed nor sent to clients, and goes upstream as Basic auth', async () => {
    const up = await startUpstream();
    const password = 'Upstr3am-pa55w0rd-s3cret';
    const withCreds = up.url.replace('http://', `http://gateway-user:${password}@`);
    const tape = join(dir, 'upstream-creds.tape');
    const proxy = await startProxy({ upstream: withCreds, tape, mode: 'record', port: 0 });
    let body = '';
    try {
      const res = await fetch(`${proxy.url}/v1/models`);
      body = await res.text();
      expect(res.status, body).toBe(200);
      // An unreachable upstream with credentials: the 502 names it without them.
      const gone = await startProxy({ upstream: `http://gateway-user:${password}@127.0.0.1:1`, tape: join(dir, 'gone.tape'), mode: 'record', port: 0 });
      try {
        const r502 = await fetch(`${gone.url}/v1/models`);
        body += await r502.text();
        expect(r502.status).toBe(502);
      } finally {
        await gone.close();
      }
    } finally {
      await proxy.close();
      await up.close();
    }
    expect(body).not.toContain(password);
    expect(up.calls[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`gateway-user:${password}`).toString('base64')}`);
    expect(up.calls[0]!.url).toBe('/v1/models');
    expect(readFileSync(tape).includes(Buffer.from(password))).toBe(false);
    // The CLI's startup line names the upstream without the password.
    const cli = serve(['--upstream', withCreds, '--tape', join(dir, 'cli-creds.tape'), '--mode', 'record', '--port', '0']);
    await cli.url;
    cli.child.kill('SIGTERM');
    await cli.exited;
    expect(cli.stderr()).toContain('upstream http://127.0.0.1');
    expect(cli.stderr()).not.toContain(password);
  });

  it('--upstream with user:password on an interface other than loopback is refused: the proxy would lend the credentials to whoever reaches it', async () => {
    const password = 'Upstr3am-pa55w0rd-s3cret';
    for (const host of ['0.0.0.0', '::']) {
      const err = await startProxy({ upstream: `http://gateway-user:${password}@127.0.0.1:1`, tape: join(dir, 'lend.tape'), mode: 'record', port: 0, host }).then(
        (p) => p.close().then(() => undefined),
        (e: unknown) => e,
      );
      expect(err, host).toBeInstanceOf(TapedeckError);
      expect((err as TapedeckError).code).toBe('E_ARG');
      expect((err as TapedeckError).message).toContain(host);
      expect((err as TapedeckError).message).not.toContain(password);
      expect((err as TapedeckError).hint).toMatch(/--host 127\.0\.0\.1/);
    }
    expect(existsSync(join(dir, 'lend.tape'))).toBe(false);
    // Loopback in any spelling lends to this machine's processes only, as documented.
    for (const host of ['localhost', '127.0.0.2', '::1']) {
      const p = await startProxy({ upstream: `http://gateway-user:${password}@127.0.0.1:1`, tape: join(dir, 'loop.tape'), mode: 'record', port: 0, host });
      await p.close();
    }
    const cli = spawnSync(process.execPath, [CLI, 'serve', '--upstream', `http://gateway-user:${password}@127.0.0.1:1`, '--tape', join(dir, 'lend-cli.tape'), '--mode', 'record', '--port', '0', '--host', '0.0.0.0'], { encoding: 'utf8', timeout: 20_000 });
    expect(cli.status).toBe(2);
    expect(cli.stderr).toContain('E_ARG');
    expect(cli.stderr).not.toContain(password);
  });

  it('the redactor knows every provider spelling, at any depth', () => {
    const r = redactor();
    const headers = {
      Authorization: 'x',
      'Ocp-Apim-Subscription-Key': 'x',
      'api-key': 'x',
      'x-api-key': 'x',
      'x-goog-api-key': 'x',
      'X-Amz-Security-Token': 'x',
      'cf-aig-authorization': 'x',
      'x-custom-api-key': 'x',
      'x-ratelimit-remaining-tokens': '100',
      'access-control-allow-credentials': 'true',
      'anthropic-version': '2023-06-01',
    };
    expect(r.headers(headers)).toEqual({
      ...Object.fromEntries(Object.keys(headers).map((k) => [k, REDACTED])),
      'x-ratelimit-remaining-tokens': '100',
      'access-control-allow-credentials': 'true',
      'anthropic-version': '2023-06-01',
    });
    for (const name of ['apiKey', 'api_key', 'API-KEY', 'accessToken', 'access_token', 'clientSecret', 'client_secret', 'refreshToken', 'sessionToken', 'password', 'dbPassword', 'openaiApiKey', 'privateKey', 'secret', 'aws_secret_access_key', 'subscriptionKey'])
      expect(r.isSecretField(name), name).toBe(true);
    // Not secrets: they decide answers (logprob tokens, page cursors, token limits).
    for (const name of ['token', 'tokens', 'max_tokens', 'next_page_token', 'page_token', 'key', 'keys', 'secret_santa_list', 'role'])
      expect(r.isSecretField(name), name).toBe(false);
    for (const q of ['key', 'api-key', 'subscription-key', 'X-Amz-Signature', 'X-Amz-Credential', 'X-Amz-Security-Token', 'sig'])
      expect(r.url(`/p?${q}=v1&model=m`), q).toBe(`/p?${q}=${encodeURIComponent(REDACTED)}&model=m`);
    // Depth: far past any recursion limit, and past the old 256.
    for (const levels of [300, 5000]) {
      let out = r.value(deep(levels, { password: 'p', keep: 'k' })) as { level?: unknown };
      for (let i = 0; i < levels; i++) out = out.level as { level?: unknown };
      expect(out, String(levels)).toEqual({ password: REDACTED, keep: 'k' });
    }
    expect(r.text(`AWS4-HMAC-SHA256 Credential=${S.awsKeyId}/20260101/us-east-1/bedrock/aws4_request, Signature=${S.awsSignature}`)).not.toMatch(/AKIA|5d672d79/);
  });
});

describe('a masked answer in the JSON export', () => {
  it('reads as its text, the key masked, not as base64 of a Buffer', async () => {
    const { createServer } = await import('node:http');
    const key = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789';
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${key}.` } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const tape = join(dir, 'masked-answer.tape');
    const f = createFetch({ tape, mode: 'record', recordErrors: true });
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1/chat/completions`;
      await (await f(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }) })).text();
    } finally {
      await f.close();
      server.close();
    }
    const doc = JSON.parse(await exportTapeJSON(tape)) as { records: { response: { body: { $type: string; json?: { error: { message: string } } } } }[] };
    const body = doc.records[0]!.response.body;
    expect(body.$type).toBe('bytes');
    expect(body.json?.error.message).toMatch(/^Incorrect API key provided: \[REDACTED(:[0-9a-f]{16})?\]\.$/);
    expect(readFileSync(tape).toString('latin1')).not.toContain(key);
  });
});
