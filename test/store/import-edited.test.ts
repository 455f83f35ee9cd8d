// Fixing a recording by hand the way the docs suggest (`tapedeck export` to JSON, edit, `tapedeck
// import --force`): a prompt edited there kept the old request's stored key, so the old prompt
// was answered with the edited answer (and the new one too), silently. An edited request is now
// keyed as it reads: the new prompt gets the edited answer, the old one misses. An unchanged
// export imports byte for byte, as before. With createFetch and the real openai SDK.
import OpenAI from 'openai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeJSON, importTapeJSON } from '../../src/store/export.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-edited-'));
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c));
    req.on('end', () => {
      const q = (JSON.parse(text) as { messages: { content: string }[] }).messages[0]!.content;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: `answer to ${q}` } }] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const ask = async (f: typeof fetch, q: string, extra: Record<string, unknown> = {}) => {
  const c = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, fetch: f });
  try {
    return (await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }], ...extra })).choices[0]!.message.content;
  } catch (e) {
    return `ERR ${(e as { status?: number }).status}`;
  }
};

describe('export, edit, import', () => {
  it('an edited prompt is keyed as it reads: the old prompt misses, the new one gets the edited answer', async () => {
    const tape = join(dir, 'chat.tape');
    const rec = createFetch({ tape, mode: 'record' });
    try {
      expect(await ask(rec, 'Hi')).toBe('answer to Hi');
      expect(await ask(rec, 'Other')).toBe('answer to Other');
    } finally {
      await rec.close();
    }
    const json = await exportTapeJSON(tape);
    // Unchanged: byte for byte, nothing re-keyed.
    const same = join(dir, 'same.tape');
    expect(await importTapeJSON(json, same)).toEqual({ records: 2, rekeyed: 0 });
    expect(readFileSync(same).equals(readFileSync(tape))).toBe(true);
    // The first recording's prompt and answer edited by hand.
    const edited = json.replace('"content": "Hi"', '"content": "Bye"');
    expect(edited).not.toBe(json);
    const fixed = join(dir, 'fixed.tape');
    expect(await importTapeJSON(edited, fixed)).toEqual({ records: 2, rekeyed: 1 });
    const play = createFetch({ tape: fixed, mode: 'replay' });
    try {
      expect(await ask(play, 'Bye')).toBe('answer to Hi');
      expect(await ask(play, 'Hi')).toBe('ERR 400');
      expect(await ask(play, 'Other')).toBe('answer to Other');
    } finally {
      await play.close();
    }
  });

  it('a recording made with ignoreArgs keeps its key when imported with the same arguments', async () => {
    const tape = join(dir, 'ignored.tape');
    const rec = createFetch({ tape, mode: 'record', ignoreArgs: ['seed'] });
    try {
      await ask(rec, 'Hi', { seed: 7 });
    } finally {
      await rec.close();
    }
    const json = await exportTapeJSON(tape);
    const back = join(dir, 'ignored-back.tape');
    expect(await importTapeJSON(json, back, { ignoreArgs: ['seed'] })).toEqual({ records: 1, rekeyed: 0 });
    expect(readFileSync(back).equals(readFileSync(tape))).toBe(true);
    // Without them the key the request gives differs: re-keyed, and said (the CLI names --ignore).
    expect((await importTapeJSON(json, join(dir, 'ignored-plain.tape'))).rekeyed).toBe(1);
  });
});
