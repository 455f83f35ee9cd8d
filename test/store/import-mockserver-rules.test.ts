// MockServer expectations imported as what MockServer answers (docs/migrate.md, "Mock-server
// fixtures"), found by a user trial:
// - a negated rule (`"not": true` on the request, a method or path with a leading "!") was
//   imported as an exact recording of the one request it excludes;
// - `times`, unlimited rules and `priority` were ignored: rules became repeats in file order, so
//   `times: 2` then a 500 rule replayed OK, 500, 500 (MockServer: OK, OK, 500), two unlimited
//   rules for one request replayed FIRST, SECOND (MockServer: FIRST, FIRST), and of a priority
//   pair the file's first answered (MockServer: the higher priority).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { importRecordings } from '../../src/proxy/import.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-mockserver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PATH = '/v1/chat/completions';
const ask = (q: string) => JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: q }] });
const answer = (text: string) => JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }] });

function file(name: string, rules: unknown[]): string {
  const f = join(dir, name);
  writeFileSync(f, JSON.stringify(rules));
  return f;
}

/** What a tape answers to `qs` asked in turn, as `status text`. */
async function replies(tape: string, qs: string[]): Promise<string[]> {
  const f = createFetch({ tape, mode: 'replay' });
  try {
    const out: string[] = [];
    for (const q of qs) {
      const r = await f(`https://api.openai.com${PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ask(q) });
      const j = (await r.json()) as { choices?: { message: { content: string } }[]; error?: { message: string } };
      out.push(`${r.status} ${j.choices?.[0]?.message.content ?? j.error?.message}`);
    }
    return out;
  } finally {
    await f.close();
  }
}

describe('negated MockServer rules', () => {
  it('lists a rule negated on the request, its method or its path with the reason, and imports none of them', async () => {
    const src = file('not.json', [
      { httpRequest: { not: true, method: 'POST', path: PATH, body: ask('n1') }, httpResponse: { body: answer('every request but n1') } },
      { httpRequest: { method: '!GET', path: PATH, body: ask('n2') }, httpResponse: { body: answer('any method but GET') } },
      { httpRequest: { method: 'POST', path: '!/v1/other', body: ask('n3') }, httpResponse: { body: answer('any path but /v1/other') } },
      { httpRequest: { method: 'POST', path: PATH, headers: { 'x-team': ['!blue'] }, body: ask('n4') }, httpResponse: { body: answer('any team but blue') } },
      { httpRequest: { method: 'POST', path: PATH, body: ask('n7') }, httpResponse: { body: answer('exact') } },
    ]);
    const tape = join(dir, 'not.tape');
    const report = await importRecordings(src, tape, { from: 'fixtures' });
    expect(report.records).toBe(1);
    expect(report.routes).toEqual([expect.objectContaining({ route: `POST ${PATH}` })]);
    expect(report.skipped.map((s) => s.where)).toEqual(['[0]', '[1]', '[2]', '[3]']);
    expect(report.skipped[0]!.reason).toMatch(/negated \("not": true\): it matches every request but this one/);
    expect(report.skipped[1]!.reason).toMatch(/method "!GET" is negated/);
    expect(report.skipped[2]!.reason).toMatch(/path "!\/v1\/other" is negated/);
    expect(report.skipped[3]!.reason).toMatch(/header rule "x-team" is negated/);
    expect(await replies(tape, ['n7'])).toEqual(['200 exact']);
  });
});

describe('MockServer times, unlimited rules and priority', () => {
  it('replays what MockServer answers: times n as n turns, an unlimited rule every time, the higher priority first', async () => {
    const src = file('order.json', [
      { httpRequest: { method: 'POST', path: PATH, body: ask('t') }, httpResponse: { body: answer('OK') }, times: { remainingTimes: 2, unlimited: false } },
      { httpRequest: { method: 'POST', path: PATH, body: ask('t') }, httpResponse: { statusCode: 500, body: JSON.stringify({ error: { message: 'server error' } }) }, times: { unlimited: true } },
      { httpRequest: { method: 'POST', path: PATH, body: ask('u') }, httpResponse: { body: answer('FIRST') } },
      { httpRequest: { method: 'POST', path: PATH, body: ask('u') }, httpResponse: { body: answer('SECOND') } },
      { httpRequest: { method: 'POST', path: PATH, body: ask('p') }, httpResponse: { body: answer('priority 0') }, priority: 0 },
      { httpRequest: { method: 'POST', path: PATH, body: ask('p') }, httpResponse: { body: answer('priority 10') }, priority: 10 },
      { httpRequest: { method: 'POST', path: PATH, body: ask('z') }, httpResponse: { body: answer('never') }, times: { remainingTimes: 0 } },
    ]);
    const tape = join(dir, 'order.tape');
    const report = await importRecordings(src, tape, { from: 'fixtures' });
    expect(await replies(tape, ['t', 't', 't', 't', 'u', 'u', 'p', 'p'])).toEqual(['200 OK', '200 OK', '500 server error', '500 server error', '200 FIRST', '200 FIRST', '200 priority 10', '200 priority 10']);
    expect(report.records).toBe(5);
    expect(report.skipped).toEqual([
      { where: '[3]', reason: expect.stringMatching(/MockServer never answers with this rule: \[2\] matches the same request every time .* comes first in the file/) },
      { where: '[4]', reason: expect.stringMatching(/MockServer never answers with this rule: \[5\] .* its priority 10 is above this rule's 0/) },
      { where: '[6]', reason: expect.stringMatching(/remainingTimes is 0/) },
    ]);
  });

  it('refuses a malformed times with the field', async () => {
    const src = file('bad-times.json', [{ httpRequest: { method: 'POST', path: PATH, body: ask('b') }, httpResponse: { body: answer('x') }, times: { remainingTimes: 'two' } }]);
    await expect(importRecordings(src, join(dir, 'bad-times.tape'), { from: 'fixtures' })).rejects.toMatchObject({ code: 'E_IMPORT_ENTRY', details: { field: 'times' } });
  });
});
