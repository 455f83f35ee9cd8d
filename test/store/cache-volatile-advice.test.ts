// A ReplayCache miss whose only difference is today's date as JavaScript prints it advised only
// to re-record, which records tomorrow's date and misses again. It now names the built-in
// pattern as a ReplayCache.open option, and opening the cache with it replays the recording.
import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { VOLATILE_PATTERNS } from '../../src/providers/volatile-text.ts';
import { rejectionOf } from '../helpers.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('cache-volatile-advice');
const ask = (today: string) => ({ model: 'gpt-4o', messages: [{ role: 'system', content: `Today is ${today}.` }, { role: 'user', content: 'What is on?' }] });
const answer = { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Nothing.' }, finish_reason: 'stop' }] };

describe('ReplayCache: a date that changes every run', () => {
  it('names volatileText with the pattern, as a ReplayCache.open option; opened with it, the recording answers', async () => {
    const file = fresh();
    const rec = await ReplayCache.open(file, { mode: 'record' });
    await rec.put(ask('Mon Dec 07 2026'), answer);
    await rec.close();

    const play = await ReplayCache.open(file, { mode: 'replay' });
    const miss = await rejectionOf(play.get(ask('Tue Dec 08 2026')));
    await play.close();
    expect(miss.code).toBe('E_MISS');
    const option = 'volatileText: [VOLATILE_PATTERNS.dateString] (ReplayCache.open option)';
    expect(miss.message).toContain(option);
    expect(miss.details.fix).toContain(option);
    expect((miss.details.fixes as string[])[0]).toContain(option);

    const fixed = await ReplayCache.open(file, { mode: 'replay', volatileText: [VOLATILE_PATTERNS.dateString] });
    expect(await fixed.get(ask('Tue Dec 08 2026'))).toEqual(answer);
    await fixed.close();
  });
});
