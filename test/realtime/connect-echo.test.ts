// A realtime server that repeats what the connect carried: the key of its `api-key` header, a
// `?token=` of its URL, a key sent as a subprotocol (`openai-insecure-api-key.<key>`, as
// browsers send it). None has a known key format, so no pattern finds them in the transcript;
// they are masked because the connect carried them, and the replayed transcript reads with
// their masks.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { startFakeRealtime } from './fake-realtime.ts';
import { spokenBack } from './spoken-back.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-connect-echo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const API_KEY = 'az9Kf3Lp7Qw2Xe5Rt8Yu1Io4';
const TOKEN = 'tq4Hn8Jm2Kd6Ls0Pf3Gb';
const SUB_KEY = 'gw7Vc1Bx5Nz9Mq3Wk8Ej';
const CONNECT = { query: `&token=${TOKEN}`, protocols: [`openai-insecure-api-key.${SUB_KEY}`], headers: { 'api-key': API_KEY } };

it('masks the connect\'s own key, token and subprotocol key where the server repeats them', async () => {
  const tape = join(dir, 'connect.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  let live: string;
  try {
    live = await spokenBack(rec.url, 'how did I connect?', CONNECT);
  } finally {
    await rec.close();
    await fake.close();
  }
  expect(live).toBe(`You said: api-key ${API_KEY} token ${TOKEN} subprotocol ${SUB_KEY}`);
  const bytes = readFileSync(tape).toString('latin1');
  for (const secret of [API_KEY, TOKEN, SUB_KEY]) {
    for (let i = 0; i + 6 <= secret.length; i++) expect(bytes, secret.slice(i, i + 6)).not.toContain(secret.slice(i, i + 6));
  }
  const play = await startProxy({ tape, mode: 'replay', port: 0 });
  try {
    expect(await spokenBack(play.url, 'how did I connect?', CONNECT)).toMatch(/^You said: api-key \[REDACTED\] token \[REDACTED(?::[0-9a-f]{16})?\] subprotocol \[REDACTED\]$/);
  } finally {
    await play.close();
  }
});
