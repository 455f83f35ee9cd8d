// `tapedeck add` of a fixed answer: added again, the tape's old answer is still served first and
// stderr says so; with --replace the fixed one is served. The same file added twice adds nothing
// the second time. Runs the built CLI.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { HttpRecord } from '../../src/store/records.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-readd-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const add = (...args: string[]) => spawnSync(process.execPath, [CLI, 'add', ...args], { encoding: 'utf8' });

const written = (content: string) => ({
  request: { url: 'https://api.openai.com/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is the policy?' }] } },
  response: { body: { id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }] } },
});
const texts = async (tape: string) => (await readTape(tape)).records.map((r) => JSON.parse(new TextDecoder().decode((r.value as HttpRecord).response.body)).choices[0].message.content as string);

describe('tapedeck add of a recording the tape holds', () => {
  it('the same file twice adds nothing the second time; a fixed answer is said, and --replace puts it in place of the old one', async () => {
    const tape = join(dir, 'readd.tape');
    const file = join(dir, 'answer.json');
    writeFileSync(file, JSON.stringify(written('OLD: wrong policy text')));
    expect(add(tape, file).status).toBe(0);
    const again = add(tape, file);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('added 0 recordings');
    expect(await texts(tape)).toEqual(['OLD: wrong policy text']);

    writeFileSync(file, JSON.stringify(written('NEW: right policy text')));
    const fixed = add(tape, file);
    expect(fixed.status).toBe(0);
    expect(fixed.stderr).toContain('--replace');
    expect(await texts(tape)).toEqual(['OLD: wrong policy text', 'NEW: right policy text']);

    const replaced = add(tape, file, '--replace');
    expect(replaced.stderr).toBe('');
    expect(replaced.status).toBe(0);
    expect(await texts(tape)).toEqual(['NEW: right policy text']);
  });
});
