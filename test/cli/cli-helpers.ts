// What the CLI suites share: a chat exchange record for the tapes they write, a run of the CLI
// that does not block this process, and one whose reader closes the pipe after the first bytes
// (`| head`).
import { spawn } from 'node:child_process';

/**
 * An HTTP record of a chat question `question <i>` and its answer (by default `{"answer":<i>}`),
 * keyed by `i` padded to 64 digits, as the tape writer takes it.
 */
export function chatRecord(i: number, answer: Uint8Array = new TextEncoder().encode(`{"answer":${i}}`)) {
  return {
    v: 1,
    kind: 'http',
    match: 'llm',
    route: 'POST /v1/chat/completions',
    key: String(i).padStart(64, '0'),
    request: { method: 'POST', url: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `question ${i}` }] } },
    response: { status: 200, headers: { 'content-type': 'application/json' }, body: answer },
    recordedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1,
  };
}

/** Runs the CLI at `bin` with a reader that stops after the first bytes: its exit status and stderr. */
export async function intoClosedPipe(bin: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [bin, ...args], { cwd: opts.cwd, ...(opts.env ? { env: opts.env } : {}), stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout.once('data', () => child.stdout.destroy());
  const status = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  return { status, stderr };
}

/**
 * Runs the CLI at `bin` without blocking this process (for commands that call a fake provider or
 * host living in it): its exit status (null when a signal ended it), stdout and stderr.
 */
export function runCli(bin: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: opts.cwd, env: opts.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}
