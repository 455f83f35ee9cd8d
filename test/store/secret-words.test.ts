// Header and query names judged by their last word, and JSON Web Tokens under any name. A QA run
// of the packed tarball found `x-functions-key`, `x-openai-key`, `?auth=`, `?jwt=` and `?session=`
// on the tape in clear, with `tapedeck scan` calling the tape clean: the name lists knew the
// providers' names and a few suffixes, and no pattern knew a JWT. These hold the rule on both
// sides: the names real APIs send secrets under are masked, the names SDKs and APIs send data
// under (token counts, cursors, idempotency keys, SDK and version headers) are not.
import { describe, expect, it } from 'vitest';
import { credentialMatches, redactor } from '../../src/store/redact.ts';
import { secretByLastWord } from '../../src/store/secret-words.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';

const SALT = '00112233445566778899aabbccddeeff';
const r = redactor({ salt: SALT });

// A JWT as Firebase, Supabase or Azure AD issue them (header, payload, signature; base64url).
const JWT = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c';
const VALUE = 'Zq8Wx7Ec6Rv5Tb4Yn3Um2Lk9J';

/** Header names real APIs and gateways take secrets under. */
const SECRET_HEADERS = [
  'x-functions-key', // Azure Functions
  'x-openai-key',
  'X-Custom-Key',
  'ocp-apim-subscription-key',
  'x-goog-api-key',
  'x-api-key',
  'x-amz-security-token',
  'x-custom-auth',
  'x-jwt',
  'x-session',
  'x-signature',
  'x-hub-signature-256',
  'x-amz-server-side-encryption-customer-key',
  'x-forwarded-cookie',
  'x-db-passphrase',
];

/** Header names SDKs and APIs send data under: kept as sent. */
const PLAIN_HEADERS = [
  'x-stainless-retry-count',
  'x-stainless-timeout',
  'x-stainless-package-version',
  'anthropic-version',
  'anthropic-beta',
  'content-type',
  'content-length',
  'x-request-id',
  'idempotency-key',
  'Idempotency-Key',
  'x-idempotency-key',
  'sec-websocket-key',
  'Sec-WebSocket-Key',
  'x-cache-key',
  'surrogate-key',
  'x-tapedeck-key',
  'mcp-session-id',
  'helicone-session-id',
  'azureml-model-session',
  'access-control-allow-credentials',
  'x-ratelimit-remaining-tokens',
  'anthropic-ratelimit-tokens-remaining',
  'openai-processing-ms',
  'www-authenticate',
  'monkey',
];

/** Query names real APIs take secrets under. */
const SECRET_QUERY = ['auth', 'jwt', 'session', 'sessionid', 'PHPSESSID', 'access_token', 'api-key', 'key', 'x-functions-key', 'private_token', 'api_token', 'apiKey', 'authToken', 'X-Goog-Signature', 'X-Goog-Credential', 'client_secret', 'id_token', 'passphrase'];

/** Query names that carry data: cursors, counts, versions, switches. */
const PLAIN_QUERY = ['pageToken', 'page_token', 'nextToken', 'next_page_token', 'continuationToken', '$skipToken', 'max_tokens', 'api-version', 'alt', 'limit', 'after', 'session_id', 'sessionId', 'idempotency_key', 'public_key', 'model'];

describe('names judged by their last word', () => {
  it('masks a header whose last word is a secret word, and keeps the others', () => {
    for (const name of SECRET_HEADERS) {
      expect(r.isSecretHeader(name), name).toBe(true);
      expect(r.headers({ [name]: VALUE })[name], name).toMatch(/^\[REDACTED(?::[0-9a-f]{16})?\]$/);
    }
    for (const name of PLAIN_HEADERS) {
      expect(r.isSecretHeader(name), name).toBe(false);
      expect(r.headers({ [name]: VALUE })[name], name).toBe(VALUE);
    }
  });

  it('masks a query parameter whose last word is a secret word, keyed, and keeps the others', () => {
    for (const name of SECRET_QUERY) {
      const url = `/v1/x?${encodeURIComponent(name)}=${VALUE}&limit=2`;
      expect(r.url(url), name).not.toContain(VALUE);
      expect(r.url(url), name).toContain('&limit=2');
    }
    for (const name of PLAIN_QUERY) {
      const url = `/v1/x?${encodeURIComponent(name)}=${VALUE}`;
      expect(r.url(url), name).toBe(url);
    }
  });

  it('keeps two values of one secret query name two routes, one value one route', () => {
    const a = r.url(`/v1/x?session=${VALUE}`);
    expect(a).toMatch(/^\/v1\/x\?session=%5BREDACTED%3A[0-9a-f]{16}%5D$/);
    expect(r.url(`/v1/x?session=${VALUE}x`)).not.toBe(a);
    expect(redactor({ salt: SALT }).url(`/v1/x?session=${VALUE}`)).toBe(a);
    // Masked again, a mask stays as it is.
    expect(r.url(a)).toBe(a);
  });

  it('splits words at separators, case changes and acronyms, and past a trailing number', () => {
    expect(secretByLastWord('APIKey')).toBe(true);
    expect(secretByLastWord('JWTAuth')).toBe(true);
    expect(secretByLastWord('api_key_2')).toBe(true);
    expect(secretByLastWord('nextPageToken')).toBe(false);
    expect(secretByLastWord('turkey')).toBe(false);
    expect(secretByLastWord('key')).toBe(true);
    expect(secretByLastWord('2')).toBe(false);
    expect(secretByLastWord('')).toBe(false);
    // The Kelvin sign lowercases to k, as the other name rules read it.
    expect(secretByLastWord('x-functions-\u212aey')).toBe(true);
  });

  it('leaves body members to the member rules: token counts, cursors, signatures and sessions stay', () => {
    const body = { model: 'm', max_tokens: 100, usage: { total_tokens: 45, prompt_tokens: 31 }, token_type: 'bearer', session_id: 'chat-1', session: 'sess-a1b2c3d4e5f6a7b8c9', content: [{ type: 'thinking', thinking: 'hm', signature: 'EqQBCkgIARABGAIiQMeKKF2QT4fwpMeJf36POk6y' }], prompt_cache_key: 'user-1234567890abcdef', idempotency_key: 'idem-123' };
    expect(r.value(body)).toBe(body);
    // And the scan does not report them (only what redaction masks).
    expect(secretsInValue({ request: { body }, response: { body } })).toEqual([]);
  });
});

describe('JSON Web Tokens', () => {
  it('are a credential format, wherever they stand', () => {
    expect(credentialMatches(`id ${JWT} end`)).toEqual([{ index: 3, text: JWT }]);
    // Under a header name no rule knows, in a query value of a plain name, in a body string.
    expect(r.headers({ 'x-user-assertion': JWT })['x-user-assertion']).toMatch(/^\[REDACTED:[0-9a-f]{16}\]$/);
    expect(r.url(`/v1/x?state=${JWT}`)).not.toContain(JWT.slice(40, 60));
    const body = r.value({ messages: [{ role: 'user', content: `my token is ${JWT}, keep it` }] });
    expect(JSON.stringify(body)).not.toContain(JWT.slice(40, 60));
    expect(JSON.stringify(body)).toContain('keep it');
    // In an answer's bytes (JSON and a stream's text).
    const answer = new TextEncoder().encode(JSON.stringify({ id_claim: 'x', note: `issued ${JWT}` }));
    expect(Buffer.from(r.bytes(answer, 'application/json')).includes(JWT.slice(40, 60))).toBe(false);
    const sse = new TextEncoder().encode(`data: {"delta":"${JWT}"}\n\n`);
    expect(Buffer.from(r.bytes(sse, 'text/event-stream')).includes(JWT.slice(40, 60))).toBe(false);
  });

  it('are not base64 JSON without the dots, nor short dotted words', () => {
    // A Bedrock stream chunk: base64 of JSON, starting eyJ, one segment.
    const chunk = 'eyJ0eXBlIjoiY29udGVudF9ibG9ja19kZWx0YSIsImluZGV4IjowfQ==';
    expect(credentialMatches(chunk)).toEqual([]);
    expect(credentialMatches('eyJhbGci.eyJz.abc')).toEqual([]);
  });

  it('are reported by the scan in headers, URLs and bodies of an old tape', () => {
    const found = secretsInValue({
      route: `POST /v1/x?jwt=${JWT}`,
      request: { url: `/v1/x?jwt=${JWT}`, headers: { 'x-user-assertion': JWT }, body: { messages: [{ role: 'user', content: `token ${JWT}` }] } },
    });
    expect(found.map((f) => [f.path, f.kind])).toEqual([
      ['$.route', 'key format'],
      ['$.request.url', 'key format'],
      ['$.request.headers["x-user-assertion"]', 'key format'],
      ['$.request.body.messages[0].content', 'key format'],
    ]);
    for (const f of found) expect(f.excerpt).toBe(`"eyJh…" (${JWT.length} chars)`);
  });
});

describe('the scan of a tape written before the rule', () => {
  it('reports each QA case by its place, and nothing for the plain names', () => {
    const record = {
      route: `POST /v1/chat/completions?auth=AUTHQSECRET0123456789abcdef&session=SESSIONQSECRET0123456789abcdef&pageToken=Zk9PqL2mX8vR4tY7wQ1e`,
      request: {
        url: '/v1/chat/completions?auth=AUTHQSECRET0123456789abcdef&session=SESSIONQSECRET0123456789abcdef&pageToken=Zk9PqL2mX8vR4tY7wQ1e',
        headers: { 'x-functions-key': 'FUNCKEYSECRET0123456789abcdef', 'x-openai-key': 'OAIKEYSECRET0123456789abcdef', 'idempotency-key': 'stainless-node-retry-5f2c8a9e-7d3b-1046', 'x-stainless-retry-count': '0' },
      },
    };
    const found = secretsInValue(record);
    expect(found.map((f) => [f.path, f.kind])).toEqual([
      ['$.route', 'secret query parameter'],
      ['$.route', 'secret query parameter'],
      ['$.request.url', 'secret query parameter'],
      ['$.request.url', 'secret query parameter'],
      ['$.request.headers["x-functions-key"]', 'secret member'],
      ['$.request.headers["x-openai-key"]', 'secret member'],
    ]);
    expect(JSON.stringify(found)).not.toMatch(/SECRET0123/);
  });
});
