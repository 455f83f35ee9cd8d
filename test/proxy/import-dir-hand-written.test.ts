// `tapedeck import <dir>` of a directory holding hand-written recording files: the error names
// the hand-written files and `tapedeck add`, not only an import per file (which refuses them).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-hw-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');

describe('tapedeck import of a directory of hand-written files', () => {
  it('names the hand-written file and tapedeck add; no tape written', () => {
    const src = join(dir, 'impdir');
    mkdirSync(src);
    const url = 'https://api.openai.com/v1/chat/completions';
    const body = { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Hi' }] };
    writeFileSync(join(src, 'stream.json'), JSON.stringify([{ request: { url, body }, response: { cut: true, events: [{ data: { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }] } }] } }]));
    writeFileSync(join(src, 'retry.json'), JSON.stringify([{ request: { url, body: { ...body, stream: false } }, response: { status: 429, body: { error: { message: 'Rate limit' } } } }]));
    const tape = join(dir, 'out.tape');
    const r = spawnSync(process.execPath, [CLI, 'import', src, tape], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(join(src, 'stream.json'));
    expect(r.stderr).toContain(`tapedeck add ${tape}`);
    expect(r.stderr).toMatch(/written by hand/);
    expect(existsSync(tape)).toBe(false);
  });
});
