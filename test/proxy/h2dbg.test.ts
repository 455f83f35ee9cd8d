import { connect as h2connect } from 'node:http2';
import { expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
for (let i = 0; i < 6; i++) it('dbg ' + i, async () => {
  const proxy = await startProxy({ tape: '/tmp/h2dbg.tape', mode: 'replay', port: 0, requestTimeoutMs: 500 });
  let serverStreams = 0;
  proxy.http2.on('session', () => console.log('server session'));
  proxy.http2.on('stream', () => serverStreams++);
  const session = h2connect(proxy.url);
  session.on('connect', () => console.log('client connect'));
  session.on('error', (e) => console.log('session err', e));
  const r = await new Promise<number>((resolve) => {
    const req = session.request({ ':method': 'POST', ':path': '/v1/chat/completions', 'content-type': 'application/json', 'content-length': '100' });
    let status = 0;
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('close', () => resolve(status));
    req.on('error', () => {});
    req.resume();
    const drip = setInterval(() => (req.destroyed || req.closed ? clearInterval(drip) : req.write('{')), 200);
    setTimeout(() => { console.log('STUCK', serverStreams, req.state, session.state, session.connecting); session.destroy(); }, 3000);
  });
  expect(r).toBe(408);
  session.close();
  await proxy.close();
}, 10000);
