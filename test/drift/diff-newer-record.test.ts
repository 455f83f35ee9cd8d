// tapedeck diff of a tape against one whose recording of a request was written by a newer
// tapedeck (a record version this one does not read): that request was listed as "removed ...
// recording gone (no new recording of this request)", though the new tape holds it, and the
// footnote said only "1 record not compared (http: 0 old, 1 new)". The entry now says it was not
// compared because the other side's recording is of a newer record version, and the footnote
// names the version; nothing is said gone that is there.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { driftReport } from '../../src/drift/report.ts';
import { uncomparedPhrase } from '../../src/drift/uncompared.ts';
import { readTape } from '../../src/store/tape-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-diff-newer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Two chat calls recorded by createFetch: their decoded records. */
async function recorded(name: string, answer: string): Promise<unknown[]> {
  const tape = join(dir, name);
  const upstream = (async (input: string | URL | Request, init?: RequestInit) => {
    const asked = (JSON.parse(await new Request(input, init).text()) as { messages: { content: string }[] }).messages[0]!.content;
    const body = { id: 'c1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: `${answer} ${asked}` }, finish_reason: 'stop' }] };
    return new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {}, summary: false });
  try {
    for (const q of ['first', 'second']) {
      const r = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: q }] }) });
      await r.text();
    }
  } finally {
    await f.close();
  }
  return (await readTape(tape)).records.map((r) => r.value);
}

describe('diff with a recording of a newer record version on one side', () => {
  let before: unknown[];
  let after: unknown[];
  beforeAll(async () => {
    before = await recorded('before.tape', 'old');
    const again = await recorded('after.tape', 'new');
    // The second recording as a newer tapedeck writes it.
    after = again.map((r, i) => (i === 1 ? { ...(r as object), v: 9 } : r));
  });

  it('says the request was not compared, not that its recording is gone', () => {
    const report = driftReport([{ name: 'chat.tape', records: before }], [{ name: 'chat.tape', records: after }], { old: 'a', new: 'b' });
    const second = report.entries.find((e) => e.old?.index === 1)!;
    expect(second).toBeDefined();
    expect(second.summary).not.toContain('gone');
    expect(second.summary).toContain('record version 9');
    expect(second.summary).toContain('upgrade tapedeck');
    // The other request is compared as before.
    expect(report.entries.find((e) => e.old?.index === 0)!.status).toBe('paired');
  });

  it('the footnote names the version of the records it did not compare', () => {
    const report = driftReport([{ name: 'chat.tape', records: before }], [{ name: 'chat.tape', records: after }], { old: 'a', new: 'b' });
    expect(report.summary.notCompared).toEqual([{ kind: 'http', version: 9, old: 0, new: 1 }]);
    expect(uncomparedPhrase(report.summary.notCompared)).toBe('1 record not compared (http of record version 9, newer than this tapedeck reads: 0 old, 1 new)');
  });
});
