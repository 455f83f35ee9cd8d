// `tapedeck hash` (canonical, paths, key) with no file reads stdin; run at a terminal, it waited
// for JSON without a word and looked hung. With no file and a terminal on stdin it now says what
// it needs (E_USAGE, exit 2) before reading anything; `-` still reads the terminal on purpose,
// saying first that it does and how to end the input. A real pseudo-terminal (python3's pty).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashJSON } from '../../src/index.ts';

const bin = join(import.meta.dirname, '../../dist/cli.js');

// Runs argv[2:] on a new pseudo-terminal, types argv[1] into it (when not empty), and prints what
// the terminal showed and how the program ended, as JSON. A program still waiting after 20 s is
// stopped and reported with status null.
const RUN_ON_PTY = `
import json, os, pty, select, sys, time
typed, argv = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
if typed:
    os.write(fd, typed.encode())
out, deadline, status = b'', time.time() + 20, None
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    chunk = None
    if r:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            chunk = b''
        out += chunk
        if chunk:
            continue
    done, st = os.waitpid(pid, os.WNOHANG)
    if done:
        status = os.waitstatus_to_exitcode(st)
        break
    if chunk == b'':
        time.sleep(0.05)  # the terminal is closed: the program is ending
if status is None:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
try:
    while True:
        r, _, _ = select.select([fd], [], [], 0.1)
        if not r:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        out += chunk
except OSError:
    pass
print(json.dumps({'status': status, 'out': out.decode('utf-8', 'replace')}))
`;

function onTerminal(args: string[], typed = ''): { status: number | null; out: string } {
  const r = spawnSync('python3', ['-c', RUN_ON_PTY, typed, process.execPath, bin, ...args], { encoding: 'utf8', timeout: 40_000, env: { ...process.env, TAPEDECK_MODE: '' } });
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout) as { status: number | null; out: string };
}

const python = spawnSync('python3', ['-c', 'import pty']).status === 0;
// Without python3 the suite says so in one line; in CI (.ci/run installs python3) it fails instead.
if (!python) {
  if (process.env.CI) throw new Error('python3 (with its pty module) is needed for the terminal suite: apt-get install python3');
  console.log('[terminal suite skipped] install python3 to run it (apt-get install python3)');
}

describe.skipIf(!existsSync(bin) || !python)('a core command with a terminal on stdin', () => {
  for (const cmd of ['hash', 'canonical', 'paths', 'key']) {
    it(`tapedeck ${cmd} with no file says what it reads instead of waiting`, () => {
      const r = onTerminal([cmd]);
      expect(r.status).toBe(2);
      expect(r.out).toContain(`tapedeck: E_USAGE tapedeck ${cmd} reads JSON from a file or a pipe, and stdin is a terminal.`);
      expect(r.out).toContain(`tapedeck ${cmd} request.json`);
      expect(r.out).toContain(`tapedeck ${cmd} -`);
    });
  }

  it('tapedeck hash - reads what is typed, saying first how to end it', () => {
    const r = onTerminal(['hash', '-'], '{"b": 2, "a": 1}\n\x04');
    expect(r.status).toBe(0);
    expect(r.out).toContain('tapedeck: reading JSON from the terminal; end it with Ctrl-D.');
    expect(r.out).toContain(hashJSON('{"a":1,"b":2}'));
  });

  it('tapedeck import - <tape> says so too before it reads the terminal', () => {
    const r = onTerminal(['import', '-', join(tmpdir(), `tapedeck-tty-${process.pid}.tape`)], 'not json\n\x04');
    expect(r.out).toContain('tapedeck: reading JSON from the terminal; end it with Ctrl-D.');
    expect(r.status).not.toBe(0);
  });
});
