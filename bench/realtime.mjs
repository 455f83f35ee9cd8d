// Realtime rows: a recorded OpenAI Realtime session replayed through tapedeck serve (ws://, the
// proxy's upgrade path, the session engine matching each client event), against a bare `ws`
// server that answers each client event with the same server frames, in the same run, at 1 and
// 50 concurrent sessions. Each session sends its client events one at a time and waits for the
// frames that answer each one (as a voice agent does).
//   - frames per second: server frames received by all sessions / wall time (target: replay
//     >= 0.8x the bare ws server);
//   - added p50 latency: median over client events of (time from sending the event to its last
//     answering frame) through tapedeck, minus the same median against the bare server (target:
//     <= 1 ms at 50 sessions).
// Run by bench/run.mjs (filter "realtime"), or alone: node bench/realtime.mjs [--quick].
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket, WebSocketServer } from 'ws';
import { startProxy } from '../dist/proxy/index.js';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** The session: N client events, each answered by a response's worth of server events. */
function script(steps) {
  const answers = [];
  for (let i = 0; i < steps; i++) {
    const id = `resp_${i}`;
    const reply = `Answer number ${i}: a short spoken reply, as a voice agent's turn would carry.`;
    answers.push([
      JSON.stringify({ type: 'response.created', event_id: `ev_${i}_0`, response: { id, status: 'in_progress' } }),
      ...reply.match(/\S+\s*/g).map((w, k) => JSON.stringify({ type: 'response.output_audio_transcript.delta', event_id: `ev_${i}_${k + 1}`, response_id: id, item_id: `item_${i}`, delta: w })),
      JSON.stringify({ type: 'response.done', event_id: `ev_${i}_d`, response: { id, status: 'completed', usage: { input_tokens: 20, output_tokens: 18 } } }),
    ]);
  }
  const clientEvent = (i) => JSON.stringify({ type: 'conversation.item.create', event_id: `evt_${Math.random().toString(36).slice(2)}`, item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `question ${i}` }] } });
  return { answers, clientEvent };
}

/**
 * A bare ws server answering the k-th client event of each connection with answers[k]. `corked`:
 * the frames of one answer in one socket write, as the replay writes them (a second baseline
 * that shows tapedeck's own cost apart from that).
 */
async function bareServer(answers, corked = false) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  const encoded = answers.map((a) => a.map((f) => Buffer.from(f)));
  wss.on('connection', (ws) => {
    let k = 0;
    ws.on('message', () => {
      if (!corked) {
        for (const f of answers[k++] ?? []) ws.send(f);
        return;
      }
      ws._socket.cork();
      for (const f of encoded[k++] ?? []) ws.send(f, { binary: false });
      process.nextTick(() => ws._socket.uncork());
    });
  });
  await new Promise((r) => wss.once('listening', r));
  return { url: `http://127.0.0.1:${wss.address().port}`, close: () => new Promise((r) => { for (const c of wss.clients) c.terminate(); wss.close(() => r()); }) };
}

/** One session: sends each event, waits for its answer; returns per-event round trips (ms) and frames received. */
function session(url, answers, clientEvent) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/realtime?model=gpt-realtime`, { perMessageDeflate: false });
    const times = [];
    let k = 0;
    let got = 0;
    let frames = 0;
    let t0 = 0;
    let opened = 0;
    let ended = 0;
    const next = () => {
      if (k === answers.length) {
        ended = performance.now();
        ws.close();
        return;
      }
      got = 0;
      t0 = performance.now();
      ws.send(clientEvent(k));
    };
    ws.on('open', () => {
      opened = performance.now();
      next();
    });
    ws.on('message', () => {
      frames++;
      if (++got === answers[k].length) {
        times.push(performance.now() - t0);
        k++;
        next();
      }
    });
    ws.on('close', () => (k === answers.length ? resolve({ times, frames, opened, ended }) : reject(new Error(`bench: session closed after ${k} of ${answers.length} events`))));
    ws.on('error', reject);
  });
}

async function run(url, answers, clientEvent, concurrent) {
  const all = await Promise.all(Array.from({ length: concurrent }, () => session(url, answers, clientEvent)));
  // From the first session open to the last one done: the frames, not the handshakes.
  const wall = (Math.max(...all.map((s) => s.ended)) - Math.min(...all.map((s) => s.opened))) / 1000;
  const frames = all.reduce((n, s) => n + s.frames, 0);
  return { fps: frames / wall, p50: median(all.flatMap((s) => s.times)) };
}

/** Best of `rounds` alternating runs of each side (the machine is shared: alternate, keep each side's best). */
async function paired(replayUrl, bareUrl, corkedUrl, answers, clientEvent, concurrent, rounds) {
  const r = [];
  const b = [];
  const c = [];
  for (let i = 0; i < rounds; i++) {
    b.push(await run(bareUrl, answers, clientEvent, concurrent));
    c.push(await run(corkedUrl, answers, clientEvent, concurrent));
    r.push(await run(replayUrl, answers, clientEvent, concurrent));
  }
  const med = (xs) => ({ fps: median(xs.map((x) => x.fps)), p50: median(xs.map((x) => x.p50)) });
  return { replay: med(r), bare: med(b), corked: med(c) };
}

export async function realtimeBench({ quick = false } = {}) {
  const steps = quick ? 40 : 200;
  const rounds = quick ? 3 : 7;
  const { answers, clientEvent } = script(steps);
  const dir = mkdtempSync(join(tmpdir(), 'tapedeck-bench-realtime-'));
  const bare = await bareServer(answers);
  const corked = await bareServer(answers, true);
  try {
    const tape = join(dir, 'session.tape');
    // Record the session once through the proxy, against the bare server as the upstream.
    const rec = await startProxy({ upstream: bare.url, tape, mode: 'record', port: 0, durable: false });
    await session(rec.url, answers, clientEvent);
    await rec.close();
    // Replay: every connect past the one recording gets it again (the default order rule).
    const proxy = await startProxy({ tape, mode: 'replay', port: 0 });
    const rows = [];
    const targets = [];
    try {
      await run(proxy.url, answers, clientEvent, 4); // warm both paths
      await run(bare.url, answers, clientEvent, 4);
      for (const concurrent of [1, 50]) {
        const p = await paired(proxy.url, bare.url, corked.url, answers, clientEvent, concurrent, rounds);
        const ratio = p.replay.fps / p.bare.fps;
        const added = p.replay.p50 - p.bare.p50;
        rows.push({ label: `bare ws, ${concurrent} session(s): frames/s`, value: p.bare.fps, unit: 'frames/s', baseline: 'bare ws' });
        rows.push({ label: `replay, ${concurrent} session(s): frames/s`, value: p.replay.fps, unit: 'frames/s', ratio, baseline: 'bare ws' });
        rows.push({ label: `bare ws, ${concurrent} session(s): p50 per event`, value: p.bare.p50, unit: 'ms', baseline: 'bare ws' });
        rows.push({ label: `replay, ${concurrent} session(s): p50 per event`, value: p.replay.p50, unit: 'ms', added, baseline: 'bare ws' });
        rows.push({ label: `bare ws corked, ${concurrent} session(s): frames/s`, value: p.corked.fps, unit: 'frames/s', baseline: 'bare ws corked' });
        rows.push({ label: `replay vs corked, ${concurrent} session(s): frames/s`, value: p.replay.fps, unit: 'frames/s', ratio: p.replay.fps / p.corked.fps, baseline: 'bare ws corked' });
        rows.push({ label: `bare ws corked, ${concurrent} session(s): p50 per event`, value: p.corked.p50, unit: 'ms', baseline: 'bare ws corked' });
        rows.push({ label: `replay vs corked, ${concurrent} session(s): p50 per event`, value: p.replay.p50, unit: 'ms', added: p.replay.p50 - p.corked.p50, baseline: 'bare ws corked' });
        targets.push({ label: `realtime replay frames/s at ${concurrent} session(s) / bare ws (x, target >= 0.8)`, value: ratio, unit: 'x', op: '>=', goal: 0.8, baseline: 'bare ws echo of the same frames' });
        targets.push({ label: `realtime replay added p50 per event at ${concurrent} session(s) (ms${concurrent === 50 ? ', target <= 1' : ''})`, value: added, unit: 'ms', ...(concurrent === 50 ? { op: '<=', goal: 1 } : {}), baseline: 'bare ws echo of the same frames' });
      }
    } finally {
      await proxy.close();
    }
    return { rows, targets, steps, framesPerSession: answers.reduce((n, a) => n + a.length, 0) };
  } finally {
    await bare.close();
    await corked.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatRow(r) {
  const v = r.unit === 'ms' ? `${r.value.toFixed(3)} ms` : `${Math.round(r.value)} frames/s`;
  const vs = r.ratio !== undefined ? `${r.ratio.toFixed(2)}x` : r.added !== undefined ? `${r.added >= 0 ? '+' : ''}${r.added.toFixed(3)} ms` : '(baseline)';
  return [r.label, v, vs, r.baseline];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { rows, targets } = await realtimeBench({ quick: process.argv.includes('--quick') });
  for (const r of rows) console.log(formatRow(r).join('  '));
  for (const t of targets) console.log(`${t.label}: ${t.value.toFixed(3)}${t.op ? ` ${(t.op === '>=' ? t.value >= t.goal : t.value <= t.goal) ? 'PASS' : 'MISS'}` : ''}`);
}
