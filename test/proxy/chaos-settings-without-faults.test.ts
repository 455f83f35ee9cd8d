// `tapedeck serve --chaos-stall MS` (and --chaos-seed, --chaos-attempts, --chaos-live) without
// --chaos: settings for the faults a request forces with `x-tapedeck-chaos`, which need no
// --chaos. They were refused (`--chaos-stall needs --chaos SPEC`); they are taken as settings
// alone, with no fault injected by rate.
import { describe, expect, it } from 'vitest';
import { serveOptions } from '../../src/proxy/cli.ts';

describe('chaos settings without --chaos', () => {
  it('are settings for header-forced faults, injecting none by rate', () => {
    expect(serveOptions(['--tape', 'x.tape', '--chaos-stall', '200']).chaos).toEqual({ stallMs: 200 });
    expect(serveOptions(['--tape', 'x.tape', '--chaos-seed', '7', '--chaos-attempts', '1']).chaos).toEqual({ seed: 7, attempts: 1 });
    expect(serveOptions(['--tape', 'x.tape', '--chaos-live']).chaos).toEqual({ live: true });
    expect(serveOptions(['--tape', 'x.tape']).chaos).toBeUndefined();
  });

  it('still check their values', () => {
    expect(() => serveOptions(['--tape', 'x.tape', '--chaos-stall', 'soon'])).toThrow(expect.objectContaining({ code: 'E_ARG' }));
  });
});

describe('tapedeck serve --chaos-stall alone, replaying', () => {
  it('injects no fault by rate, and a stall forced by header still answers whole', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { startProxy } = await import('../../src/proxy/server.ts');
    const { startUpstream } = await import('./fake-upstream.ts');
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-chaos-settings-'));
    const up = await startUpstream();
    const tape = join(dir, 'stream.tape');
    const body = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'stall me' }] });
    const ask = (url: string, headers: Record<string, string> = {}) => fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers }, body });
    try {
      const rec = await startProxy({ upstream: up.url, tape, mode: 'record', port: 0, onWarning: () => {} });
      let recorded: string;
      try {
        recorded = await (await ask(rec.url)).text();
      } finally {
        await rec.close();
      }
      const { chaos } = serveOptions(['--tape', tape, '--chaos-stall', '20']);
      const play = await startProxy({ tape, mode: 'replay', port: 0, chaos, onWarning: () => {} });
      try {
        const plain = await ask(play.url);
        expect(plain.headers.get('x-tapedeck-fault')).toBeNull();
        expect(await plain.text()).toBe(recorded);
        const stalled = await ask(play.url, { 'x-tapedeck-chaos': 'stall' });
        expect(stalled.headers.get('x-tapedeck-fault')).toBe('stall');
        expect(await stalled.text()).toBe(recorded);
      } finally {
        await play.close();
      }
    } finally {
      await up.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
