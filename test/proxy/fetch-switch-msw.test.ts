// The fetch switch with blockNetwork beside MSW (msw/node's setupServer, started first, as a
// project that mocks its own API has it): a host MSW answers is not routed through the tape,
// so the switch refuses it, as it must (it cannot tell MSW's hosts from the network's). The
// refusal said to add the host to allowHosts "to let it through", which read as through to the
// network; with MSW running it now says that the host then goes to MSW. Real MSW.
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installFetchSwitch } from '../../src/proxy/global-fetch.ts';

const server = setupServer(http.get('https://api.myapp.test/users', () => HttpResponse.json([{ name: 'Ada' }])));
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

/** A tape stand-in for the LLM's host: these tests never call it. */
const tape = (async () => {
  throw new Error('the LLM host is not called here');
}) as unknown as typeof fetch;

describe('blockNetwork beside MSW', () => {
  it("a host MSW answers is refused, and the refusal says allowHosts hands it to MSW", async () => {
    const sw = installFetchSwitch({ fetch: tape, hosts: ['api.openai.com'], blockNetwork: true });
    try {
      const err = await fetch('https://api.myapp.test/users').then(
        () => undefined,
        (e: unknown) => e as { code?: string; message: string },
      );
      expect(err?.code).toBe('E_NETWORK_BLOCKED');
      expect(err?.message).toContain('allowHosts');
      expect(err?.message).toContain('MSW');
    } finally {
      sw.uninstall();
    }
  });

  it('installed with no hosts while MSW runs: a warning says that the hosts MSW answers go to the tape too', async () => {
    const warnings: { code?: string; message: string }[] = [];
    const listen = (w: Error & { code?: string }) => warnings.push({ code: w.code, message: w.message });
    process.on('warning', listen);
    try {
      const sw = installFetchSwitch({ fetch: tape });
      sw.uninstall();
      // Warnings are emitted on the next turn.
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', listen);
    }
    const said = warnings.find((w) => w.code === 'TAPEDECK_SWITCH_ALL_HOSTS');
    expect(said?.message).toContain('MSW');
    expect(said?.message).toContain("hosts: ['api.openai.com']");
  });

  it('listed in allowHosts, MSW answers it', async () => {
    const sw = installFetchSwitch({ fetch: tape, hosts: ['api.openai.com'], blockNetwork: true, allowHosts: ['api.myapp.test'] });
    try {
      expect(await (await fetch('https://api.myapp.test/users')).json()).toEqual([{ name: 'Ada' }]);
    } finally {
      sw.uninstall();
    }
  });
});
