// Secret query parameters of URLs inside bodies: an MCP tool's `server_url` with `?token=` in a
// Responses API request, echoed by the answer (JSON and event stream), a presigned URL in a
// prompt. The request's own URL query was masked; the same parameters written inside a body
// reached the tape. Masked by parameter name as the request URL is, with keyed masks, so two
// requests that differ in such a token stay two requests, and keyed on the masked body, so a
// recording replays from the bytes it was recorded from, however the JSON escapes them.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { REDACTED, redactor } from '../../src/store/redact.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-redact-urls-'));
let server: Server;
let base = '';
let calls = 0;
const TOKEN = 'mcpTokenNotForTapes42';
const OTHER = 'mcpTokenNotForTapes43';
const SIG = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      calls++;
      const body = JSON.parse(text) as { tools?: unknown; stream?: boolean };
      // The Responses API echoes the request's tools in its answer.
      const answer = { id: `resp_${calls}`, object: 'response', status: 'completed', tools: body.tools, output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `call ${calls}` }] }] };
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`event: response.created\ndata: ${JSON.stringify({ type: 'response.created', response: { ...answer, status: 'in_progress' } })}\n\nevent: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: answer })}\n\n`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const body = (token: string, stream = false) => ({
  model: 'gpt-4.1',
  input: `Describe https://bucket.s3.amazonaws.com/cat.png?X-Amz-Expires=60&X-Amz-Signature=${SIG} please`,
  tools: [{ type: 'mcp', server_label: 'docs', server_url: `https://mcp.example.com/sse?region=eu&token=${token}`, require_approval: 'never' }],
  ...(stream ? { stream: true } : {}),
});
const post = (f: typeof fetch, text: string) => f(`${base}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });

describe('secret query parameters of URLs inside bodies', () => {
  it('never reach the tape, in the request or the answer echoing it, plain or streamed; the same request replays, another token misses', async () => {
    const tape = join(dir, 'mcp-url.tape');
    const rec = createFetch({ tape, mode: 'record' });
    const plain = await (await post(rec, JSON.stringify(body(TOKEN)))).text();
    const streamed = await (await post(rec, JSON.stringify(body(TOKEN, true)))).text();
    await rec.close();
    // The caller got the answer as the server sent it.
    expect(plain).toContain(TOKEN);
    const bytes = readFileSync(tape).toString('latin1');
    expect(bytes).not.toContain(TOKEN);
    expect(bytes).not.toContain(SIG);
    // What is not a secret stays as it was.
    expect(bytes).toContain('region=eu');
    expect(bytes).toContain('X-Amz-Expires=60');

    const play = createFetch({ tape, mode: 'replay' });
    const again = await post(play, JSON.stringify(body(TOKEN)));
    expect(again.headers.get('x-tapedeck-match')).toBe('exact');
    expect(await again.text()).toContain('call 1');
    const s = await post(play, JSON.stringify(body(TOKEN, true)));
    expect(s.headers.get('x-tapedeck-match')).toBe('exact');
    expect(await s.text()).toContain('call 2');
    // Another token is another request: keyed masks keep the two apart.
    const other = await post(play, JSON.stringify(body(OTHER)));
    expect(other.headers.get('x-tapedeck-match')).toBe('miss');
    await play.close();
  });

  it('a body whose JSON escapes the URL (\\/ and \\u0026, as Go and PHP write it) is masked and replays from the same bytes', async () => {
    const tape = join(dir, 'escaped.tape');
    const escaped = JSON.stringify(body(TOKEN)).replace(/\//g, '\\/').replace(/&/g, '\\u0026');
    const rec = createFetch({ tape, mode: 'record' });
    await (await post(rec, escaped)).text();
    await rec.close();
    expect(readFileSync(tape).toString('latin1')).not.toContain(TOKEN);
    const play = createFetch({ tape, mode: 'replay' });
    const again = await post(play, escaped);
    expect(again.headers.get('x-tapedeck-match')).toBe('exact');
    await play.close();
  });

  it('the redactor: masked in any string, by parameter name, keyed; mayHaveSecrets says so; keepSecrets keeps them', () => {
    const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
    const masked = r.value({ a: [`see https://x.example/cb?code=abc123def456&state=ok and wss://rt.example/v1?access_token=${TOKEN}` ] });
    const text = JSON.stringify(masked);
    expect(text).not.toContain('abc123def456');
    expect(text).not.toContain(TOKEN);
    expect(text).toContain('state=ok');
    expect(text).toMatch(/code=%5BREDACTED%3A[0-9a-f]{16}%5D/);
    expect(r.value('https://x.example/?token=one')).not.toBe(r.value('https://x.example/?token=two'));
    expect(r.mayHaveSecrets(JSON.stringify(body(TOKEN)))).toBe(true);
    expect(r.mayHaveSecrets('{"input":"see https://example.com/a?b=c"}')).toBe(false);
    const keep = redactor({ keepSecrets: true });
    expect(JSON.stringify(keep.value(body(TOKEN)))).toContain(TOKEN);
  });

  it('a presigned URL signed again later (another X-Amz-Date and signature) replays the recording of the same request', async () => {
    const tape = join(dir, 'presigned.tape');
    const presigned = (date: string, sig: string) => `${base}/v1/responses?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLEKEYID0001%2F${date.slice(0, 8)}%2Fus-east-1%2Fbedrock%2Faws4_request&X-Amz-Date=${date}&X-Amz-Expires=300&X-Amz-SignedHeaders=host&X-Amz-Signature=${sig}`;
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4.1', input: 'presigned' }) };
    const rec = createFetch({ tape, mode: 'record' });
    const first = await (await rec(presigned('20261128T101500Z', SIG), init)).json();
    await rec.close();
    expect(readFileSync(tape).includes('20261128T101500Z')).toBe(false);
    const play = createFetch({ tape, mode: 'replay' });
    try {
      const later = await play(presigned('20261129T090000Z', SIG.split('').reverse().join('')), init);
      expect(later.headers.get('x-tapedeck-match')).toBe('exact');
      expect(await later.json()).toEqual(first);
      // The date is stored as the signature is: one mask for every value, in every tape.
      const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
      expect(r.url('/p?X-Amz-Date=20261128T101500Z&model=m')).toBe(`/p?X-Amz-Date=${encodeURIComponent(REDACTED)}&model=m`);
    } finally {
      await play.close();
    }
  });
});
