// The run summary's list of misses: the same miss made again (a retried test, a request sent
// twice) is one line with its count, in the order misses first came; different misses stay apart.
import { describe, expect, it } from 'vitest';
import { formatSummary, type MissReport, type RunSummary } from '../../src/testing/run-report.ts';

const miss = (test: string, diagnosis: string): MissReport => ({ test, route: 'POST /v1/chat/completions', diagnosis, command: `TAPEDECK_MODE=update npx mocha --grep '^${test}$'` });

function summary(misses: MissReport[]): RunSummary {
  return { tapes: [], tapesWritten: 0, added: 0, hits: 0, misses, unused: 0 };
}

describe('the misses of a run summary', () => {
  it('counts a miss made again on one line, and keeps different ones apart', () => {
    const retried = miss('chat retried', 'message 0 (user) text differs from the closest recording');
    const text = formatSummary(summary([retried, miss('chat other', 'the model differs'), { ...retried }, { ...retried }, miss('chat retried', 'the model differs')]));
    const list = text.slice(text.indexOf('Misses:')).split('\n');
    expect(list.slice(1)).toEqual([
      '  chat retried: POST /v1/chat/completions: message 0 (user) text differs from the closest recording (3 times)',
      `    record it: TAPEDECK_MODE=update npx mocha --grep '^chat retried$'`,
      '  chat other: POST /v1/chat/completions: the model differs',
      `    record it: TAPEDECK_MODE=update npx mocha --grep '^chat other$'`,
      '  chat retried: POST /v1/chat/completions: the model differs',
      `    record it: TAPEDECK_MODE=update npx mocha --grep '^chat retried$'`,
    ]);
    // The headline counts every miss.
    expect(text).toContain('5 misses');
  });

  it('lists twenty kinds of miss, then says how many more kinds', () => {
    const many = Array.from({ length: 23 }, (_, i) => miss(`t${i}`, 'the model differs'));
    const text = formatSummary(summary([...many, ...many]));
    expect(text).toContain('46 misses');
    expect(text).toContain('  t19: POST /v1/chat/completions: the model differs (2 times)');
    expect(text).not.toContain('  t20: ');
    expect(text).toContain('  ... and 3 more');
  });
});
