// A directory of nock.back fixtures (one JSON array of nock definitions per test) given to
// `tapedeck import`: it was taken for a directory of JSON recordings, and each file was said to
// lack "request" and "response", with nothing saying they are nock recordings to import one by
// one. Runs the built CLI (npm run build first).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-import-nock-dir-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

const definition = (content: string) => ({
  scope: 'https://api.openai.com:443',
  method: 'POST',
  path: '/v1/chat/completions',
  body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] },
  status: 200,
  response: { id: 'chatcmpl-1', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] },
  reqheaders: { 'content-type': 'application/json' },
});

describe('a directory of nock.back fixtures', () => {
  it('is E_IMPORT_FORMAT naming them as nock recordings, with the command that imports each', () => {
    const fixtures = join(dir, 'nock-fixtures');
    mkdirSync(fixtures);
    writeFileSync(join(fixtures, 'chat.json'), JSON.stringify([definition('Hi')]));
    writeFileSync(join(fixtures, 'other.json'), JSON.stringify([definition('Bye'), definition('Again')]));
    writeFileSync(join(fixtures, 'no-calls.json'), '[]');
    const r = cli('import', 'nock-fixtures', 'dir.tape');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^tapedeck: E_IMPORT_FORMAT nock-fixtures is a directory of 3 nock recordings \(nock-fixtures\/chat\.json, nock-fixtures\/no-calls\.json, nock-fixtures\/other\.json\), and import reads one file at a time; no tape written\.\n/);
    expect(r.stderr).toMatch(/\nhint: .*tapedeck import nock-fixtures\/chat\.json .*--from nock/);
    expect(r.stderr).not.toMatch(/expected an object with "request" and "response"/);
    expect(existsSync(join(dir, 'dir.tape'))).toBe(false);
  });
});
