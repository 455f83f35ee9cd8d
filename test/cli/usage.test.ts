// Usage mistakes are usage errors (exit 2) that name what was wrong, never dropped in silence: an
// argument too many, an option the command does not take, two options that contradict each
// other, a bad --chaos SPEC (it was exit 1). A misspelt command or option gets a "did you mean".
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendRecords, createTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-usage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, TAPEDECK_MODE: '' }, timeout: 20_000 });

beforeAll(async () => {
  await createTape(join(dir, 'a.tape'));
  await appendRecords(join(dir, 'a.tape'), [chatRecord(0)]);
});

/** One error line and one hint line. */
const ONE_LINE = /^tapedeck: (E_[A-Z_]+) ([^\n]+)\nhint: ([^\n]+)\n$/;

describe('usage errors exit 2 and say what was wrong', () => {
  it.each([
    { args: ['inspect', 'a.tape', 'extra'], code: 'E_USAGE', message: /"extra" is one argument too many/, hint: /tapedeck inspect / },
    { args: ['hash', 'a.json', 'b.json'], code: 'E_USAGE', message: /"b\.json" is one argument too many/, hint: /tapedeck hash / },
    { args: ['verify', 'a.tape', '--json'], code: 'E_USAGE', message: /verify does not take --json/, hint: /tapedeck verify --help/ },
    { args: ['inspect', 'a.tape', '--force'], code: 'E_USAGE', message: /inspect does not take --force/, hint: /tapedeck inspect --help/ },
    { args: ['export', 'a.tape', '--har', '--review'], code: 'E_USAGE', message: /--har .* --review .*not both/, hint: /--review, or tapedeck export a(pp)?\.tape --har/ },
    { args: ['inspct', 'a.tape'], code: 'E_USAGE', message: /Unknown command "inspct"/, hint: /Did you mean tapedeck inspect\?/ },
    { args: ['proxy', '--tape', 'a.tape'], code: 'E_USAGE', message: /Unknown command "proxy"/, hint: /Did you mean tapedeck serve\?/ },
    { args: ['dump', 'a.tape'], code: 'E_USAGE', message: /Unknown command "dump"/, hint: /Did you mean tapedeck export\?/ },
    { args: ['--versoin'], code: 'E_USAGE', message: /Unknown option --versoin/, hint: /Did you mean --version\?/ },
    { args: ['export', 'a.tape', '--reveiw'], code: 'E_USAGE', message: /Unknown option --reveiw/, hint: /Did you mean --review\?/ },
    { args: ['serve', '--tape', 'a.tape', '--port', '0', '--chaos', '430:0.5'], code: 'E_CHAOS_SPEC', message: /430/, hint: /./ },
  ].map((c) => ({ ...c, line: c.args.join(' ') })))('tapedeck $line', ({ args, code, message, hint }) => {
    const r = cli(...args);
    expect(r.stderr).toMatch(ONE_LINE);
    const [, gotCode, gotMessage, gotHint] = ONE_LINE.exec(r.stderr)!;
    expect(gotCode).toBe(code);
    expect(gotMessage).toMatch(message);
    expect(gotHint).toMatch(hint);
    expect(r.stdout).toBe('');
    expect(r.status).toBe(2);
  });

  it('what the commands do take still works', () => {
    expect(cli('inspect', 'a.tape').status).toBe(0);
    expect(cli('export', 'a.tape', '--json', '--review').status).toBe(0);
    expect(cli('export', 'a.tape', '--har', '--origin', 'https://api.openai.com').status).toBe(0);
    expect(cli('inspect', 'a.tape', '--help').status).toBe(0);
    expect(cli('verify', 'a.tape', '--debug').status).toBe(0);
    expect(cli('--version').status).toBe(0);
  });
});

describe('the commands with parsers of their own say a misspelt option the same way', () => {
  it.each([
    { args: ['tree', 'a.tape', '--colapse', '3'], near: '--collapse' },
    { args: ['diff', 'a.tape', 'a.tape', '--fial-on', 'text'], near: '--fail-on' },
    { args: ['stats', 'a.tape', '--formt', 'json'], near: '--format' },
    { args: ['rerecord', 'a.tape', '--upstram', 'http://127.0.0.1:9'], near: '--upstream' },
    { args: ['serve', '--tape', 'a.tape', '--hots', '127.0.0.1'], near: '--host' },
    { args: ['mcp', '--tpe', 'a.tape', '--', 'node'], near: '--tape' },
    { args: ['add', 'a.tape', 'x.json', '--ignore-ar', 'seed'], near: '--ignore-arg' },
    { args: ['push', 'a.tape', 'redis://127.0.0.1:1', '--namspace', 'n'], near: '--namespace' },
    { args: ['init', '--textconvv', 'x'], near: '--textconv' },
    { args: ['scan', 'a.tape', '--stagd'], near: '--staged' },
  ].map((c) => ({ ...c, line: c.args.join(' ') })))('tapedeck $line', ({ args, near }) => {
    const r = cli(...args);
    expect(r.stderr).toMatch(ONE_LINE);
    const [, , message, hint] = ONE_LINE.exec(r.stderr)!;
    const flag = args.find((a) => a.startsWith('--') && a !== '--' && a !== '--tape')!;
    // The option as given, without parseArgs' advice about positionals that start with a dash.
    expect(message).toMatch(new RegExp(`Unknown option ${flag}\\.$`));
    expect(hint).toContain(`Did you mean ${near}? `);
    expect(r.stdout).toBe('');
    expect(r.status).toBeGreaterThan(0);
  });
});
