// formatTree, loadTree and `tapedeck tree`: what a person reading a tape's tree sees.
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ConversationTree, formatTree, messageExcerpt } from '../../src/tree/index.ts';
import { loadTree } from '../../src/tree/load.ts';
import { treeCommand } from '../../src/tree/cli.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { refPathHashes, refSha256Hex } from '../reference.ts';

/** treeCommand's output to stdout (which the tests capture), a piece at a time. */
const toStdout = async (text: string): Promise<void> => void process.stdout.write(text);

const root = mkdtempSync(join(tmpdir(), 'tapedeck-tree-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const user = (t: string) => ({ role: 'user', content: t });
const asst = (t: string) => ({ role: 'assistant', content: t });
const chat = (messages: unknown[], model = 'gpt-4o') => ({ model, messages });
const answer = (t: string) => ({ id: 'x', choices: [{ message: asst(t) }] });

/** ReplayCache-shaped records of a small tape with a branch and alternatives. */
function records() {
  const sys = { role: 'system', content: 'You are helpful.' };
  return [
    { v: 1, request: chat([sys, user('Capital of France?')]), value: answer('Paris'), recordedAt: '2026-01-01T00:00:00.000Z' },
    { v: 1, request: chat([sys, user('Capital of France?')]), value: answer('Paris, of course.'), recordedAt: '2026-01-02T00:00:00.000Z' },
    { v: 1, request: chat([sys, user('Capital of France?'), asst('Paris'), user('Germany?')]), value: answer('Berlin'), recordedAt: '2026-01-03T00:00:00.000Z' },
    {
      v: 1,
      request: chat([sys, { role: 'user', content: [{ type: 'text', text: 'What is in\n   this picture?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from('png bytes').toString('base64')}` } }] }]),
      value: { choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'describe', arguments: '{"detail":"high"}' } }] } }] },
      recordedAt: '2026-01-04T00:00:00.000Z',
    },
  ];
}

describe('formatTree', () => {
  it('prints turns, branches, alternatives and excerpts', () => {
    const tree = ConversationTree.fromRecords(records());
    tree.findOrCreate(chat([{ role: 'system', content: 'You are helpful.' }, user('Capital of France?')]));
    const out = formatTree(tree);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe('1 conversation root · 8 messages · 4 recorded answers · 2 branch points · 1 prompt with alternatives · longest 5 messages');
    expect(lines[1]).toBe('served: 1 hits, 0 misses');
    expect(lines.slice(3)).toEqual([
      '#1 system    You are helpful.',
      '├─ #2 user      Capital of France?',
      '│  ├─ #3 assistant Paris  ← answer 1/2 · gpt-4o · 2026-01-01T00:00:00.000Z · reused 1×',
      '│  │  #4 user      Germany?',
      '│  │  #5 assistant Berlin  ← answer · gpt-4o · 2026-01-03T00:00:00.000Z',
      '│  └─ #3 assistant Paris, of course.  ← answer 2/2 · gpt-4o · 2026-01-02T00:00:00.000Z',
      `└─ #2 user      What is in this picture? [image sha256:${refSha('png bytes').slice(0, 12)} image/png]`,
      '   #3 assistant describe({"detail":"high"})  ← answer · gpt-4o · 2026-01-04T00:00:00.000Z',
    ]);
  });

  it('lists every alternative whose answer is the same message (a call and its stream) on that one line', () => {
    const recs = [
      { v: 1, request: chat([user('Hi')]), value: answer('Hello'), recordedAt: '2026-01-01T00:00:00.000Z' },
      { v: 1, request: { ...chat([user('Hi')]), stream: true }, value: answer('Hello'), recordedAt: '2026-01-02T00:00:00.000Z' },
      { v: 1, request: { ...chat([user('Hi')]), temperature: 1 }, value: answer('Hey'), recordedAt: '2026-01-03T00:00:00.000Z' },
    ];
    expect(formatTree(ConversationTree.fromRecords(recs), { noSummary: true }).trimEnd().split('\n')).toEqual([
      '#1 user      Hi',
      '├─ #2 assistant Hello  ← answers 1, 2/3 (the same) · gpt-4o · 2026-01-01T00:00:00.000Z, 2026-01-02T00:00:00.000Z',
      '└─ #2 assistant Hey  ← answer 3/3 · gpt-4o · 2026-01-03T00:00:00.000Z',
    ]);
  });

  it('marks requests without an answer, shows hashes, clips excerpts, collapses long runs', () => {
    const tree = new ConversationTree();
    const conv = Array.from({ length: 50 }, (_, i) => (i % 2 ? asst(`answer ${i}`) : user(`question ${i} ${'long '.repeat(30)}`)));
    tree.findOrCreate(conv);
    const out = formatTree(tree, { hashes: true, width: 20, collapse: 10, noSummary: true });
    const lines = out.trimEnd().split('\n');
    expect(lines.length).toBe(11);
    expect(lines[5]).toBe('… 40 messages left out …');
    expect(lines[0]).toBe(`#1 user      question 0 long lon…  [${refPathHashes(conv).pathHashes[0]!.slice(0, 12)}]`);
    expect(lines[10]).toMatch(/^#50 assistant answer 49  \(no recorded answer\)  \[[0-9a-f]{12}\]$/);
  });

  it('a 10,000-message conversation prints without recursion, one line per message', () => {
    const tree = new ConversationTree();
    tree.findOrCreate(Array.from({ length: 10_000 }, (_, i) => user(`m${i}`)));
    const lines = formatTree(tree, { noSummary: true }).trimEnd().split('\n');
    expect(lines.length).toBe(10_000);
    expect(lines[9_999]).toBe('#10000 user      m9999  (no recorded answer)');
  });

  it('hash-only input prints the digest instead of the message', () => {
    const tree = new ConversationTree();
    const h = refPathHashes([user('secret')]);
    tree.findOrCreate({ messageHashes: h.messageHashes, pathHashes: h.pathHashes });
    expect(formatTree(tree, { noSummary: true })).toBe(`#1 ?         (message not kept, digest ${h.messageHashes[0]!.slice(0, 12)})  (no recorded answer)\n`);
  });

  it('messageExcerpt covers tool results and unknown parts', () => {
    expect(messageExcerpt({ role: 'tool', content: [{ type: 'tool_result', id: 'call_0', content: [{ type: 'text', text: '18°C' }] }] })).toBe('→ 18°C');
    expect(messageExcerpt({ role: 'user', content: [{ type: 'weird' }] })).toBe('[weird]');
    // A generic endpoint's JSON answer, which has no kind: itself, not "[part]".
    expect(messageExcerpt({ role: 'assistant', content: [{ output: 'Paris', score: 0.9 }] })).toBe('{"output":"Paris","score":0.9}');
    expect(messageExcerpt('plain', 3)).toBe('"p…');
  });
});

const refSha = (s: string): string => refSha256Hex(s);

describe('loadTree and tapedeck tree', () => {
  async function tape(recs: unknown[]): Promise<string> {
    const path = join(root, `t${Math.random().toString(16).slice(2)}.tape`);
    await createTape(path);
    await appendRecords(path, recs);
    return path;
  }

  it('loads a tape: records with offsets, foreign records skipped', async () => {
    const path = await tape([...records(), { something: 'else' }, { request: 'not a request', value: 1 }]);
    const { tree, records: count, tapeWarnings } = await loadTree(path);
    expect(count).toBe(6);
    expect(tapeWarnings).toEqual([]);
    expect(tree.stats().exchanges).toBe(4);
    expect(tree.warnings.map((w) => [w.index, w.code])).toEqual([[5, 'E_REQUEST']]);
    expect(tree.warnings[0]!.offset).toBeGreaterThan(0);
    expect((tree.roots[0]!.children[0]!.alternatives[0]!.meta as { offset: number }).offset).toBeGreaterThan(0);
  });

  it('decodes record by record and reports damage as readTape does, in file order', async () => {
    const recs = records();
    const path = await tape(recs.slice(0, 2));
    // Damage between records: a frame whose checksum holds around a payload that is not whole
    // msgpack (an array of two that ends after one), then bytes that are no frame. The scan
    // finds the second, decoding the first: readTape lists them in file order.
    const payload = Buffer.from([0x92, 0x01]);
    const head = Buffer.alloc(12);
    Buffer.from([0xc1, 0x54, 0x44, 0x52]).copy(head);
    head.writeUInt32BE(payload.length, 4);
    head.writeUInt32BE(crc32(payload), 8);
    appendFileSync(path, Buffer.concat([head, payload]));
    await appendRecords(path, recs.slice(2, 3));
    appendFileSync(path, Buffer.from('torn bytes, no frame'));
    await appendRecords(path, recs.slice(3));
    const whole = await readTape(path);
    expect(whole.warnings.map((w) => w.message)).toEqual([expect.stringContaining('not decodable'), expect.stringContaining('(no frame magic)')]);
    const { tree, records: count, tapeWarnings } = await loadTree(path);
    expect(tapeWarnings).toEqual(whole.warnings);
    expect(count).toBe(whole.records.length);
    const reference = ConversationTree.fromRecords(whole.records);
    expect(formatTree(tree)).toBe(formatTree(reference));
    expect(tree.warnings).toEqual(reference.warnings);
  });

  function capture() {
    let out = '';
    let err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((out += String(s)), true));
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((err += String(s)), true));
    return { out: () => out, err: () => err };
  }

  it('prints the tree, JSON lines, and exit codes', async () => {
    const path = await tape(records());
    let io = capture();
    expect(await treeCommand([path], toStdout)).toBe(0);
    expect(io.out()).toContain('│  ├─ #3 assistant Paris  ← answer 1/2');
    expect(io.out().split('\n')[0]).toBe(path);
    vi.restoreAllMocks();

    io = capture();
    expect(await treeCommand([path, '--json'], toStdout)).toBe(0);
    const rows = io.out().trimEnd().split('\n').map((l) => JSON.parse(l) as { pathHash: string; parentHash: string; promptHash: string; responseHash: string; alternative: number });
    expect(rows.length).toBe(4);
    const france = refPathHashes([{ role: 'system', content: [{ type: 'text', text: 'You are helpful.' }] }, { role: 'user', content: [{ type: 'text', text: 'Capital of France?' }] }]);
    expect(rows[0]).toMatchObject({ pathHash: france.pathHashes[1], parentHash: france.pathHashes[0], promptHash: france.messageHashes[1], alternative: 0 });
    expect(rows[1]!.alternative).toBe(1);
    vi.restoreAllMocks();

    io = capture();
    expect(await treeCommand([], toStdout)).toBe(2);
    expect(await treeCommand([path, '--width', 'x'], toStdout)).toBe(2);
    expect(await treeCommand([path, '--bogus'], toStdout)).toBe(2);
    expect(io.err()).toContain('--width must be a non-negative integer');
    const bad = await tape([{ request: { messages: [] }, value: 'x' }]);
    expect(await treeCommand([bad], toStdout)).toBe(1);
    expect(io.err()).toContain('not placed: E_TREE');
  });

  it('writes a large tree a piece at a time through its writer, the same text as formatTree', async () => {
    // ~1,500 records: a text of ~200,000 characters, more than one piece.
    const sys = { role: 'system', content: 'You are helpful.' };
    const recs = Array.from({ length: 1500 }, (_, i) => ({ v: 1, request: chat([sys, user(`Question ${i}: ${'why '.repeat(20)}?`)]), value: answer(`Answer ${i}`), recordedAt: '2026-01-01T00:00:00.000Z' }));
    const path = await tape(recs);
    const pieces: string[] = [];
    let pending = 0;
    const write = async (text: string) => {
      pieces.push(text);
      pending++;
      await new Promise((r) => setImmediate(r));
      pending--;
    };
    // Nothing on stdout: all of it through the writer, each piece awaited before the next.
    const io = capture();
    expect(await treeCommand([path, '--collapse', '0'], (t) => (expect(pending).toBe(0), write(t)))).toBe(0);
    expect(io.out()).toBe('');
    expect(pieces.length).toBeGreaterThan(1);
    const { tree } = await loadTree(path);
    expect(pieces.join('')).toBe(`${path}\n${formatTree(tree)}`);
  });

  it('keepValues: false keeps no answer values and prints the same tree', async () => {
    const path = await tape(records());
    const kept = (await loadTree(path)).tree;
    const bare = (await loadTree(path, { keepValues: false })).tree;
    const alts = (t: ConversationTree) => [...t.nodes()].flatMap((n) => n.alternatives);
    expect(alts(kept).map((a) => a.value)).toContainEqual(answer('Paris'));
    expect(alts(bare).length).toBe(alts(kept).length);
    expect(alts(bare).every((a) => a.value === undefined)).toBe(true);
    expect(formatTree(bare, { hashes: true })).toBe(formatTree(kept, { hashes: true }));
    expect([...bare.exchanges()].map((x) => x.responseHash)).toEqual([...kept.exchanges()].map((x) => x.responseHash));
  });
});
