// The run's drift lines are headed "the recordings this run wrote", but compared the whole tapes:
// after an update run that recorded a changed prompt beside the old prompt's recording (left
// on the tape, unused), they said "identical 1" (the old recording, which the run did not write)
// and "added 1". Now they count the recordings the run wrote (the new one, paired with the
// committed recording of the request it changed), and say to prune first for `tapedeck diff` to
// compare the same. A record run that replaced its recordings in place says no more than before.
// Through openTestTape, a git work tree and the real openai SDK.
import OpenAI from 'openai';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestTape } from '../../src/testing/session.ts';
import { driftAgainstCommitted, formatCommittedDrift } from '../../src/drift/committed.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('drift-lines-written');

async function ask(root: string, question: string, env: Record<string, string>): Promise<void> {
  const t = openTestTape({ tape: join(root, 'tapes/chat.tape'), test: 'asks', env });
  try {
    const c = new OpenAI({ baseURL: `${suite.upstream.url}/v1`, apiKey: 'sk-test', maxRetries: 0, fetch: t.fetch });
    await c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] });
  } finally {
    await t.close();
  }
}

const git = (root: string, ...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.org', '-c', 'user.name=t', ...args], { cwd: root });

describe('the drift lines of a run', () => {
  it('count the recordings the run wrote, and say to prune first when old versions stay on the tape', async () => {
    const root = join(suite.dir, 'update');
    mkdirSync(root, { recursive: true });
    git(root, 'init', '-q');
    await ask(root, 'What is the capital of France?', { TAPEDECK_MODE: 'record' });
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'tapes');
    // The prompt changed: update mode records it, the old recording stays.
    await ask(root, 'What is the capital of Germany?', { TAPEDECK_MODE: 'update' });
    const d = await driftAgainstCommitted([join(root, 'tapes/chat.tape')], { root });
    const lines = formatCommittedDrift(d!, { pruneCommand: 'TAPEDECK_PRUNE=1 npx vitest run' });
    expect(lines).toContain('the recordings this run wrote');
    expect(lines).not.toContain('identical');
    expect(lines).toMatch(/text +1/);
    expect(lines).toContain('prune first (TAPEDECK_PRUNE=1 npx vitest run)');
  });

  it('a record run that replaced its recordings says nothing of pruning', async () => {
    const root = join(suite.dir, 'record');
    mkdirSync(root, { recursive: true });
    git(root, 'init', '-q');
    await ask(root, 'Hello', { TAPEDECK_MODE: 'record' });
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'tapes');
    await ask(root, 'Hello', { TAPEDECK_MODE: 'record' });
    const lines = formatCommittedDrift((await driftAgainstCommitted([join(root, 'tapes/chat.tape')], { root }))!, { pruneCommand: 'TAPEDECK_PRUNE=1 npx vitest run' });
    expect(lines).toMatch(/text +1/);
    expect(lines).not.toContain('prune first');
    expect(lines).not.toContain('added');
  });
});
