// The Anthropic SDK's beta client (what LangChain's ChatAnthropic uses for `betas`) sends
// `POST /v1/messages?beta=true` with the anthropic-beta header. A call with other betas than the
// recording's misses; the miss names the header, as for a beta sent on the plain endpoint.
// Failed before: the `?beta=true` query made the route another one, so the miss said "no
// recording for POST /v1/messages?beta=true", or blamed the text of another prompt recorded with
// betas, though the same prompt was recorded without them.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { headersOnOtherRoute } from '../../src/proxy/other-route.ts';
import { upstreamSuite } from './upstream-suite.ts';

const suite = upstreamSuite('beta-query');
const BETA = 'context-1m-2025-08-07';

/** One Messages call as the SDK sends it: with betas, through the beta client's `?beta=true` URL. */
async function ask(f: typeof fetch, text: string, beta: boolean): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
  if (beta) headers['anthropic-beta'] = BETA;
  const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: text }] });
  return f(`${suite.upstream.url}/v1/messages${beta ? '?beta=true' : ''}`, { method: 'POST', headers, body });
}

const missText = async (r: Response) => {
  expect(r.headers.get('x-tapedeck-match')).toBe('miss');
  return ((await r.json()) as { error: { message: string } }).error.message;
};

describe('anthropic-beta through the beta URL', () => {
  it('names the header on its own', () => {
    expect(headersOnOtherRoute(`POST /v1/messages?beta=true (anthropic-beta: ${BETA})`, new Map([['POST /v1/messages', { count: 1 }]]))).toBe(
      `anthropic-beta: ${BETA} sent; recorded without it for POST /v1/messages`,
    );
    expect(headersOnOtherRoute('POST /v1/messages', new Map([[`POST /v1/messages?beta=true (anthropic-beta: ${BETA})`, { count: 1 }]]))).toBe(
      `no anthropic-beta sent; recorded with anthropic-beta: ${BETA} for POST /v1/messages`,
    );
  });

  it('a call with betas where the same call was recorded without them, and the reverse', async () => {
    const tape = join(suite.dir, 'beta.tape');
    const rec = createFetch({ tape, mode: 'record' });
    try {
      expect((await ask(rec, 'beta q', false)).status).toBe(200);
      expect((await ask(rec, 'beta r', true)).status).toBe(200);
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect((await ask(play, 'beta q', false)).headers.get('x-tapedeck-match')).toBe('exact');
      expect((await ask(play, 'beta r', true)).headers.get('x-tapedeck-match')).toBe('exact');
      expect(await missText(await ask(play, 'beta q', true))).toMatch(new RegExp(`^tapedeck miss: anthropic-beta: ${BETA} sent; recorded without it for POST /v1/messages`));
      expect(await missText(await ask(play, 'beta r', false))).toMatch(new RegExp(`^tapedeck miss: no anthropic-beta sent; recorded with anthropic-beta: ${BETA} for POST /v1/messages`));
    } finally {
      await play.close();
    }
  });

  it('a tape with no beta route yet: the same call recorded without betas is named', async () => {
    const tape = join(suite.dir, 'plain.tape');
    const rec = createFetch({ tape, mode: 'record' });
    try {
      await ask(rec, 'beta q', false);
    } finally {
      await rec.close();
    }
    const play = createFetch({ tape, mode: 'replay' });
    try {
      expect(await missText(await ask(play, 'beta q', true))).toMatch(new RegExp(`^tapedeck miss: anthropic-beta: ${BETA} sent; recorded without it for POST /v1/messages`));
    } finally {
      await play.close();
    }
  });
});
