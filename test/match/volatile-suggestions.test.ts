// A miss offers an ignore option (volatileKeys) only for a member whose name says it changes on
// every call and which is not content (docs/matching.md, "Misses"). User trials found it offered
// for content whose leaf name merely looked volatile, and following the advice served the wrong
// recording: swapped tool results (`id`: which call a result answers), another uploaded file
// (`fileId` inside the file part), a tool call booking another date (`date` inside arguments).
import { describe, expect, it } from 'vitest';
import { createMatcher, requestKeys, type Recording } from '../../src/match/matcher.ts';
import { differencesOf } from '../../src/match/diagnose.ts';

type Body = Record<string, unknown>;

const tools = [
  { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
];
const asst = { role: 'assistant', content: null, tool_calls: [{ id: 'call_AAA', type: 'function', function: { name: 'get_weather', arguments: '{}' } }, { id: 'call_BBB', type: 'function', function: { name: 'get_time', arguments: '{}' } }] };
const results = (first: string, second: string): Body => ({
  model: 'gpt-4o',
  tools,
  messages: [{ role: 'user', content: 'weather and time?' }, asst, { role: 'tool', tool_call_id: first, content: 'sunny' }, { role: 'tool', tool_call_id: second, content: '12:00' }],
});
const contract = (fileId: string): Body => ({ model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarize this contract.' }, { type: 'file', file: { file_id: fileId } }] }] });
const booking = (date: string): Body => ({
  model: 'gpt-4o',
  messages: [
    { role: 'user', content: 'Book me a table' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'book', arguments: JSON.stringify({ date, people: 2 }) } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'booked' },
  ],
});
// A member the client stamps on a message (volatile) named as a tool call's argument (content):
// ignoring the name would ignore the booking's date too.
const stampedBooking = (sentOn: string, date: string): Body => {
  const b = booking(date);
  (b.messages as Body[])[0] = { role: 'user', content: 'Book me a table', date: sentOn };
  return b;
};

const CONTENT_CASES: [string, Body, Body, string][] = [
  ['swapped tool results', results('call_AAA', 'call_BBB'), results('call_BBB', 'call_AAA'), 'id'],
  ['another uploaded file', contract('file-AAAAAAAAAAAAAAAAAAAA'), contract('file-BBBBBBBBBBBBBBBBBBBB'), 'fileId'],
  ['a tool call booking another date', booking('2026-12-24'), booking('2026-12-31'), 'date'],
  ['a volatile stamp named as the other booking date', stampedBooking('2026-11-24', '2026-12-24'), stampedBooking('2026-11-25', '2026-12-31'), 'date'],
];

describe('no ignore option for a difference in content', () => {
  it.each(CONTENT_CASES)('%s: no volatileKeys offered', (_label, recorded, request) => {
    const diffs = differencesOf(requestKeys(request), requestKeys(recorded));
    expect(diffs.length).toBeGreaterThan(0);
    expect(diffs.map((d) => d.kind)).not.toContain('volatile-member');
    expect(diffs.every((d) => d.volatile === undefined)).toBe(true);
  });

  it.each(CONTENT_CASES)('%s: the matcher miss names no volatileKeys', (_label, recorded, request) => {
    const recordings: Recording[] = [{ request: recorded, response: { text: 'the recorded answer' } }];
    const m = createMatcher({ mode: 'exact', recordings });
    let message = '';
    try {
      m.match(request);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/differ/);
    expect(message).not.toMatch(/volatileKeys/);
  });

  it('a member that says it is volatile, outside content, is still offered', () => {
    const a = stampedBooking('2026-11-24', '2026-12-24');
    const b = stampedBooking('2026-11-25', '2026-12-24');
    const [d] = differencesOf(requestKeys(b), requestKeys(a));
    expect(d).toMatchObject({ kind: 'volatile-member', volatile: { option: 'volatileKeys', names: ['date'] } });
  });
});
