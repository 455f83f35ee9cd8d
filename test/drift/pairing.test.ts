// Pairing against an oracle: the closest old recording of every request whose key changed, as
// the miss diagnosis ranks all of them one by one (closestRecordings over every unpaired old
// recording), on tapes recorded through createFetch from random conversations, then changed at
// random (a message edited, a tool dropped, a message appended, a request left out or added).
// The indexed search of src/drift/pair.ts must choose the same recordings.
import fc from 'fast-check';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closestRecordings, type MissContext } from '../../src/match/diagnose.ts';
import { requestKeys, type Recording, type RequestKeys } from '../../src/match/matcher.ts';
import { askedOf } from '../../src/drift/answer.ts';
import { pairRecordings } from '../../src/drift/pair.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { startDriftUpstream } from './drift-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-pairing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Body = { model: string; messages: { role: string; content: string }[]; tools?: unknown[] };
const tool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } });

async function record(file: string, bodies: Body[]): Promise<unknown[]> {
  const up = await startDriftUpstream('base');
  const f = createFetch({ tape: file, mode: 'record' });
  try {
    for (const b of bodies) await (await f(`${up.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) })).text();
  } finally {
    await f.close();
    await up.close();
  }
  // A run that records nothing leaves no tape.
  if (bodies.length === 0) {
    expect(existsSync(file)).toBe(false);
    return [];
  }
  return (await readTape(file)).records.map((r) => r.value);
}

/** The old index each new record pairs with (or -1), by ranking every unpaired old one. */
function oracle(olds: unknown[], news: unknown[]): number[] {
  const key = (v: unknown) => askedOf(v)!.key;
  const paired = new Set<number>();
  const out = news.map(() => -1);
  const left: number[] = [];
  news.forEach((n, j) => {
    const i = olds.findIndex((o, k) => !paired.has(k) && key(o) === key(n));
    if (i >= 0) {
      paired.add(i);
      out[j] = i;
    } else left.push(j);
  });
  const keys = olds.map((o) => requestKeys(askedOf(o)!.body));
  const oldKeys = new Set(olds.map(key));
  for (const j of left) {
    // One more recording of a request the old tape has is that request's, not another changed.
    if (oldKeys.has(key(news[j]))) continue;
    const cand = olds.map((_, i) => i).filter((i) => !paired.has(i));
    if (cand.length === 0) continue;
    const nk: RequestKeys = requestKeys(askedOf(news[j])!.body);
    const ctx: MissContext = {
      mode: 'exact',
      request: nk,
      recordings: cand.map(() => ({}) as Recording),
      keys: cand.map((i) => keys[i]!),
      full: (x) => keys[cand[x]!]!,
      used: new Uint8Array(cand.length),
      allowRepeats: true,
      hasKey: () => false,
      hasSignature: () => false,
    };
    const best = closestRecordings(ctx, 1)[0]!;
    if (best.sharedMessages === 0 && best.signatureDistance > 1) continue;
    paired.add(cand[best.index]!);
    out[j] = cand[best.index]!;
  }
  return out;
}

describe('pairing a changed request with its closest old recording', () => {
  it('chooses what ranking every old recording chooses', async () => {
    const word = fc.constantFrom('alpha', 'beta', 'gamma', 'delta');
    const conv = fc.record({
      sys: fc.constantFrom('Be brief.', 'Be kind.'),
      turns: fc.array(word, { minLength: 1, maxLength: 4 }),
      tools: fc.subarray(['a', 'b', 'c']),
    });
    const edit = fc.record({ kind: fc.constantFrom('same', 'same', 'edit', 'tools', 'append', 'system', 'drop'), at: fc.nat(3), w: word });
    let run = 0;
    await fc.assert(
      // At most 8 requests: the indexed search ranks at most 8 candidates of a group (RANK_LIMIT),
      // which is then the ranking of all of them.
      fc.asyncProperty(fc.array(fc.tuple(conv, edit), { minLength: 1, maxLength: 8 }), async (items) => {
        run++;
        const body = (c: { sys: string; turns: string[]; tools: string[] }): Body => ({
          model: 'gpt-4o-mini',
          messages: [{ role: 'system', content: c.sys }, ...c.turns.map((t, i) => ({ role: i % 2 ? 'assistant' : 'user', content: t }))],
          ...(c.tools.length ? { tools: c.tools.map(tool) } : {}),
        });
        const before = items.map(([c]) => body(c));
        const after: Body[] = [];
        for (const [c, e] of items) {
          if (e.kind === 'drop') continue;
          const turns = [...c.turns];
          if (e.kind === 'edit') turns[e.at % turns.length] = `${e.w}!`;
          if (e.kind === 'append') turns.push(e.w);
          after.push(body({ sys: e.kind === 'system' ? 'Be exact.' : c.sys, turns, tools: e.kind === 'tools' ? c.tools.slice(1) : c.tools }));
        }
        const olds = await record(join(dir, `old-${run}.tape`), before);
        const news = await record(join(dir, `new-${run}.tape`), after);
        const got = news.map(() => -1);
        for (const p of pairRecordings([{ name: 't', records: olds }], [{ name: 't', records: news }])) if (p.new && p.old) got[p.new.index] = p.old.index;
        expect(got).toEqual(oracle(olds, news));
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

// Failed before: a request recorded once on the old tape and twice on the new one (asked one more
// time, or a record run killed before it replaced the old recording, which leaves the
// re-recording after it) was reported as a "new recording (no old one for this request)".
describe('a request recorded more or fewer times than before', () => {
  it('is said to be another recording (or one fewer) of a request recorded before, with both counts', async () => {
    const a: Body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] };
    const b: Body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'And of Spain?' }] };
    const olds = await record(join(dir, 'repeat-old.tape'), [a, b, b]);
    const news = await record(join(dir, 'repeat-new.tape'), [a, b, a]);
    const { driftReport } = await import('../../src/drift/report.ts');
    const r = driftReport([{ name: 't', records: olds }], [{ name: 't', records: news }], { old: 'old', new: 'new' });
    const added = r.entries.filter((e) => e.status === 'added');
    const removed = r.entries.filter((e) => e.status === 'removed');
    expect(added.map((e) => [e.new!.index, e.repeats])).toEqual([[2, { old: 1, new: 2 }]]);
    expect(added[0]!.summary).toMatch(/^another recording of a request recorded before \(2 now, 1 before; /);
    expect(removed.map((e) => [e.old!.index, e.repeats])).toEqual([[2, { old: 2, new: 1 }]]);
    expect(removed[0]!.summary).toBe('one recording fewer of this request (1 now, 2 before)');
    // A request only one side has keeps its wording.
    const c: Body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Name a colour.' }], tools: [tool('paint')] };
    const more = await record(join(dir, 'repeat-more.tape'), [a, b, b, c]);
    const r2 = driftReport([{ name: 't', records: olds }], [{ name: 't', records: more }], { old: 'old', new: 'new' });
    expect(r2.entries.filter((e) => e.status === 'added').map((e) => e.summary)).toEqual(['new recording (no old one for this request)']);
  });
});
