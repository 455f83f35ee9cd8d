// The vitest plugin's run summary after a run that recorded: how the new recordings differ from
// the tapes committed in git, one line per class, and the tapedeck diff command. examples/vitest
// run by vitest itself in a git work tree; its fake API numbers its calls, so a second recording
// of the same requests changes the answers' text (and only the ids of a tool call).
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleProject, type ExampleProject } from './example-project.ts';

let p: ExampleProject;
beforeAll(async () => {
  p = await exampleProject();
  execFileSync('git', ['init', '-q'], { cwd: p.dir });
});
afterAll(async () => {
  await p?.close();
});

const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.org', '-c', 'user.name=t', ...args], { cwd: p.dir });
const driftLines = (out: string) => {
  const lines = out.split('\n');
  const i = lines.findIndex((l) => l.startsWith('tapedeck: the recordings this run wrote'));
  if (i < 0) return undefined;
  const end = lines.findIndex((l, k) => k > i && l.startsWith('  detail: '));
  return lines.slice(i, end + 1);
};

describe('the run summary says how new recordings differ from the committed ones', { timeout: 180_000 }, () => {
  it('new tapes: every recording is added', async () => {
    const r = await p.vitest(['test/openai.test.ts', '--mode', 'record']);
    expect(r.code, r.out).toBe(0);
    expect(driftLines(r.out)).toEqual([
      'tapedeck: the recordings this run wrote, against git HEAD (3 tapes):',
      '  added          3  new requests, not in the committed tapes',
      '  detail: npx llm-tapedeck diff test/__tapes__/openai.test/openai-sdk',
    ]);
  });

  it('re-recorded after a commit: one line per class, and the command', async () => {
    git('add', '-A');
    git('commit', '-qm', 'tapes');
    const r = await p.vitest(['test/openai.test.ts', '--mode', 'record']);
    expect(r.code, r.out).toBe(0);
    expect(driftLines(r.out)).toEqual([
      'tapedeck: the recordings this run wrote, against git HEAD (3 tapes):',
      "  text           2  the answers' text changed",
      '  benign         1  ids, timestamps, usage: noise only',
      '  detail: npx llm-tapedeck diff test/__tapes__/openai.test/openai-sdk',
    ]);
    // A replay run writes nothing: no drift lines.
    const replay = await p.vitest(['test/openai.test.ts']);
    expect(replay.code, replay.out).toBe(0);
    expect(driftLines(replay.out)).toBeUndefined();
  });
});
