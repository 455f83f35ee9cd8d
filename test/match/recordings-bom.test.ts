// A JSON recording saved with a UTF-8 byte order mark (Notepad, other Windows editors) was
// skipped by loadRecordingsDir ("Invalid JSON at byte 0"), and `tapedeck import <dir>` exited 0:
// when it was the first of two recordings of one request, the second answer went to the first
// call. The mark is now skipped, as every command that reads JSON skips it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createMatcher } from '../../src/match/matcher.ts';
import { loadRecordingsDir } from '../../src/match/recordings.ts';
import { importRecordingsDir } from '../../src/store/migrate.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rec-bom-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'same' }] };
const recording = (answer: string) => JSON.stringify({ request, response: { choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }] } });

function recordingsDir(name: string): string {
  const d = join(dir, name);
  rmSync(d, { recursive: true, force: true });
  mkdirSync(d);
  writeFileSync(join(d, 'a.json'), `\ufeff${recording('first')}`);
  writeFileSync(join(d, 'b.json'), recording('second'));
  return d;
}

describe('a JSON recording that starts with a byte order mark', () => {
  it('is loaded, in its place: a repeated request gets its answers in order', () => {
    const warnings: string[] = [];
    const recs = loadRecordingsDir(recordingsDir('load'), { onWarning: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
    expect(recs.map((r) => r.source)).toEqual(['a.json', 'b.json']);
    const m = createMatcher({ recordings: recs, mode: 'exact' });
    const answer = (r: { recording: { response: unknown } }) => (r.recording.response as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    expect(answer(m.match(request))).toBe('first');
    expect(answer(m.match(request))).toBe('second');
  });

  it('a syntax error after the mark is still named at the file\'s own byte', () => {
    const d = join(dir, 'broken');
    mkdirSync(d);
    writeFileSync(join(d, 'x.json'), '\ufeff{"request": }');
    const warnings: string[] = [];
    expect(loadRecordingsDir(d, { onWarning: (m) => warnings.push(m) })).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/byte 15 /);
  });

  it('tapedeck import <dir>: the tape replays "first" to the first call', async () => {
    const tape = join(dir, 'dir.tape');
    const r = await importRecordingsDir(recordingsDir('import'), tape, { onWarning: () => {} });
    expect(r.records).toBe(2);
    const cache = await ReplayCache.open(tape);
    try {
      const first = (await cache.get(request)) as { choices: { message: { content: string } }[] };
      expect(first.choices[0]!.message.content).toBe('first');
    } finally {
      await cache.close();
    }
  });
});
