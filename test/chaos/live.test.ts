// In front of the live API (`live: true` in record or update mode; a test's own tape.chaos()),
// a damaging fault (`cut`, `stall`, `malformed`) drawn for a call that goes upstream used to be
// skipped: the call got the whole live answer, and only a replay got it damaged, so a test of a
// cut stream failed on the run that recorded it and passed once its tape existed. Now the live
// answer is recorded whole first (nothing reaches the client before it is stored), then sent
// damaged exactly as its replay damages it, and the retry of a cut or malformed call gets that
// recording whole: the recording run and the replay give the client the same bytes. Passthrough
// records nothing, so there the fault stays skipped (and unannounced).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { readTape } from '../../src/store/tape-file.ts';
import type { ChaosOptions } from '../../src/chaos/options.ts';
import type { TapeMode } from '../../src/store/mode.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { MODEL, openai, streamText, tempDir } from './record.ts';

const tmp = tempDir('live');
let up: Upstream;
beforeAll(async () => {
  up = await startUpstream();
});
afterAll(async () => {
  await up.close();
  tmp.remove();
});

const announced = (warnings: string[]) => warnings.filter((w) => w.includes('first fault injected'));

/** What a client got: the status, the headers tapedeck marks answers with, the body as far as it came, and whether it broke off. */
interface Got {
  status: number;
  match: string | null;
  fault: string | null;
  text: string;
  broke: boolean;
}

async function got(res: Response): Promise<Got> {
  let text = '';
  let broke = false;
  const dec = new TextDecoder();
  try {
    for await (const c of res.body!) text += dec.decode(c, { stream: true });
  } catch {
    broke = true;
  }
  return { status: res.status, match: res.headers.get('x-tapedeck-match'), fault: res.headers.get('x-tapedeck-fault'), text, broke };
}

/** A createFetch or a proxy on `tape`: how to send the streamed chat request, its stats, its close. */
interface Path {
  send(content: string): Promise<Response>;
  /** The request of `send` to another path. */
  sendTo(path: string, content: string): Promise<Response>;
  faults(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

const body = (content: string) => JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content }] });
const init = (content: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: body(content) });

async function open(path: 'createFetch' | 'proxy', tape: string, mode: TapeMode, chaos: ChaosOptions | undefined, warnings: string[] = []): Promise<Path> {
  const onWarning = (w: string) => warnings.push(w);
  if (path === 'createFetch') {
    const f = createFetch({ tape, mode, chaos, onWarning });
    return { send: (c) => f(`${up.url}/v1/chat/completions`, init(c)), sendTo: (to, c) => f(`${up.url}${to}`, init(c)), faults: async () => (await f.stats()).faults ?? {}, close: () => f.close() };
  }
  const p = await startProxy({ upstream: up.url, tape, mode, port: 0, chaos, onWarning });
  return { send: (c) => fetch(`${p.url}/v1/chat/completions`, init(c)), sendTo: (to, c) => fetch(`${p.url}${to}`, init(c)), faults: async () => p.handler.stats().faults ?? {}, close: () => p.close() };
}

const records = async (tape: string) => (await readTape(tape)).records.map((r) => r.value as { response: { body: Uint8Array } });
const whole = (text: string) => text.endsWith('data: [DONE]\n\n');
/** What a recording run and its replay must agree on. */
const seen = (g: Got) => ({ status: g.status, fault: g.fault, text: g.text, broke: g.broke });

describe.each(['createFetch', 'proxy'] as const)('%s: a damaging fault on a call recorded now', (path) => {
  it.each([
    ['cut', 'update'],
    ['cut', 'record'],
    ['malformed', 'update'],
    ['malformed', 'record'],
  ] as const)('%s, %s mode: the answer is stored whole, then sent damaged as its replay is; the retry gets it whole', async (fault, mode) => {
    const tape = join(tmp.dir, `${path}-${fault}-${mode}.tape`);
    const chaos = { faults: { [fault]: 1 }, attempts: 1, seed: 5 };
    const content = `Live ${path} ${fault} ${mode}`;
    const warnings: string[] = [];
    const calls = up.calls.length;
    const rec = await open(path, tape, mode, { ...chaos, live: true }, warnings);
    let first: Got;
    let retry: Got;
    try {
      const reading = got(await rec.send(content));
      // Nothing of the answer reached the client before it was stored.
      expect(await records(tape)).toHaveLength(1);
      first = await reading;
      retry = await got(await rec.send(content));
      expect(await rec.faults()).toEqual({ [fault]: 1 });
    } finally {
      await rec.close();
    }
    expect(first).toMatchObject({ status: 200, match: 'recorded', fault, broke: fault === 'cut' });
    if (fault === 'cut') expect(whole(first.text)).toBe(false);
    // One event's JSON broken, the rest as recorded.
    else expect(first.text).not.toBe(retry.text);
    // The retry replays the recording just made, whole: the API was asked once.
    expect(retry).toMatchObject({ status: 200, match: 'exact', fault: null, broke: false });
    expect(whole(retry.text)).toBe(true);
    expect(up.calls.length - calls).toBe(1);
    expect(announced(warnings)).toHaveLength(1);
    const [stored] = await records(tape);
    expect(new TextDecoder().decode(stored!.response.body)).toBe(retry.text);

    // The replay (CI) gives the client the same damaged answer, then the same whole one.
    const ci = await open(path, tape, 'replay', chaos);
    try {
      expect(seen(await got(await ci.send(content)))).toEqual(seen(first));
      expect(seen(await got(await ci.send(content)))).toEqual(seen(retry));
      expect(await ci.faults()).toEqual({ [fault]: 1 });
    } finally {
      await ci.close();
    }
  });

  it.each(['update', 'record'] as const)('stall, %s mode: the answer stored whole is sent slowly, as its replay is', async (mode) => {
    const tape = join(tmp.dir, `${path}-stall-${mode}.tape`);
    const chaos = { faults: { stall: 1 }, stallMs: 20, seed: 5 };
    const content = `Live ${path} stall ${mode}`;
    const calls = up.calls.length;
    const rec = await open(path, tape, mode, { ...chaos, live: true });
    const answers: Got[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const t0 = performance.now();
        answers.push(await got(await rec.send(content)));
        // At least 4 pauses between the events of the answer.
        expect(performance.now() - t0).toBeGreaterThanOrEqual(4 * 20 - 5);
      }
      expect(await rec.faults()).toEqual({ stall: 2 });
    } finally {
      await rec.close();
    }
    for (const a of answers) {
      expect(a).toMatchObject({ status: 200, fault: 'stall', broke: false });
      expect(whole(a.text)).toBe(true);
    }
    // A stall answers its call whole: the next call is a new one. Record mode records it too;
    // update mode replays the answer it recorded first (as without faults).
    expect(answers.map((a) => a.match)).toEqual(mode === 'record' ? ['recorded', 'recorded'] : ['recorded', 'exact']);
    expect(answers[0]!.text === answers[1]!.text).toBe(mode === 'update');
    expect(up.calls.length - calls).toBe(mode === 'record' ? 2 : 1);
    expect(await records(tape)).toHaveLength(mode === 'record' ? 2 : 1);

    const ci = await open(path, tape, 'replay', chaos);
    try {
      for (const a of answers) expect(seen(await got(await ci.send(content)))).toEqual(seen(a));
    } finally {
      await ci.close();
    }
  });

  it('update mode, a recording on the tape: the fault damages it (no live call), as before', async () => {
    const tape = join(tmp.dir, `${path}-recorded-before.tape`);
    const content = `Recorded before ${path}`;
    const first = await open(path, tape, 'record', undefined);
    try {
      expect(whole((await got(await first.send(content))).text)).toBe(true);
    } finally {
      await first.close();
    }
    const calls = up.calls.length;
    const again = await open(path, tape, 'update', { faults: { cut: 1 }, attempts: 1, seed: 5, live: true });
    try {
      expect(await got(await again.send(content))).toMatchObject({ match: 'exact', fault: 'cut', broke: true });
      expect(await got(await again.send(content))).toMatchObject({ match: 'exact', fault: null, broke: false });
    } finally {
      await again.close();
    }
    expect(up.calls.length).toBe(calls);
  });

  it('an answer not recorded (an upstream error, no recordErrors) goes as it came, its fault not injected', async () => {
    const warnings: string[] = [];
    const p = await open(path, join(tmp.dir, `${path}-error.tape`), 'update', { faults: { cut: 1 }, live: true, seed: 5 }, warnings);
    try {
      const a = await got(await p.sendTo('/v1/fail', 'Fails'));
      expect(a).toMatchObject({ status: 500, fault: null, broke: false });
      expect(a.text).toContain('upstream failure');
      expect(await p.faults()).toEqual({});
      expect(announced(warnings)).toEqual([]);
    } finally {
      await p.close();
    }
  });

  it('passthrough records nothing: a cut is neither injected nor announced', async () => {
    const warnings: string[] = [];
    const p = await open(path, join(tmp.dir, `${path}-passthrough.tape`), 'passthrough', { faults: { cut: 1 }, live: true, seed: 5 }, warnings);
    try {
      const a = await got(await p.send('Passthrough'));
      expect(a).toMatchObject({ status: 200, fault: null, broke: false });
      expect(whole(a.text)).toBe(true);
      expect(await p.faults()).toEqual({});
      expect(announced(warnings)).toEqual([]);
    } finally {
      await p.close();
    }
  });
});

describe('the openai SDK on a recording run', () => {
  it('createFetch, record mode: the stream is cut as in the replay, and its retry reads it whole', async () => {
    const tape = join(tmp.dir, 'sdk.tape');
    const chaos = { faults: { cut: 1 }, attempts: 1, cutAfter: 2, seed: 5 };
    const run = async (mode: TapeMode) => {
      const f = createFetch({ tape, mode, chaos: { ...chaos, live: mode !== 'replay' } });
      try {
        const c = openai(up.url, { fetch: f });
        const cut = await streamText(c, 'Cut me').then((t) => `whole: ${t}`, (e: Error) => `cut: ${e.message}`);
        return { cut, retry: await streamText(c, 'Cut me') };
      } finally {
        await f.close();
      }
    };
    const recorded = await run('record');
    expect(recorded.cut).toMatch(/^cut: /);
    expect(recorded.retry).toMatch(/^Echo \d+: Cut me $/);
    expect(await run('replay')).toEqual(recorded);
  });
});

describe('a fault forced by its header', () => {
  it('proxy, record mode: x-tapedeck-chaos: 429 is answered and announced', async () => {
    const warnings: string[] = [];
    const p = await startProxy({ upstream: up.url, tape: join(tmp.dir, 'forced.tape'), mode: 'record', port: 0, chaos: { live: true, seed: 5 }, onWarning: (w) => warnings.push(w) });
    try {
      const forced = await fetch(`${p.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-tapedeck-chaos': '429' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }) });
      expect(forced.status).toBe(429);
      await forced.arrayBuffer();
      expect(announced(warnings)).toHaveLength(1);
      expect(announced(warnings)[0]).toContain('(429 on POST /v1/chat/completions) with seed 5');
    } finally {
      await p.close();
    }
  });
});
