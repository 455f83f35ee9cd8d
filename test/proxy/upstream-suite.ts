// The set-up most proxy and createFetch tests share: a fake provider for the file and a
// temporary folder for its tapes, both gone after the file's tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startUpstream, type Upstream } from './fake-upstream.ts';

export interface UpstreamSuite {
  /** The temporary folder. */
  readonly dir: string;
  /** The fake provider (started before the file's first test). */
  readonly upstream: Upstream;
  /** A chat completion request with one user message, through `f`. */
  chat(f: typeof fetch, text: string): Promise<Response>;
}

/** Registers the fake provider and a temporary folder for the calling test file. */
export function upstreamSuite(name: string): UpstreamSuite {
  const dir = mkdtempSync(join(tmpdir(), `tapedeck-${name}-`));
  let upstream: Upstream | undefined;
  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const suite: UpstreamSuite = {
    dir,
    get upstream() {
      if (!upstream) throw new Error('the fake provider starts in beforeAll');
      return upstream;
    },
    chat: (f, text) =>
      f(`${suite.upstream.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] }),
      }),
  };
  return suite;
}
