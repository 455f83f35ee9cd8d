// A miss whose only difference from the closest recording changes on every run (today's date as
// JavaScript prints it in a prompt, a timestamp in a tool result) advised only to re-record, which
// records the next run's date and misses again; a hosted MCP tool's token, keyed by its mask,
// missed on every other machine with advice that needs the real token. The miss now also names
// the built-in VOLATILE_PATTERNS entry (volatileText) or the masked member (volatileKeys) that
// makes this recording answer, in the words of the entry point, and only when it would.
import { describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { createMatcher, type MatcherOptions, type Recording } from '../../src/match/matcher.ts';
import { VOLATILE_PATTERNS } from '../../src/providers/volatile-text.ts';

type Body = Record<string, unknown>;

const replaced = (text: string, ...names: (keyof typeof VOLATILE_PATTERNS)[]): string => names.reduce((t, n) => t.replace(VOLATILE_PATTERNS[n], '<v>'), text);

describe('VOLATILE_PATTERNS for dates and times as JavaScript prints them', () => {
  const day = new Date(Date.UTC(2026, 11, 8, 15, 56, 18));
  it('dateString: toDateString, toString and toUTCString, whole', () => {
    for (const s of [day.toDateString(), day.toString(), day.toUTCString()]) expect(replaced(`Today is ${s}.`, 'dateString')).toBe('Today is <v>.');
  });

  it.each(['en-US', 'en-GB', 'de-DE', 'fr-FR', 'es-ES', 'it-IT', 'pt-BR', 'ru-RU', 'pl-PL', 'nl-NL', 'tr-TR', 'cs-CZ', 'ja-JP', 'zh-CN', 'ko-KR', 'en-AU', 'hi-IN'])(
    'localeDate and localeTime: toLocaleDateString, toLocaleTimeString and toLocaleString in %s',
    (locale) => {
      for (const timeZone of ['UTC', 'Pacific/Kiritimati', 'America/Los_Angeles']) {
        expect(replaced(`Today is ${day.toLocaleDateString(locale, { timeZone })}.`, 'localeDate')).toBe('Today is <v>.');
        expect(replaced(`It is ${day.toLocaleTimeString(locale, { timeZone })} now`, 'localeTime')).toMatch(/^It is (\D+ )?<v> now$/);
        expect(replaced(day.toLocaleString(locale, { timeZone }), 'localeDate', 'localeTime')).not.toMatch(/\d/);
      }
    },
  );

  it('leave versions, addresses, fractions, clock times without seconds and partial dates alone', () => {
    const kept = [
      'version 1.2.3',
      'release v1.12.2026.1',
      'host 10.0.0.1 and 192.168.1.20',
      'calver 2026.12.8',
      'Order 12/8 shipped',
      '1/2 cup of flour',
      'meet at 12:30, or at 3:45 PM',
      'score 3:2, ratio 16:9',
      'call 555-12-2026',
      'ISBN 978-3-16-148410-0',
      'on 12/8/1850',
      'Mon Dec 08',
      'Mon Dec 2026',
      'every Sunday',
      'Mon Dec 08 20261',
      'id x1:23:45',
      'span 1:23:45:67',
    ];
    for (const s of kept) expect(replaced(s, 'dateString', 'localeDate', 'localeTime'), s).toBe(s);
  });
});

const chat = (system: string, user = 'When is my next meeting?'): Body => ({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: system }, { role: 'user', content: user }] });
const toolLoop = (result: string): Body => ({
  model: 'gpt-4.1-mini',
  tools: [{ type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } }],
  messages: [
    { role: 'user', content: 'what time is it?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'now', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: result },
  ],
});
const hosted = (authorization: string | undefined): Body => ({
  model: 'gpt-4.1-mini',
  input: 'list my repos',
  tools: [{ type: 'mcp', server_label: 'github', server_url: 'https://api.githubcopilot.com/mcp/', ...(authorization === undefined ? {} : { authorization }) }],
});

function missOf(recorded: Body, request: Body, opts: Partial<MatcherOptions> = {}): TapedeckError {
  const recordings: Recording[] = [{ request: recorded, response: { text: 'the recorded answer' } }];
  try {
    createMatcher({ mode: 'exact', recordings, ...opts }).match(request);
  } catch (e) {
    if (e instanceof TapedeckError && e.code === 'E_MISS') return e;
    throw e;
  }
  throw new Error('the request was answered where a miss was expected');
}

/** Whether the matcher with `opts` (the advice followed) answers the request with the recording. */
function answers(recorded: Body, request: Body, opts: Partial<MatcherOptions>): boolean {
  const recordings: Recording[] = [{ request: recorded, response: { text: 'the recorded answer' } }];
  return createMatcher({ mode: 'exact', recordings, ...opts }).match(request).index === 0;
}

describe('a miss whose only difference is volatile text names volatileText', () => {
  const yesterday = chat('You are a scheduler. Today is Mon Dec 07 2026 (12/7/2026).');
  const today = chat('You are a scheduler. Today is Tue Dec 08 2026 (12/8/2026).');

  it('a date as toDateString and toLocaleDateString print it: both patterns, in createFetch words, and following it replays', () => {
    const e = missOf(yesterday, today, { entry: { kind: 'fetch' } });
    const option = 'createFetch({ volatileText: [VOLATILE_PATTERNS.dateString, VOLATILE_PATTERNS.localeDate] })';
    expect(e.message.split('\n')[0]).toContain('text differs from the closest recording');
    // Past 140 characters the fix is the headline's second line (docs/proxy.md), capitalized.
    expect(e.message).toContain(`\nIf it changes on every run, ignore it with ${option}; else re-record: TAPEDECK_MODE=record`);
    expect(e.details.fix).toBe(`if it changes on every run, ignore it with ${option}; else re-record: TAPEDECK_MODE=record (or createFetch mode 'record')`);
    expect(e.details.fix).toContain(option);
    expect((e.details.fixes as string[])[0]).toContain(option);
    expect((e.details.fixes as string[]).some((f) => /re-record/.test(f))).toBe(true);
    expect(e.details.volatile).toEqual({ option: 'volatileText', names: ['dateString', 'localeDate'] });
    // The excerpt lines are kept under the headline.
    expect(e.message).toContain('request:   ');
    expect(answers(yesterday, today, { volatileText: [VOLATILE_PATTERNS.dateString, VOLATILE_PATTERNS.localeDate] })).toBe(true);
  });

  it('the same date printed on another machine (de-DE, another time zone) gets the same advice', () => {
    const e = missOf(chat('Heute ist 7.12.2026.'), chat('Heute ist 8.12.2026.'));
    expect(e.details.volatile).toEqual({ option: 'volatileText', names: ['localeDate'] });
    expect(e.details.fix).toBe('if it changes on every run, ignore it with volatileText: [VOLATILE_PATTERNS.localeDate]; else re-record the recordings');
    expect(e.message.toLowerCase()).toContain(String(e.details.fix).toLowerCase());
  });

  it('a timestamp in a tool result (an agent tool returning the time): isoTimestamp alone', () => {
    const recorded = toolLoop('2026-12-07T15:56:17.215Z');
    const request = toolLoop('2026-12-07T15:56:18.285Z');
    const e = missOf(recorded, request, { entry: { kind: 'fetch' } });
    expect(e.message).toMatch(/^message 2 \(tool\) tool result differs from the closest recording\nIf it changes on every run, ignore it with createFetch\(\{ volatileText: \[VOLATILE_PATTERNS\.isoTimestamp\] \}\)/);
    expect(answers(recorded, request, { volatileText: [VOLATILE_PATTERNS.isoTimestamp] })).toBe(true);
  });

  it('a UUID in a tool result, a time of day in a prompt', () => {
    expect(missOf(toolLoop('request 1f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c13 done'), toolLoop('request 9a1b2c3d-3b7d-4c2a-9e51-0d2b7f4a6c13 done')).details.volatile).toEqual({ option: 'volatileText', names: ['uuid'] });
    expect(missOf(chat('It is 3:56:17 PM.'), chat('It is 3:56:18 PM.')).details.volatile).toEqual({ option: 'volatileText', names: ['localeTime'] });
  });

  it('with volatileText already set: the pattern to add, and the spans line stays', () => {
    const given = [VOLATILE_PATTERNS.isoTimestamp, VOLATILE_PATTERNS.date, VOLATILE_PATTERNS.uuid, VOLATILE_PATTERNS.unixTime];
    const e = missOf(chat('Today is Mon Dec 07 2026, id 1f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c13.'), chat('Today is Tue Dec 08 2026, id 2f0c6a8e-3b7d-4c2a-9e51-0d2b7f4a6c13.'), { volatileText: given, entry: { kind: 'fetch' } });
    expect(e.message).toContain('ignore it with VOLATILE_PATTERNS.dateString added to volatileText (createFetch)');
    expect(e.message).toContain('volatile text replaced before keying: "2f0c6a8e-');
    expect(answers(chat('Today is Mon Dec 07 2026.'), chat('Today is Tue Dec 08 2026.'), { volatileText: [...given, VOLATILE_PATTERNS.dateString] })).toBe(true);
  });

  it('in the words of each entry point', () => {
    const words: [MatcherOptions['entry'], string][] = [
      [{ kind: 'proxy' }, "--volatile-text '"],
      [{ kind: 'cache' }, 'volatileText: [VOLATILE_PATTERNS.dateString, VOLATILE_PATTERNS.localeDate] (ReplayCache.open option)'],
      [{ kind: 'test', recordCommand: 'TAPEDECK_MODE=update npx vitest run a.test.ts' }, 'volatileText: [VOLATILE_PATTERNS.dateString, VOLATILE_PATTERNS.localeDate] (openTestTape or configureTapes option)'],
      [{ kind: 'matcher' }, 'leave it out of the key with volatileText: [VOLATILE_PATTERNS.dateString, VOLATILE_PATTERNS.localeDate] ('],
    ];
    for (const [entry, said] of words) {
      const e = missOf(yesterday, today, { entry });
      expect((e.details.fixes as string[])[0], entry!.kind).toContain(said);
      expect(e.details.fix, entry!.kind).toMatch(/^if it changes on every run, ignore it with .*; else (re-record|record it)/);
    }
    // The proxy's flag takes the pattern's source, as given on the command line.
    const proxy = missOf(yesterday, today, { entry: { kind: 'proxy' } });
    expect(proxy.details.fix).toContain(`--volatile-text '${VOLATILE_PATTERNS.dateString.source}' --volatile-text '${VOLATILE_PATTERNS.localeDate.source}'`);
  });
});

describe('no volatileText advice where the pattern would not make the recording answer', () => {
  const cases: [string, Body, Body][] = [
    ['the question changed too', chat('Today is Mon Dec 07 2026.', 'What is on?'), chat('Today is Tue Dec 08 2026.', 'What else is on?')],
    ['a number no pattern matches (a random roll)', toolLoop('roll=41'), toolLoop('roll=7')],
    ['prose changed', chat('You are terse.'), chat('You are verbose.')],
    [
      'a date in a tool call argument (the booking, not volatile text)',
      { model: 'm', messages: [{ role: 'user', content: 'book' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'book', arguments: '{"on":"2026-12-24"}' } }] }] },
      { model: 'm', messages: [{ role: 'user', content: 'book' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'book', arguments: '{"on":"2026-12-31"}' } }] }] },
    ],
    ['the model changed, the date too', { ...chat('Today is Mon Dec 07 2026.'), model: 'gpt-4o' }, chat('Today is Tue Dec 08 2026.')],
  ];
  it.each(cases)('%s', (_label, recorded, request) => {
    const e = missOf(recorded, request, { entry: { kind: 'fetch' } });
    expect(e.message).not.toContain('volatileText');
    expect(e.details.volatile).toBeUndefined();
    expect((e.details.fixes as string[]).join(' ')).not.toContain('VOLATILE_PATTERNS');
  });
});

describe('a miss whose only difference is a masked credential names volatileKeys', () => {
  const A = '[REDACTED:b59b673b1726cb8e]';
  const B = '[REDACTED:d82da3813aad203b]';

  it("a hosted MCP tool's authorization, another developer's token: says both are masks, names the member, and following it replays", () => {
    const e = missOf(hosted(A), hosted(B), { entry: { kind: 'fetch' } });
    expect(e.message).toContain('tool definition');
    expect(e.message).toContain('\nOnly masked credentials differ (another token, or none): ignore it with volatileKeys: ["authorization"]; else re-record');
    expect((e.details.fixes as string[])[0]).toMatch(/Only "authorization" differs, and its values are masks of credentials/);
    expect(e.details.volatile).toEqual({ option: 'volatileKeys', names: ['authorization'] });
    expect(answers(hosted(A), hosted(B), { volatileKeys: ['authorization'] })).toBe(true);
  });

  it('no token at all (CI): empty or absent against the mask', () => {
    for (const none of ['', undefined]) {
      const e = missOf(hosted(A), hosted(none));
      expect(e.details.volatile).toEqual({ option: 'volatileKeys', names: ['authorization'] });
      expect(answers(hosted(A), hosted(none), { volatileKeys: ['authorization'] })).toBe(true);
    }
  });

  it("the tool's headers member: the header's own name", () => {
    const withHeaders = (token: string): Body => ({ ...hosted(undefined), tools: [{ type: 'mcp', server_label: 'github', server_url: 'https://x.example/mcp', headers: { Authorization: token } }] });
    const e = missOf(withHeaders(A), withHeaders(B), { entry: { kind: 'proxy' } });
    expect(e.message).toContain('volatileKeys: ["Authorization"] (createHandler or startProxy option)');
  });

  it('not when something else differs too, nor for a key pasted into a prompt (content)', () => {
    const other = { ...hosted(B), tools: [{ type: 'mcp', server_label: 'gitlab', server_url: 'https://api.githubcopilot.com/mcp/', authorization: B }] };
    expect(missOf(hosted(A), other).details.volatile).toBeUndefined();
    const pasted = (k: string): Body => chat('You help.', `my key is ${k}`);
    const e = missOf(pasted(A), pasted(B));
    expect(e.details.volatile).toBeUndefined();
    expect(e.message).not.toContain('volatileKeys');
    // Two values that are not masks are two requests.
    expect(missOf(hosted('token-one'), hosted('token-two')).details.volatile).toBeUndefined();
  });
});
