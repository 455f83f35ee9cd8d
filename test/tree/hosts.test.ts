// A tape whose recordings were made for more than one host (an app that falls back from OpenAI to
// an OpenAI-compatible gateway sends both the same conversation): `tapedeck tree` names the
// host(s) behind each answer, so the same answer from two hosts is not one host's answer
// "recorded 2×", and different answers say which host gave which. A tape of one host, or of
// none (older tapes, ReplayCache tapes), prints as before. The tapes are written by createFetch
// (the project's own writer, which stores each recording's origin) and read by the built CLI.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { ConversationTree, formatTree } from '../../src/tree/index.ts';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-hosts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OPENAI = 'https://api.openai.com';
const GATEWAY = 'https://gw.example.com';
const question = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Capital of France?' }] };

/**
 * Records `question` once per entry of `calls` (a host, and the answer it gives) into a new tape,
 * through createFetch with an upstream that answers from here.
 */
async function recordTape(name: string, calls: [host: string, answer: string][]): Promise<string> {
  const tape = join(dir, name);
  let answer = '';
  const upstream = (async () =>
    new Response(JSON.stringify({ id: 'c1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }] }), {
      headers: { 'content-type': 'application/json' },
    })) as typeof fetch;
  const f = createFetch({ tape, mode: 'record', fetch: upstream, onWarning: () => {} });
  try {
    for (const [host, said] of calls) {
      answer = said;
      await (await f(`${host}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(question), headers: { 'content-type': 'application/json' } })).text();
    }
  } finally {
    await f.close();
  }
  return tape;
}

/** `tapedeck tree` (the built CLI) on a tape: exit status and output. */
function tree(tape: string, ...flags: string[]) {
  expect(existsSync(bin), 'dist/cli.js is missing: run `npm run build` first').toBe(true);
  const r = spawnSync(process.execPath, [bin, 'tree', tape, ...flags], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout;
}

/** The printed answer lines (the tape's name, the summary and the questions left out). */
const answerLines = (out: string) => out.split('\n').filter((l) => l.includes('← '));
const TIME = '\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z';

describe('tapedeck tree on a tape recorded for two hosts', () => {
  it('names both hosts of the same answer, with each host’s own count, instead of "recorded 3×"', async () => {
    const tape = await recordTape('same.tape', [
      [OPENAI, 'Paris'],
      [GATEWAY, 'Paris'],
      [OPENAI, 'Paris'],
    ]);
    // The writer kept each recording's host: the tape holds all three.
    expect((await readTape(tape)).records.map((r) => (r.value as { origin?: string }).origin)).toEqual([OPENAI, GATEWAY, OPENAI]);
    const lines = answerLines(tree(tape));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^#2 assistant Paris  ← answer · gpt-4o-mini · ${TIME} · same answer from api\\.openai\\.com \\(2×\\), gw\\.example\\.com$`));
    expect(lines[0]).not.toContain('recorded 3×');
  });

  it('says which host gave which of two different answers', async () => {
    const tape = await recordTape('different.tape', [
      [OPENAI, 'Paris'],
      [GATEWAY, 'Paris, France.'],
      [GATEWAY, 'Paris, France.'],
    ]);
    const lines = answerLines(tree(tape));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^├─ #2 assistant Paris  ← answer 1/2 · gpt-4o-mini · ${TIME} · api\\.openai\\.com$`));
    // One host's two recordings of its answer are still that host's "recorded 2×".
    expect(lines[1]).toMatch(new RegExp(`^└─ #2 assistant Paris, France\\.  ← answer 2/2 · gpt-4o-mini · ${TIME} · gw\\.example\\.com · recorded 2×$`));
  });

  it('carries each alternative’s hosts, with their counts, in --json', async () => {
    const tape = await recordTape('json.tape', [
      [OPENAI, 'Paris'],
      [GATEWAY, 'Paris'],
      [OPENAI, 'Lyon'],
    ]);
    const rows = tree(tape, '--json')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { alternative: number; origins: unknown });
    expect(rows.map((r) => [r.alternative, r.origins])).toEqual([
      [
        0,
        [
          { origin: OPENAI, recordings: 1 },
          { origin: GATEWAY, recordings: 1 },
        ],
      ],
      [1, [{ origin: OPENAI, recordings: 1 }]],
    ]);
  });

  it('names the hosts on every answer line of the tape, also for a prompt that only one host was asked', async () => {
    const tape = await recordTape('follow-up.tape', [
      [OPENAI, 'Paris'],
      [GATEWAY, 'Paris'],
    ]);
    // The follow-up, asked of the gateway only.
    const f = createFetch({
      tape,
      mode: 'record',
      onWarning: () => {},
      fetch: (async () =>
        new Response(JSON.stringify({ id: 'c2', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'Berlin' }, finish_reason: 'stop' }] }), {
          headers: { 'content-type': 'application/json' },
        })) as typeof fetch,
    });
    try {
      const messages = [...question.messages, { role: 'assistant', content: 'Paris' }, { role: 'user', content: 'And Germany?' }];
      await (await f(`${GATEWAY}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ ...question, messages }), headers: { 'content-type': 'application/json' } })).text();
    } finally {
      await f.close();
    }
    const lines = answerLines(tree(tape));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/· same answer from api\.openai\.com, gw\.example\.com$/);
    expect(lines[1]).toMatch(new RegExp(`^#4 assistant Berlin  ← answer · gpt-4o-mini · ${TIME} · gw\\.example\\.com$`));
  });
});

describe('tapedeck tree on a tape of one host, or of none', () => {
  it('prints a one-host tape exactly as a tape whose recordings name no host', async () => {
    const tape = await recordTape('one.tape', [
      [OPENAI, 'Paris'],
      [OPENAI, 'Paris'],
      [OPENAI, 'Lyon'],
    ]);
    const out = tree(tape);
    const lines = answerLines(out);
    expect(lines[0]).toMatch(new RegExp(`^├─ #2 assistant Paris  ← answer 1/2 · gpt-4o-mini · ${TIME} · recorded 2×$`));
    expect(lines[1]).toMatch(new RegExp(`^└─ #2 assistant Lyon  ← answer 2/2 · gpt-4o-mini · ${TIME}$`));
    // The same records without their origins (as a tape written before origins were stored).
    const records = (await readTape(tape)).records.map((r) => {
      const { origin: _, ...rest } = r.value as Record<string, unknown>;
      return rest;
    });
    const old = join(dir, 'one-old.tape');
    await createTape(old);
    await appendRecords(old, records as never);
    expect(tree(old).split('\n').slice(1)).toEqual(out.split('\n').slice(1));
  });

  it('counts a loopback host on two ports (a test server run twice) and a recording naming no host as one host', async () => {
    const tape = await recordTape('loopback.tape', [['http://127.0.0.1:4001', 'Paris']]);
    const [first] = (await readTape(tape)).records.map((r) => r.value as Record<string, unknown>);
    const { origin: _, ...noHost } = first!;
    await appendRecords(tape, [{ ...first!, origin: 'http://127.0.0.1:4002' }, noHost] as never);
    const lines = answerLines(tree(tape));
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^#2 assistant Paris  ← answer · gpt-4o-mini · ${TIME} · recorded 3×$`))]);
  });

  it('leaves ReplayCache records (no hosts) as they were', () => {
    const t = ConversationTree.fromRecords([
      { request: question, value: { choices: [{ message: { role: 'assistant', content: 'Paris' } }] }, recordedAt: '2026-01-01T00:00:00.000Z' },
      { request: question, value: { choices: [{ message: { role: 'assistant', content: 'Paris' } }] }, recordedAt: '2026-01-02T00:00:00.000Z' },
    ]);
    expect(formatTree(t, { noSummary: true })).toBe('#1 user      Capital of France?\n#2 assistant Paris  ← answer · gpt-4o-mini · 2026-01-01T00:00:00.000Z · recorded 2×\n');
    expect(t.exchanges().next().value!.alternative.origins).toEqual([]);
  });
});

describe('host names', () => {
  const answer = (content: string) => ({ choices: [{ message: { role: 'assistant', content } }] });
  const lines = (t: ConversationTree) => formatTree(t, { noSummary: true }).trimEnd().split('\n');

  it('names a host by its whole origin only when it was recorded under two schemes, and shows a port other than the default', () => {
    const t = new ConversationTree();
    t.record({ request: question, value: answer('Paris'), origin: 'http://gw.example.com' });
    t.record({ request: question, value: answer('Paris'), origin: 'https://gw.example.com' });
    t.record({ request: question, value: answer('Lyon'), origin: 'https://gw.example.com:8443' });
    expect(t.origins).toEqual(['http://gw.example.com', 'https://gw.example.com', 'https://gw.example.com:8443']);
    expect(lines(t)).toEqual([
      '#1 user      Capital of France?',
      '├─ #2 assistant Paris  ← answer 1/2 · gpt-4o-mini · same answer from http://gw.example.com, https://gw.example.com',
      '└─ #2 assistant Lyon  ← answer 2/2 · gpt-4o-mini · gw.example.com:8443',
    ]);
  });

  it('lists a recording that names no host, on a tape of several hosts, as such', () => {
    const t = new ConversationTree();
    t.record({ request: question, value: answer('Paris') });
    t.record({ request: question, value: answer('Paris'), origin: OPENAI });
    t.record({ request: question, value: answer('Lyon'), origin: GATEWAY });
    expect(t.exchanges().next().value!.alternative.origins).toEqual([
      { origin: undefined, recordings: 1 },
      { origin: OPENAI, recordings: 1 },
    ]);
    expect(lines(t)[1]).toBe('├─ #2 assistant Paris  ← answer 1/2 · gpt-4o-mini · same answer from (no host recorded), api.openai.com');
  });
});
