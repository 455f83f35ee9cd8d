// The rest of tapedeck knows realtime sessions: `tapedeck inspect` lists a session's head, parts
// and audio and a line per session; `tapedeck stats` counts sessions, responses, tokens and audio
// seconds; `tapedeck export` shows frames as readable JSON with audio by digest and size; the
// audio a session sends twice is stored once.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { isRealtimeRecord } from '../../src/store/records.ts';
import { CLI } from '../proxy/serve-cli.ts';
import { pcmFor, startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const tape = join(dir, 'voice.tape');
// One second of 24 kHz PCM16, sent twice in the session.
const second = pcmFor('one second of speech', 48000);

const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

/** Records a session that sends `speech` twice, each time answered. */
async function record(file: string, speech: Buffer) {
  const fake = await startFakeRealtime();
  const proxy = await startProxy({ upstream: fake.url, tape: file, mode: 'record', port: 0 });
  try {
    const ws = new WebSocket(`${proxy.url.replace('http', 'ws')}/v1/realtime?model=gpt-realtime`, { headers: { authorization: 'Bearer sk-test-tools-0123456789abcdef' } });
    const events: { type: string }[] = [];
    ws.on('message', (d) => events.push(JSON.parse(d.toString()) as { type: string }));
    await new Promise((r) => ws.once('open', r));
    const dones = () => events.filter((e) => e.type === 'response.done').length;
    const wait = async (n: number) => {
      while (dones() < n) await new Promise((r) => setTimeout(r, 5));
    };
    for (let round = 1; round <= 2; round++) {
      for (let i = 0; i < speech.length; i += 4800) ws.send(JSON.stringify({ type: 'input_audio_buffer.append', audio: speech.subarray(i, i + 4800).toString('base64') }));
      ws.send(JSON.stringify({ type: 'input_audio_buffer.commit' }));
      ws.send(JSON.stringify({ type: 'response.create' }));
      await wait(round);
    }
    ws.close(1000, 'done');
    await new Promise((r) => ws.once('close', r));
  } finally {
    await proxy.close();
    await fake.close();
  }
}

beforeAll(() => record(tape, second));

describe('realtime sessions in the tape tools', () => {
  it('stores the audio sent twice once, by its digest', async () => {
    const values = (await readTape(tape)).records.map((r) => r.value).filter(isRealtimeRecord);
    const blobs = values.filter((v) => v.role === 'blob');
    const inputRuns = values.flatMap((v) => (v.role === 'part' ? v.frames : [])).filter((f) => 'audio' in f);
    expect(inputRuns).toHaveLength(2);
    expect(new Set(inputRuns.map((f) => ('audio' in f ? f.audio.blob : '')))).toHaveProperty('size', 1);
    expect(blobs.filter((b) => b.role === 'blob' && b.data.length === 48000)).toHaveLength(1);
  });

  it('inspect lists the head, the parts, the audio and a line per session', () => {
    const r = cli('inspect', tape);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/realtime\tsession [0-9a-f]{8}: openai \/v1\/realtime\?model=gpt-realtime/);
    expect(r.stdout).toMatch(/realtime\taudio [0-9a-f]{12}, 48000 bytes/);
    expect(r.stdout).toMatch(/ended by the client \(1000\)/);
    expect(r.stdout).toMatch(/2 response\(s\), 0 tool call\(s\), audio in 2\.0 s out 0\.4 s/);
  });

  it('stats counts sessions, responses, tokens and audio seconds', () => {
    const r = cli('stats', '--format', 'json', tape);
    expect(r.status).toBe(0);
    const s = JSON.parse(r.stdout) as { realtime: { provider: string; sessions: number; responses: number; audioInSeconds: number; tokensIn: number }[] };
    expect(s.realtime).toEqual([expect.objectContaining({ provider: 'openai', sessions: 1, responses: 2, audioInSeconds: 2, tokensIn: 60 })]);
    expect(cli('stats', tape).stdout).toMatch(/REALTIME\s+SESSIONS/);
  });

  it('export shows frames as JSON with audio by digest and size', () => {
    const r = cli('export', tape);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/"stream": "input_audio_buffer"/);
    expect(r.stdout).toMatch(/"bytes": 48000/);
    expect(r.stdout).toMatch(/tapedeck-blob:[0-9a-f]{64}/);
    expect(r.stdout).not.toContain('sk-test-tools');
  });

  it('diff pairs sessions: the same recording is identical; another answer is text, with audio changed as noise', async () => {
    const other = join(dir, 'other.tape');
    await record(other, pcmFor('half a second', 24000));
    const same = JSON.parse(cli('diff', tape, tape, '--format', 'json').stdout) as { entries: { route: string; primary: string }[] };
    expect(same.entries).toEqual([expect.objectContaining({ route: 'realtime openai /v1/realtime?model=gpt-realtime', primary: 'identical' })]);
    const r = cli('diff', tape, other, '--format', 'json');
    const d = JSON.parse(r.stdout) as { entries: { route: string; classes: string[]; summary: string; details: { benign?: string[] } }[] };
    expect(d.entries).toHaveLength(1);
    expect(d.entries[0]!.classes).toEqual(['text', 'benign']);
    expect(d.entries[0]!.details.benign?.[0]).toMatch(/^audio changed/);
    expect(r.status).toBe(1);
  });
});
