// A client told https: or wss: (OpenAI's Node realtime clients force wss:) that reaches a proxy
// serving plain HTTP sends a TLS ClientHello. The proxy says so once, with the flag that fixes
// it, and goes on serving plain HTTP.
import { connect } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tls-plain-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A TLS handshake against the port: resolves with how it ended. */
function handshake(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost' });
    s.once('secureConnect', () => {
      s.destroy();
      resolve('secure');
    });
    s.once('error', (e) => resolve(`error ${(e as NodeJS.ErrnoException).code ?? e.message}`));
    s.once('close', () => resolve('closed'));
  });
}

it('says once that a client spoke TLS to the plain port, with --tls, and keeps serving HTTP', async () => {
  const warned: string[] = [];
  const proxy = await startProxy({ tape: join(dir, 'plain.tape'), mode: 'replay', port: 0, onWarning: (m) => warned.push(m) });
  try {
    const port = Number(new URL(proxy.url).port);
    expect(await handshake(port)).not.toBe('secure');
    expect(await handshake(port)).not.toBe('secure');
    const told = warned.filter((m) => m.includes('spoke TLS'));
    expect(told, warned.join('\n')).toHaveLength(1);
    expect(told[0]).toContain('--tls');
    // Plain HTTP still works on the same port.
    const r = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(r.headers.get('x-tapedeck-match')).toBe('miss');
  } finally {
    await proxy.close();
  }
});
