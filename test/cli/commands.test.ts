// The command line's fixes as a newcomer meets them: each command's own --help, `tree` on a tape
// that also holds an embeddings call, `inspect` on a cut tape, `serve` without its arguments,
// and `import` given a tape where the JSON goes.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_HELP } from '../../src/cli-help.ts';
import { createFetch } from '../../src/proxy/fetch.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-commands-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' } });

const tape = join(dir, 'mixed.tape');
beforeAll(async () => {
  // A chat and an embeddings call, recorded as createFetch records them.
  const upstream = (async (input: RequestInfo | URL) => {
    const embeddings = String(input).endsWith('/embeddings');
    const body = embeddings
      ? { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'text-embedding-3-small' }
      : { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Paris.' }, finish_reason: 'stop' }] };
    return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {} });
  try {
    const post = (path: string, body: unknown) => f(`https://api.openai.com/v1/${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }).then((r) => r.text());
    await post('embeddings', { model: 'text-embedding-3-small', input: 'hello' });
    await post('chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Capital of France?' }] });
  } finally {
    await f.close();
  }
});

describe('tapedeck <command> --help', () => {
  const own: Record<string, RegExp> = { serve: /^Usage: tapedeck serve /, tree: /^Usage: tapedeck tree /, push: /^Usage: tapedeck push /, pull: /^Usage: tapedeck pull /, mcp: /^Usage: tapedeck mcp /, add: /^Usage: tapedeck add /, init: /^Usage: tapedeck init /, diff: /^Usage: tapedeck diff /, stats: /^Usage: tapedeck stats /, rerecord: /^Usage: tapedeck rerecord / };
  for (const cmd of [...Object.keys(COMMAND_HELP).filter((c) => c !== 'help'), ...Object.keys(own)]) {
    it(`${cmd} --help prints that command's help, not the list of commands`, () => {
      for (const args of [[cmd, '--help'], [cmd, '-h'], ['help', cmd]]) {
        const r = cli(...args);
        expect(r.status, args.join(' ')).toBe(0);
        expect(r.stdout, args.join(' ')).toMatch(own[cmd] ?? new RegExp(`^Usage: tapedeck ${cmd}\\b`));
        expect(r.stdout).not.toContain('Commands:');
      }
    });
  }
  it('help on a topic that is no command is a usage error naming the commands (and the command a feature is part of)', () => {
    const r = cli('help', 'realtime');
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/E_USAGE There is no command "realtime" to show help for\./);
    expect(r.stderr).toMatch(/tapedeck help serve; tapedeck help <command>, the command one of: .*\bimport\b.*\bserve\b/);
    expect(cli('help', 'nosuch').status).toBe(2);
  });

  it('the list of commands names every command that has its own help', () => {
    const r = cli('--help');
    for (const cmd of Object.keys(COMMAND_HELP)) expect(r.stdout).toMatch(new RegExp(`^  ${cmd}\\b`, 'm'));
  });
});

describe('tree', () => {
  it('shows the conversation of a tape that also holds an embeddings call, says what it left out, exits 0', () => {
    const r = cli('tree', tape);
    expect(r.stderr).toBe('1 record not shown: embeddings call, not conversation (records 0)\n');
    expect(r.stdout).toContain('Capital of France?');
    expect(r.stdout).toContain('Paris.');
    expect(r.status).toBe(0);
  });
});

describe('inspect', () => {
  it('lists the intact records of a cut tape, reports the damage and exits 1', () => {
    const bytes = readFileSync(tape);
    const cut = join(dir, 'cut.tape');
    writeFileSync(cut, bytes.subarray(0, bytes.length - 20));
    const r = cli('inspect', cut);
    expect(r.stdout).toMatch(/^0\t/m);
    expect(r.stdout).toMatch(/E_TAPE_TORN_TAIL at byte \d+/);
    expect(r.status).toBe(1);
    expect(cli('inspect', tape).status).toBe(0);
  });

  it('shows the input of a call that has no messages (embeddings, speech) where the first user message goes', async () => {
    const t = join(dir, 'inputs.tape');
    const upstream = (async () => new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const f = createFetch({ tape: t, mode: 'record', fetch: upstream, onWarning: () => {} });
    try {
      const post = (path: string, body: unknown) => f(`https://api.openai.com/v1/${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }).then((r) => r.text());
      await post('embeddings', { model: 'text-embedding-3-small', input: 'hello world' });
      await post('embeddings', { model: 'text-embedding-3-small', input: ['first text', 'second', 'third'] });
      await post('audio/speech', { model: 'tts-1', voice: 'alloy', input: 'Say hi' });
    } finally {
      await f.close();
    }
    const r = cli('inspect', t);
    expect(r.status).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => /^\d+\t/.test(l)).map((l) => l.split('\t'));
    expect(rows.map((c) => c[8])).toEqual(['hello world', 'first text (+2 more)', 'Say hi']);
  });

  it('names the model and first user message of Gemini and Bedrock calls, which put the model in the URL', async () => {
    const t = join(dir, 'routes.tape');
    const upstream = (async () => new Response('{"ok":true}', { headers: { 'content-type': 'application/json' } })) as typeof fetch;
    const f = createFetch({ tape: t, mode: 'record', fetch: upstream, onWarning: () => {} });
    try {
      const post = (url: string, body: unknown) => f(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }).then((r) => r.text());
      await post('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'Hi gemini' }] }] });
      await post('https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse', { messages: [{ role: 'user', content: [{ text: 'Hi bedrock' }] }] });
    } finally {
      await f.close();
    }
    const r = cli('inspect', t);
    expect(r.status).toBe(0);
    const rows = r.stdout.split('\n').filter((l) => /^\d+\t/.test(l)).map((l) => l.split('\t'));
    expect(rows.map((c) => [c[7], c[8]])).toEqual([
      ['gemini-2.5-flash', 'Hi gemini'],
      ['anthropic.claude-3-haiku-20240307-v1:0', 'Hi bedrock'],
    ]);
  });
});

describe('serve without what it needs', () => {
  it.each([
    [[], /^tapedeck: E_ARG Mode replay needs a tape path or a store\.\nhint: tapedeck serve --tape FILE, or tapedeck serve --store URL\n$/],
    [['--mode', 'record', '--tape', 'r.tape'], /^tapedeck: E_ARG Mode record needs an upstream URL\.\nhint: tapedeck serve --upstream URL\n$/],
  ])('tapedeck serve %j prints the error and a hint with the flag to add, exit 2', (args, expected) => {
    const r = cli('serve', ...args);
    expect(r.stderr).toMatch(expected);
    expect(r.status).toBe(2);
  });

  it.each(['record', 'update', 'once'])('--mode %s without --upstream leaves no tape or writer file behind', (mode) => {
    // An empty tape left here would be taken as recorded by the next `--mode once` run.
    const sub = mkdtempSync(join(dir, `no-upstream-${mode}-`));
    const r = cli('serve', '--mode', mode, '--tape', join(sub, 'r.tape'));
    expect(r.stderr).toMatch(new RegExp(`^tapedeck: E_ARG Mode ${mode} needs an upstream URL`));
    expect(r.status).toBe(2);
    expect(readdirSync(sub)).toEqual([]);
  });
});

describe('import with its arguments swapped', () => {
  it('says the input is a tape and how to call import and export, with no binary in the message', () => {
    const r = cli('import', tape, 'out.tape');
    expect(r.stderr).toBe(
      `tapedeck: E_IMPORT_FORMAT ${tape} is a tape, not JSON: import reads JSON and writes the tape given second; no tape written.\n` +
        `hint: tapedeck import <input.json> <out.tape> (input first); to turn this tape into JSON: tapedeck export ${tape} > tape.json\n`,
    );
    expect(r.status).toBe(1);
    expect(existsSync(join(dir, 'out.tape'))).toBe(false);
  });
  it('other binary input is named binary, not quoted', () => {
    // (gzip's magic is said as gzip-compressed data: test/cli/import-encoding-unnamed.test.ts)
    writeFileSync(join(dir, 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe, 0x00, 0x41]));
    const r = cli('import', 'blob.bin', 'out.tape');
    expect(r.stderr).toMatch(/^tapedeck: E_IMPORT_FORMAT blob\.bin is binary data, not a recording; no tape written\.\nhint: [^\n]+\n$/);
    expect(r.stderr).not.toMatch(/[\u0000-\u0008\ufffd]/);
    expect(r.status).toBe(1);
  });
});

describe('tapedeck export --help on the HAR', () => {
  // It said the HAR was for "Playwright's routeFromHAR and Polly.js"; Polly.js refuses it (its
  // persister loads only HAR files Polly wrote: "Recording with id ... is invalid"), as
  // docs/migrate.md says.
  it('names the tools that load it, and says Polly.js does not', () => {
    const help = cli('export', '--help').stdout;
    expect(help).toMatch(/Chrome devtools and Playwright's\s+routeFromHAR/);
    expect(help).toMatch(/not Polly\.js/);
    expect(help).not.toMatch(/routeFromHAR and Polly\.js/);
  });
});
