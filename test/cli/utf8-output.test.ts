// The commands that write a tape's worth of text (export, export --review, export --har, tree)
// encode it to UTF-8 a piece at a time as they go (src/store/chunked-write.ts): what reaches
// stdout must be, byte for byte, the UTF-8 of the text the library functions return, on a tape
// whose text is non-Latin-1 and longer than one written chunk.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { exportTapeHar } from '../../src/store/export-har.ts';
import { exportTapeJSON } from '../../src/store/export.ts';
import { formatTree } from '../../src/tree/index.ts';
import { loadTree } from '../../src/tree/load.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-utf8-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** stdout as bytes, exactly as the process wrote them. */
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, env: { ...process.env, TAPEDECK_MODE: '' }, maxBuffer: 64 << 20 });

const tape = join(dir, 'intl.tape');
const WORDS = ['déjà', 'Zürich', 'Привет', 'καιρός', '東京', '天気予報', '안녕하세요', '😀', '👩‍💻', '🇫🇷', '✓', '\u2028', 'plain', 'words', '"quoted"', 'tab\there'];
const text = (i: number, n: number) => Array.from({ length: n }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ');

beforeAll(async () => {
  const upstream = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const sent = input instanceof Request ? await input.text() : typeof init?.body === 'string' ? init.body : new TextDecoder().decode(init?.body as Uint8Array);
    const i = (JSON.parse(sent) as { messages: { content: string }[] }).messages.length;
    const body = { id: `c${i}`, object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text(i, 300) }, finish_reason: 'stop' }] };
    return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {} });
  try {
    // 40 calls of ~2-4 KB of text each: ~250 KB of JSON, several 64 KB chunks.
    for (let i = 0; i < 40; i++) {
      const messages = Array.from({ length: 1 + (i % 3) }, (_, k) => ({ role: 'user', content: text(i + k, 200) }));
      await f('https://api.openai.com/v1/chat/completions', { method: 'POST', body: JSON.stringify({ model: 'gpt-4o-mini', messages }), headers: { 'content-type': 'application/json' } }).then((r) => r.text());
    }
  } finally {
    await f.close();
  }
});

describe('a tape of non-Latin-1 text on stdout', () => {
  it('export, export --review and export --har write the UTF-8 of the library text', async () => {
    const cases: [string[], string][] = [
      [['export', tape], await exportTapeJSON(tape)],
      [['export', tape, '--review'], await exportTapeJSON(tape, { review: true })],
      [['export', tape, '--har'], (await exportTapeHar(tape)).text],
    ];
    for (const [args, want] of cases) {
      expect(want.length).toBeGreaterThan(200_000);
      const r = cli(...args);
      expect(r.status, String(r.stderr)).toBe(0);
      expect(Buffer.compare(r.stdout, Buffer.from(want, 'utf8')), args.join(' ')).toBe(0);
    }
  });

  it('tree writes the UTF-8 of formatTree', async () => {
    const { tree } = await loadTree(tape);
    const r = cli('tree', tape, '--collapse', '0');
    expect(r.status, String(r.stderr)).toBe(0);
    expect(Buffer.compare(r.stdout, Buffer.from(`${tape}\n${formatTree(tree)}`, 'utf8'))).toBe(0);
  });
});
