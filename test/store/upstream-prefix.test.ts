// The one rule for joining an upstream base URL with a request path: every trailing slash of the
// base dropped. Checked on each joiner against a plain oracle (the URL's path with the slashes
// trimmed by a loop written here, then the request path), for bases with 0-3 trailing slashes.
import { describe, expect, it } from 'vitest';
import { upstreamPrefix, withoutTrailingSlashes } from '../../src/store/upstream-prefix.ts';
import { upstreamUrl } from '../../src/proxy/upstream.ts';
import { pointLocation } from '../../src/proxy/answer-urls.ts';
import { destinationOf, upstreamPathFor } from '../../src/drift/rerecord.ts';
import type { HttpRecord } from '../../src/store/records.ts';

const record = { v: 1, kind: 'http', route: 'POST /v1/chat/completions', key: 'k', request: { method: 'POST', url: '/v1/chat/completions', headers: {} }, response: { status: 200, headers: {} } } as unknown as HttpRecord;

describe('upstream prefix', () => {
  const bases = ['https://gw.example', 'https://gw.example/prefix', 'https://gw.example/v1/acct/gw/openai'];
  for (const base of bases) {
    for (const slashes of ['', '/', '//', '///']) {
      const upstream = base + slashes;
      const path = new URL(base).pathname === '/' ? '' : new URL(base).pathname;
      it(`${upstream}: the proxy, its redirects and rerecord agree on ${path || "''"}`, () => {
        expect(upstreamPrefix(upstream)).toBe(path);
        expect(upstreamUrl(upstream, '/v1/chat/completions')).toBe(`${base}/v1/chat/completions`);
        expect(destinationOf(record, upstream) + upstreamPathFor(record, undefined) + record.request.url).toBe(`${base}/v1/chat/completions`);
        expect(upstreamPathFor(record, upstream)).toBe(path);
        // A redirect to the upstream's own prefixed path comes back without the prefix.
        expect(pointLocation({ location: `${base}/v1/files/1` }, 307, 'http://127.0.0.1:9', upstream).location).toBe('http://127.0.0.1:9/v1/files/1');
      });
    }
  }

  it('withoutTrailingSlashes leaves other text alone', () => {
    expect(withoutTrailingSlashes('')).toBe('');
    expect(withoutTrailingSlashes('///')).toBe('');
    expect(withoutTrailingSlashes('a/b')).toBe('a/b');
    expect(withoutTrailingSlashes(`a${'/'.repeat(100_000)}b`)).toBe(`a${'/'.repeat(100_000)}b`);
  });
});
