// An upstream that takes each request and never answers it, for the tests of what closing a tape
// does with a call still waiting: started before the file's tests, its held answers destroyed and
// its server closed after them.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';

/**
 * Registers the hung upstream for the calling test file; `url` is its origin once the file's
 * tests run, `held` how many requests it holds.
 *
 * @example
 * const upstream = hungUpstream()
 * it('...', async () => { fetch(`${upstream.url}/v1/chat/completions`) })
 */
export function hungUpstream(): { readonly url: string; readonly held: number } {
  let server: Server;
  let url = '';
  const held: ServerResponse[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      held.push(res);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  return {
    get url() {
      return url;
    },
    get held() {
      return held.length;
    },
  };
}
