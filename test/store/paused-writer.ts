// The paused-writer case, shared by the tape and the Redis suites: a record-mode writer (a child
// process) has an acknowledged recording and is then paused with SIGSTOP for several times its
// writer lease; meanwhile another record run records the same request and closes. Resumed, the
// paused writer closes too, and its acknowledged recording is still in the store: a writer that
// is paused (a debugger, a frozen container, a blocked event loop) is not taken for one that
// ended. A writer that was killed is, and its recording is replaced as before.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import type { RecordBackend } from '../../src/store/backend.ts';
import { isHttpRecord, type HttpRecord } from '../../src/store/records.ts';
import { startUpstream } from '../proxy/fake-upstream.ts';

const CHILD = join(import.meta.dirname, 'paused-writer-child.mjs');
const DIST = join(import.meta.dirname, '../../dist');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const LEASE_MS = 600;

export interface PausedWriterStore {
  /** What the child opens: `tape` with a path, `redis` with a URL and namespace. */
  child: { store: 'tape' | 'redis'; target: string; namespace?: string };
  /** A backend on the same store for this process, with the same short lease. */
  backend(): RecordBackend;
  /** The answers stored, in order. */
  answers(): Promise<string[]>;
}

function startWriter(cfg: object) {
  const child = spawn(process.execPath, [CHILD, DIST, JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const line = (n: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const lines = out.split('\n');
        if (lines.length > n) resolve(lines[n - 1]!);
      };
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        check();
      });
      child.once('exit', (code) => reject(new Error(`writer exited with ${code}: ${err}`)));
      check();
    });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, line, exited };
}

/** Bodies of the HTTP records' answers, in stored order. */
export function answerTexts(values: unknown[]): string[] {
  return values.filter(isHttpRecord).map((r) => new TextDecoder().decode((r as HttpRecord).response.body));
}

/**
 * Runs the case on `store`: `pause` true SIGSTOPs the first writer past its lease; false kills
 * it (SIGKILL) instead, where its recording must be replaced as before.
 */
export async function pausedWriterCase(store: PausedWriterStore, how: 'pause' | 'kill'): Promise<void> {
  const up = await startUpstream();
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `paused writer ${how}` }] });
  const a = startWriter({ ...store.child, leaseMs: LEASE_MS, upstream: up.url, body });
  try {
    const first = JSON.parse(await a.line(1)) as { status: number; recorded: string | null; text: string };
    expect(first.status).toBe(200);
    expect(first.recorded).toBe('true');
    if (how === 'pause') process.kill(a.child.pid!, 'SIGSTOP');
    else process.kill(a.child.pid!, 'SIGKILL');
    // Several leases: a writer judged by its lease alone is long taken for ended.
    await sleep(LEASE_MS * 4);
    const b = createFetch({ store: store.backend(), mode: 'record' });
    const second = await b(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const secondText = await second.text();
    expect(second.headers.get('x-tapedeck-recorded')).toBe('true');
    await b.close();
    if (how === 'pause') {
      process.kill(a.child.pid!, 'SIGCONT');
      a.child.stdin.end('close\n');
      expect(await a.line(2)).toBe('closed');
      expect(await a.exited).toBe(0);
      // Both acknowledged answers are kept, in the order they were acknowledged.
      expect(await store.answers()).toEqual([first.text, secondText]);
    } else {
      await a.exited;
      // The killed run had ended: the later record run replaced its recording.
      expect(await store.answers()).toEqual([secondText]);
    }
  } finally {
    if (a.child.exitCode === null && a.child.signalCode === null) {
      process.kill(a.child.pid!, 'SIGCONT');
      a.child.kill('SIGKILL');
    }
    await up.close();
  }
}
