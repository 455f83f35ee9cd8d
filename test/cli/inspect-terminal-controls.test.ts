// `tapedeck inspect` printed a recorded prompt's terminal escapes (OSC title, screen clear) and
// bidi overrides raw: `inspect | head` on a terminal ran them. They are shown as escapes now.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-inspect-controls-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tapedeck inspect and recorded terminal controls', () => {
  it('shows ESC, BEL, C1 controls and bidi overrides as escapes', async () => {
    const tape = join(dir, 'esc.tape');
    const rec = chatRecord(1);
    rec.request.body = { model: 'gpt-4o\u202e', messages: [{ role: 'user', content: 'summarize this page: \x1b]0;PWNED-title\x07\x1b[2Jcleared \u202eevil.exe \x9b31m' }] };
    await createTape(tape, { salt: null });
    await appendRecords(tape, [rec]);
    const r = spawnSync(process.execPath, [CLI, 'inspect', tape], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.includes('summarize'));
    expect(row).toBeDefined();
    // Tabs and line feeds are the listing's own structure; nothing else of these reaches the terminal.
    expect(r.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
    expect(row).toContain('PWNED-title');
    expect(row).toContain('evil.exe');
  });
});
