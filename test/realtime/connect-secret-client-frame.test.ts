// The connect's own key in the client's frames. An Azure key (32 hex characters) has no
// provider prefix, so no credential pattern finds it: it was masked where the server's frames
// repeat it (the connect carried it) but stored in clear in the client's own `session.update`
// that put it in the instructions, the very frame the server was repeating. Now the client's
// frames have the connect's secrets masked as the server's are, for the `api-key` header of the
// openai client's Azure connect and for a browser-style `?api-key=` connect. They are still
// keyed as sent: a connect whose frames carry another key is told it differs in a secret, never
// shown either key.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AzureOpenAI } from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.ts';
import { makeLocalCertificate } from '../../src/proxy/tls.ts';
import { startFakeRealtime } from './fake-realtime.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-realtime-connect-secret-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let tls: Awaited<ReturnType<typeof makeLocalCertificate>>;
beforeAll(async () => {
  tls = await makeLocalCertificate();
});

// Azure keys are 32 hex characters: no prefix a pattern could know them by.
const KEY = '5f4dcc3b5aa765d61d8327deb882cf99';
const OTHER_KEY = '9b74c9897bac770ffc029102a200c5de';

type Event = Record<string, any>;
type Connect = (url: string, key: string) => Promise<{ send(e: Event): void; events: Event[]; closed: Promise<number>; close(): void }>;

/** The openai client's Azure connect: the key in the `api-key` header. */
const azureClient: Connect = async (url, key) => {
  const rt = await OpenAIRealtimeWS.azure(new AzureOpenAI({ endpoint: url, apiKey: key, apiVersion: '2025-04-01-preview', deployment: 'gpt-realtime-dep' }), { options: { ca: tls.ca } });
  const events: Event[] = [];
  rt.on('event', (e) => events.push(e as Event));
  rt.on('error', () => {});
  const closed = new Promise<number>((r) => rt.socket.once('close', (c) => r(c)));
  await new Promise((r) => rt.socket.once('open', r));
  return { send: (e) => rt.send(e as never), events, closed, close: () => rt.close() };
};

/** A browser-style connect: the key in the URL's `?api-key=`. */
const queryKey: Connect = async (url, key) => {
  const ws = new WebSocket(`${url.replace('https', 'wss')}/openai/realtime?api-version=2025-04-01-preview&deployment=gpt-realtime-dep&api-key=${key}`, { ca: tls.ca });
  const events: Event[] = [];
  ws.on('message', (d) => events.push(JSON.parse(d.toString()) as Event));
  ws.on('error', () => {});
  const closed = new Promise<number>((r) => ws.once('close', (c) => r(c)));
  await new Promise((r) => ws.once('open', r));
  return { send: (e) => ws.send(JSON.stringify(e)), events, closed, close: () => ws.close() };
};

/** Instructions that name the connect's key; what the server confirmed, and the error events. */
async function instruct(connect: Connect, url: string, key: string): Promise<{ confirmed?: string; errors: string[] }> {
  const c = await connect(url, key);
  c.send({ type: 'session.update', session: { type: 'realtime', instructions: `Use key ${key} for the backend` } });
  for (let i = 0; i < 2500 && !c.events.some((e) => e.type === 'session.updated' || e.type === 'error'); i++) await new Promise((r) => setTimeout(r, 2));
  c.close();
  await c.closed;
  return { confirmed: c.events.find((e) => e.type === 'session.updated')?.session?.instructions, errors: c.events.filter((e) => e.type === 'error').map((e) => String(e.error?.message)) };
}

describe("the connect's own key in the client's frames", () => {
  for (const [name, connect] of [
    ['the openai client, Azure (api-key header)', azureClient],
    ['a ?api-key= connect', queryKey],
  ] as const) {
    it(`${name}: masked in the client frame as in the server's echo; replayed; another key is a miss that shows neither`, async () => {
      const tape = join(dir, `${connect === azureClient ? 'header' : 'query'}.tape`);
      const fake = await startFakeRealtime();
      const rec = await startProxy({ upstream: fake.url, tape, mode: 'record', port: 0, tls });
      try {
        expect(await instruct(connect, rec.url, KEY)).toEqual({ confirmed: `Use key ${KEY} for the backend`, errors: [] });
      } finally {
        await rec.close();
        await fake.close();
      }
      const bytes = readFileSync(tape).toString('latin1');
      for (let i = 0; i + 8 <= KEY.length; i++) expect(bytes, KEY.slice(i, i + 8)).not.toContain(KEY.slice(i, i + 8));
      expect(bytes).toContain('Use key [REDACTED] for the backend');

      const warned: string[] = [];
      const play = await startProxy({ tape, mode: 'replay', port: 0, tls, onWarning: (m) => warned.push(m) });
      try {
        // The same key: the recorded session.
        expect(await instruct(connect, play.url, KEY)).toEqual({ confirmed: 'Use key [REDACTED] for the backend', errors: [] });
        // Another key in the instructions: keyed as sent, so not the recorded frame; the miss says where, with neither key.
        const other = await instruct(connect, play.url, OTHER_KEY);
        expect(other.confirmed).toBeUndefined();
        expect(other.errors).toHaveLength(1);
        expect(other.errors[0]).toContain('session.instructions differs (a secret, masked on both sides)');
        for (const said of [...other.errors, ...warned]) {
          expect(said).not.toContain(OTHER_KEY.slice(0, 8));
          expect(said).not.toContain(KEY.slice(0, 8));
        }
      } finally {
        await play.close();
      }
    });
  }
});
