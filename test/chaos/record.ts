// Tapes for the chaos tests, recorded once per file against the loopback fake provider through a
// recording proxy and the real openai SDK, as a user records them. The fake numbers its answers
// (`Echo N: ...`), so a replay tells which recording answered.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProxy } from '../../src/proxy/server.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

export const MODEL = 'gpt-4o-mini';

/**
 * Where a tapedeck fetch replays these tapes: on the fake provider's host, the origin they were
 * recorded for (a loopback host's port is not compared, docs/matching.md "Hosts"). Nothing
 * listens there: a replay sends nothing.
 */
export const REPLAY_BASE = 'http://127.0.0.1:9';

/** An openai client on `base` (a proxy's URL, or REPLAY_BASE with a tapedeck fetch). */
export const openai = (base: string, o: { maxRetries?: number; fetch?: typeof fetch } = {}): OpenAI =>
  new OpenAI({ baseURL: `${base}/v1`, apiKey: 'sk-test', maxRetries: o.maxRetries ?? 0, ...(o.fetch ? { fetch: o.fetch } : {}) });

/** The streamed text of a chat completion. */
export async function streamText(c: OpenAI, content: string): Promise<string> {
  let out = '';
  for await (const chunk of await c.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content }] })) out += chunk.choices[0]?.delta.content ?? '';
  return out;
}

/** The text of a plain (not streamed) chat completion. */
export async function chatText(c: OpenAI, content: string): Promise<string> {
  const r = await c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content }] });
  return r.choices[0]!.message.content ?? '';
}

/** A temp directory removed after the file's tests. */
export function tempDir(name: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `tapedeck-chaos-${name}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Records `tape` by running `calls` with an openai client on a recording proxy in front of a
 * fresh fake provider; `upstream` is that fake, still running (close it when done).
 */
export async function recordTape(tape: string, calls: (c: OpenAI) => Promise<void>): Promise<Upstream> {
  const upstream = await startUpstream();
  const rec = await startProxy({ upstream: upstream.url, tape, mode: 'record', port: 0 });
  try {
    await calls(openai(rec.url));
  } finally {
    await rec.close();
  }
  return upstream;
}
