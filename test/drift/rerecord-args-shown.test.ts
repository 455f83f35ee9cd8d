// rerecord's credential-bearing options echoed the value they refused: `--header
// "x-api-key=$ANTHROPIC_API_KEY"` (a `=` for the `:`) printed the whole key, and an --upstream or
// --hostless-upstream without its scheme printed its password or `?api_key=`, into the CI log
// that runs the command. The errors now name what was wrong without the secret.
import { describe, expect, it, vi } from 'vitest';
import { credentialsFrom } from '../../src/drift/live-credentials.ts';
import { rerecordCommand } from '../../src/drift/cli.ts';
import { TapedeckError } from '../../src/errors.ts';

const KEY = `sk-ant-api03-${'Qm9vZ2xlRXBoZW1lcmFs'.repeat(4)}AA`;
const PASSWORD = 'Zk3xQ9vLmP2wR7tY';

function refusal(run: () => unknown): TapedeckError {
  try {
    run();
  } catch (e) {
    return e as TapedeckError;
  }
  throw new Error('accepted');
}

/** What rerecordCommand said about its arguments: its error, or what it printed. */
async function said(args: string[]): Promise<string> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => (out.push(String(s)), true));
  try {
    await rerecordCommand(['tapes/never-read.tape', '--yes', ...args], () => {
      throw new Error('no recorder: the arguments are refused first');
    }, {});
  } catch (e) {
    out.push(`${(e as TapedeckError).code} ${(e as Error).message} ${JSON.stringify((e as TapedeckError).details ?? {})}`);
  } finally {
    spy.mockRestore();
  }
  return out.join('');
}

describe('rerecord: a refused credential option is named without its secret', () => {
  it('--header without ":" names the header, never its value', () => {
    for (const h of [`x-api-key=${KEY}`, `Authorization Bearer ${KEY}`]) {
      const e = refusal(() => credentialsFrom({}, [h], false));
      expect(e.code).toBe('E_ARG');
      expect(e.message).not.toContain(KEY.slice(13, 33));
      expect(e.message).toContain(`"${h.slice(0, h.search(/[= ]/) + 1)}…"`);
      expect(e.message).toContain(`${h.length} characters`);
    }
  });

  it('--upstream and --hostless-upstream without a scheme: password and secret query masked', async () => {
    const up = await said(['--upstream', `admin:${PASSWORD}@gw.example`]);
    expect(up).toContain('E_ARG');
    expect(up).toContain('"admin:***@gw.example"');
    const hostless = await said(['--hostless-upstream', `gw.example/?api_key=${PASSWORD}`]);
    expect(hostless).toContain('E_ARG');
    expect(hostless).toContain('--hostless-upstream');
    const both = await said(['--upstream', `https://admin:${PASSWORD}@gw.example`, '--hostless-upstream', `https://gw.example/?api_key=${PASSWORD}`]);
    expect(both).toContain('both given');
    expect(both).toContain('https://admin:***@gw.example');
    for (const text of [up, hostless, both]) expect(text).not.toContain(PASSWORD);
  });
});
