// A token the model speaks back in a realtime session arrives one transcript delta a word: no
// frame holds `Bearer` and the token together, so masking each frame's text left the token on
// the tape. The frames of a response are read joined: the token never reaches the tape, and the
// replayed transcript reads with its mask.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { DB_PASSWORD, startFakeRealtime } from './fake-realtime.ts';
import { spokenBack } from './spoken-back.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-split-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'Rt12Tk34Xy56Zq78Wv90Lm12Np34Qr56';

it('masks a bearer token cut across transcript deltas, and replays the masked transcript', async () => {
  const tape = join(dir, 'split.tape');
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  let live: string;
  try {
    live = await spokenBack(rec.url, `call with Bearer ${TOKEN} please`);
  } finally {
    await rec.close();
    await fake.close();
  }
  expect(live).toBe(`You said: call with Bearer ${TOKEN} please`);
  const bytes = readFileSync(tape).toString('latin1');
  for (let i = 0; i + 6 <= TOKEN.length; i++) expect(bytes, TOKEN.slice(i, i + 6)).not.toContain(TOKEN.slice(i, i + 6));
  const play = await startProxy({ tape, mode: 'replay', port: 0 });
  try {
    expect(await spokenBack(play.url, `call with Bearer ${TOKEN} please`)).toMatch(/^You said: call with \[REDACTED(?::[0-9a-f]{16})?\] ?please$/);
  } finally {
    await play.close();
  }
});

// Failed before: the arguments of a tool call streamed a few characters a delta held a password
// member; each frame held too little of it to be read as a member, so it reached the tape.
it('masks a secret member of tool-call arguments streamed a few characters a delta', async () => {
  const tape = join(dir, 'args.tape');
  const password = DB_PASSWORD;
  const fake = await startFakeRealtime();
  const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0 });
  try {
    await spokenBack(rec.url, 'connect to the database');
  } finally {
    await rec.close();
    await fake.close();
  }
  const bytes = readFileSync(tape).toString('latin1');
  for (let i = 0; i + 6 <= password.length; i++) expect(bytes, password.slice(i, i + 6)).not.toContain(password.slice(i, i + 6));
});
