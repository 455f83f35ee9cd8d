// The conversation tree: hashes checked against node:crypto and the
// `canonicalize` reference, linear conversations, branches at every depth, alternatives, a
// differing assistant message, images and tool calls in the path, 10,000-message conversations,
// indexes, statistics and reuse stamps.
import { describe, expect, it } from 'vitest';
import { ConversationTree, type TreeNode } from '../../src/tree/index.ts';
import { requestKeys } from '../../src/match/matcher.ts';
import { errorOf } from '../helpers.ts';
import { refDigest, refPathHashes, refSha256Hex } from '../reference.ts';

const sys = { role: 'system', content: 'You are a useful assistant.' };
const user = (t: string) => ({ role: 'user', content: t });
const asst = (t: string) => ({ role: 'assistant', content: t });

function clock(start = 1_000) {
  const c = { ms: start, now: () => c.ms };
  return c;
}

/** The conversation's messages from a node back to its root, hashes checked on the way. */
function pathTo(node: TreeNode): TreeNode[] {
  const out: TreeNode[] = [];
  for (let n: TreeNode | null = node; n; n = n.parent) out.push(n);
  return out.reverse();
}

describe('hashes (prompt and path hashes on the hash spec)', () => {
  it('prompt_hash, path_hash and parent match node:crypto over the reference canonical form', () => {
    const tree = new ConversationTree();
    const conv = [sys, user('Capital of France?'), asst('Paris'), user('Germany?')];
    const r = tree.findOrCreate(conv, { response: { messages: [asst('Berlin')] } });
    const ref = refPathHashes([...conv, asst('Berlin')]);
    const nodes = pathTo(r.alternative!.node);
    expect(nodes.length).toBe(5);
    nodes.forEach((n, i) => {
      expect(n.promptHash).toBe(ref.messageHashes[i]);
      expect(n.pathHash).toBe(ref.pathHashes[i]);
      expect(n.parentHash).toBe(i === 0 ? null : ref.pathHashes[i - 1]);
      expect(n.depth).toBe(i);
      // root path_hash = prompt_hash; child path_hash = hash(parent.path_hash ":" prompt_hash)
      expect(n.pathHash).toBe(i === 0 ? n.promptHash : refSha256Hex(`${n.parentHash}:${n.promptHash}`));
    });
    expect(r.alternative!.responseHash).toBe(refDigest(asst('Berlin')));
    const [x] = [...tree.exchanges()];
    expect(x).toMatchObject({ pathHash: ref.pathHashes[3], parentHash: ref.pathHashes[2], promptHash: ref.messageHashes[3], responseHash: ref.messageHashes[4] });
  });

  it('a multi-message answer chains its own digests for response_hash', () => {
    const tree = new ConversationTree();
    const answer = [asst('step 1'), asst('step 2'), asst('done')];
    const r = tree.findOrCreate([user('go')], { response: { messages: answer } });
    const own = refPathHashes(answer);
    expect(r.alternative!.responseHash).toBe(own.pathHashes[2]);
    expect(r.alternative!.node.pathHash).toBe(refPathHashes([user('go'), ...answer]).pathHashes[3]);
    expect(r.alternative!.node.depth).toBe(3);
  });

  it('timestamps and ids never enter a hash: the same answer recorded twice is one alternative', () => {
    const tree = new ConversationTree();
    const a = tree.findOrCreate([user('hi')], { response: { messages: [asst('hello')], recordedAt: '2026-01-01T00:00:00Z' } });
    const b = tree.findOrCreate([user('hi')], { response: { messages: [asst('hello')], recordedAt: '2026-02-02T00:00:00Z' } });
    expect(b.recorded).toBe('existing');
    expect(b.alternative).toBe(a.alternative);
    expect(a.alternative!.recordings).toBe(2);
    expect(a.alternative!.recordedAt).toBe('2026-01-01T00:00:00Z');
    // A record's timestamp and provider ids stay out of the tree's hashes too.
    const t = ConversationTree.fromRecords([
      { request: { model: 'm', messages: [user('q')] }, value: { id: 'chatcmpl-1', created: 1, choices: [{ message: asst('a') }] }, recordedAt: '2026-01-01T00:00:00Z' },
      { request: { model: 'm', messages: [user('q')] }, value: { id: 'chatcmpl-2', created: 2, choices: [{ message: asst('a') }] }, recordedAt: '2026-03-01T00:00:00Z' },
    ]);
    expect(t.stats().exchanges).toBe(1);
  });
});

describe('findOrCreate', () => {
  it('linear conversation: each turn walks the recorded prefix through the answers', () => {
    const c = clock();
    const tree = new ConversationTree({ now: c.now });
    const t1 = [sys, user('Capital of France?')];
    const r1 = tree.findOrCreate(t1);
    expect(r1).toMatchObject({ hit: false, matched: 0, created: 2 });
    expect(r1.divergence).toMatchObject({ index: 0, parent: null });
    tree.addResponse(r1.node, { messages: [asst('Paris')], value: { text: 'Paris' } });

    const t2 = [...t1, asst('Paris'), user('Germany?')];
    const r2 = tree.findOrCreate(t2, { response: { messages: [asst('Berlin')] } });
    expect(r2.matched).toBe(3); // the recorded answer is part of the walked prefix
    expect(r2.divergence!.index).toBe(3);
    expect(r2.divergence!.parent!.origin).toBe('response');
    expect(r2.created).toBe(1);
    expect(r2.recorded).toBe('new');

    c.ms = 5_000;
    const hit = tree.findOrCreate(t1);
    expect(hit.hit).toBe(true);
    expect(hit.divergence).toBeNull();
    expect(hit.alternative!.value).toEqual({ text: 'Paris' });
    expect(hit.servedAt).toBe(5_000);
    c.ms = 6_000;
    const again = tree.findOrCreate(t2);
    expect(again.alternative!.uses).toBe(1);
    expect(tree.findOrCreate(t1).alternative!.uses).toBe(2);
    expect(hit.alternative!.lastUsedAt).toBe(6_000);
    expect(tree.stats()).toMatchObject({ hits: 3, misses: 1, recorded: 2, nodes: 5, roots: 1, exchanges: 2, branchPoints: 0, maxLength: 5 });
  });

  it('branches at every depth: a change at message d leaves the tree at d, under message d-1', () => {
    const L = 24;
    const base = Array.from({ length: L }, (_, i) => (i % 2 ? asst(`a${i}`) : user(`u${i}`)));
    const tree = new ConversationTree();
    const original = tree.findOrCreate(base, { response: { messages: [asst('end')] } });
    const ref = refPathHashes(base);
    for (let d = 0; d < L; d++) {
      const variant = base.slice();
      variant[d] = { ...variant[d]!, content: `changed at ${d}` };
      const before = tree.size;
      const r = tree.findOrCreate(variant, { response: { messages: [asst(`end ${d}`)] } });
      expect(r.matched).toBe(d);
      expect(r.divergence!.index).toBe(d);
      expect(r.divergence!.parent?.pathHash ?? null).toBe(d === 0 ? null : ref.pathHashes[d - 1]);
      expect(r.divergence!.siblings.map((s) => s.pathHash)).toContain(ref.pathHashes[d]);
      expect(r.created).toBe(L - d);
      expect(tree.size).toBe(before + L - d + 1);
      expect(r.node.pathHash).toBe(refPathHashes(variant).pathHashes[L - 1]);
    }
    // Nothing recorded before was touched.
    const back = tree.findOrCreate(base);
    expect(back.hit).toBe(true);
    expect(back.alternative).toBe(original.alternative);
    expect(back.alternatives.length).toBe(1);
    expect(tree.stats()).toMatchObject({ roots: 2, branchPoints: L - 1 });
    for (let d = 1; d < L; d++) expect(tree.byPathHash(ref.pathHashes[d - 1]!)!.children.length).toBe(2);
  });

  it('several answers for one prompt are alternatives, in recorded order; the first answers', () => {
    const tree = new ConversationTree();
    const q = [user('Tell me a joke')];
    for (const j of ['Why did the chicken…', 'What do you call…', 'Knock knock']) tree.findOrCreate(q, { response: { messages: [asst(j)] } });
    tree.findOrCreate(q, { response: { messages: [asst('What do you call…')] } }); // same as #2
    const r = tree.findOrCreate(q);
    expect(r.alternatives.map((a) => (a.value as { content: string }[])[0]!.content)).toEqual(['Why did the chicken…', 'What do you call…', 'Knock knock']);
    expect(r.alternatives.map((a) => a.index)).toEqual([0, 1, 2]);
    expect(r.alternatives[1]!.recordings).toBe(2);
    expect(r.alternative).toBe(r.alternatives[0]);
    expect(new Set(r.alternatives.map((a) => a.responseHash)).size).toBe(3);
    expect(tree.stats()).toMatchObject({ alternativeSets: 1, exchanges: 3, branchPoints: 1 });
  });

  it('alternatives are picked by request key: another model or options never answers', () => {
    const tree = new ConversationTree();
    const q = [user('2+2?')];
    tree.findOrCreate(q, { response: { messages: [asst('4')], key: 'k-mini' } });
    tree.findOrCreate(q, { response: { messages: [asst('Four.')], key: 'k-large' } });
    expect((tree.findOrCreate(q, { key: 'k-large' }).alternative!.value as { content: string }[])[0]!.content).toBe('Four.');
    const other = tree.findOrCreate(q, { key: 'k-other' });
    expect(other.hit).toBe(false);
    expect(other.alternatives.length).toBe(2);
    expect(tree.findOrCreate(q).alternative!.key).toBe('k-mini'); // no key: the first
    expect(tree.stats()).toMatchObject({ hits: 2, misses: 1 });
  });

  it('an assistant message that differs from the recorded answer is a branch, never an overwrite', () => {
    const tree = new ConversationTree();
    const rec = tree.findOrCreate([user('Capital of France?')], { response: { messages: [asst('Paris')] } });
    const r = tree.findOrCreate([user('Capital of France?'), asst('Lyon'), user('Sure?')]);
    expect(r.matched).toBe(1);
    expect(r.divergence!.index).toBe(1);
    expect(r.divergence!.parent).toBe(rec.node);
    expect(r.divergence!.siblings).toEqual([rec.alternative!.node]);
    const lyon = r.node.parent!;
    expect(lyon.origin).toBe('request');
    expect(rec.node.children.map((c) => c.origin)).toEqual(['response', 'request']);
    expect(rec.node.alternatives.length).toBe(1);
    expect(tree.findOrCreate([user('Capital of France?')]).alternative).toBe(rec.alternative);
  });

  it('a 10,000-message conversation: one new message walks 9,999 and adds one node', () => {
    const N = 10_000;
    const conv = Array.from({ length: N }, (_, i) => (i % 2 ? asst(`answer ${i} ✓`) : user(`question ${i}: ${'x'.repeat(i % 50)}`)));
    const tree = new ConversationTree();
    const first = tree.findOrCreate(conv.slice(0, N - 1), { response: { messages: [asst('last answer')] } });
    expect(first.created).toBe(N - 1);
    const variant = [...conv.slice(0, N - 1), user('a different last message')];
    const r = tree.findOrCreate(variant);
    expect(r.matched).toBe(N - 1);
    expect(r.created).toBe(1);
    expect(r.divergence!.siblings.length).toBe(1);
    const ref = refPathHashes(variant);
    expect(r.node.pathHash).toBe(ref.pathHashes[N - 1]);
    for (const i of [0, 1, 4_999, 9_998]) expect(tree.byPathHash(ref.pathHashes[i]!)!.depth).toBe(i);
    // A change in the middle leaves the tree in the middle.
    const mid = conv.slice();
    mid[5_000] = user('changed');
    const m = tree.findOrCreate(mid);
    expect(m.matched).toBe(5_000);
    expect(m.created).toBe(N - 5_000);
    expect([...tree.nodes()].length).toBe(tree.size);
    expect(tree.stats().maxLength).toBe(N);
  });

  it('takes JSON bytes (no parse), a member of an object, hashes, and request bodies alike', () => {
    const conv = [sys, user('hi')];
    const tree = new ConversationTree();
    const a = tree.findOrCreate(conv);
    expect(tree.findOrCreate(new TextEncoder().encode(JSON.stringify(conv))).node).toBe(a.node);
    expect(tree.findOrCreate(`{"model":"x","messages":${JSON.stringify(conv)}}`, { member: 'messages' }).node).toBe(a.node);
    const body = { model: 'gpt-4o', messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'Q' }] };
    const k = requestKeys(body);
    const viaBody = tree.findOrCreate(body);
    expect(tree.findOrCreate(k).node).toBe(viaBody.node);
    expect(tree.findOrCreate(k.messages).node).toBe(viaBody.node); // normalized messages hash as given
    expect(viaBody.node.message).toEqual(k.messages[1]);
    // Anthropic's separate system prompt lands on the same path.
    expect(tree.findOrCreate({ model: 'claude', system: 'S', max_tokens: 10, messages: [{ role: 'user', content: 'Q' }] }).node).toBe(viaBody.node);
  });

  it('find is read-only', () => {
    const tree = new ConversationTree();
    tree.findOrCreate([user('a')], { response: { messages: [asst('b')] } });
    const f = tree.find([user('a'), asst('b'), user('c')]);
    expect(f.matched).toBe(2);
    expect(f.divergence!.index).toBe(2);
    expect(tree.size).toBe(2);
    expect(tree.find([user('a')]).alternatives.length).toBe(1);
    expect(tree.find([user('zzz')]).node).toBeNull();
    expect(tree.stats()).toMatchObject({ hits: 0, misses: 0 });
  });
});

describe('indexes', () => {
  it('by path hash, by prompt hash and by (parent, prompt hash)', () => {
    const tree = new ConversationTree();
    tree.findOrCreate([user('A'), asst('x'), user('Germany?')]);
    tree.findOrCreate([user('B'), asst('y'), user('Germany?')]);
    const g = refDigest(user('Germany?'));
    const where = tree.byPromptHash(g);
    expect(where.length).toBe(2);
    expect(where.map((n) => n.depth)).toEqual([2, 2]);
    const pA = refPathHashes([user('A'), asst('x')]).pathHashes;
    expect(tree.child(pA[1]!, g)!.pathHash).toBe(refSha256Hex(`${pA[1]}:${g}`));
    expect(tree.child(null, refDigest(user('B')))!.depth).toBe(0);
    expect(tree.child(null, g)).toBeUndefined();
    expect(tree.child(pA[0]!, g)).toBeUndefined();
    expect(tree.byPromptHash('0'.repeat(64))).toEqual([]);
  });

  it('(parent, prompt hash) stays exact past the point a node indexes its children', () => {
    const tree = new ConversationTree();
    for (let i = 0; i < 40; i++) tree.findOrCreate([sys, user(`q${i}`)]);
    const root = tree.roots[0]!;
    expect(root.children.length).toBe(40);
    for (let i = 0; i < 40; i++) expect(tree.child(root.pathHash, refDigest(user(`q${i}`)))).toBe(root.children[i]);
    expect(tree.stats().branchPoints).toBe(1);
  });
});

describe('provider bodies: images and tool calls in the path', () => {
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 4]).toString('base64');

  it('an image is in the path by its bytes: same bytes share a node, other bytes branch', () => {
    const ask = (img: string, q = 'What is this?') => ({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: [{ type: 'text', text: q }, { type: 'image_url', image_url: { url: img } }] }],
    });
    const tree = ConversationTree.fromRecords([{ request: ask(`data:image/png;base64,${png}`), value: { choices: [{ message: asst('A logo.') }] } }]);
    // The same bytes, base64 with MIME line breaks: the same node, served.
    const wrapped = `data:image/png;base64,${png.slice(0, 4)}\n${png.slice(4)}`;
    expect(tree.findOrCreate(ask(wrapped)).hit).toBe(true);
    const other = tree.findOrCreate(ask(`data:image/png;base64,${Buffer.from('other').toString('base64')}`));
    expect(other.hit).toBe(false);
    expect(other.divergence!.index).toBe(0);
    expect(tree.roots.length).toBe(2);
  });

  it('OpenAI tool calls: the follow-up with new provider ids walks through the recorded call', () => {
    const tools = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }];
    const q = { role: 'user', content: 'Weather in Paris?' };
    const call = (id: string) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }] });
    const records = [
      { request: { model: 'gpt-4o', tools, messages: [q] }, value: { choices: [{ message: call('call_abc') }] } },
      {
        request: { model: 'gpt-4o', tools, messages: [q, call('call_abc'), { role: 'tool', tool_call_id: 'call_abc', content: '18°C' }] },
        value: { choices: [{ message: asst('It is 18°C.') }] },
      },
    ];
    const tree = ConversationTree.fromRecords(records);
    expect(tree.warnings).toEqual([]);
    expect(tree.stats()).toMatchObject({ roots: 1, nodes: 4, exchanges: 2, branchPoints: 0 });
    // Re-run with the ids a new provider call would return.
    const follow = { model: 'gpt-4o', tools, messages: [q, call('call_XYZ'), { role: 'tool', tool_call_id: 'call_XYZ', content: '18°C' }] };
    const r = tree.findOrCreate(follow);
    expect(r.hit).toBe(true);
    expect(r.matched).toBe(3);
    // Different arguments: a branch at the call.
    const other = { ...call('c'), tool_calls: [{ id: 'c', type: 'function', function: { name: 'weather', arguments: '{"city":"Lyon"}' } }] };
    const b = tree.findOrCreate({ model: 'gpt-4o', tools, messages: [q, other, { role: 'tool', tool_call_id: 'c', content: '20°C' }] });
    expect(b.divergence!.index).toBe(1);
  });

  it('Anthropic tool_use answers and tool_result follow-ups share one path', () => {
    const q = { role: 'user', content: 'Go to path A' };
    const answer = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_01', name: 'transition_to_pathA', input: {} }], usage: { input_tokens: 3 } };
    const tree = ConversationTree.fromRecords([{ request: { model: 'claude', max_tokens: 100, system: 'Agent.', messages: [q] }, value: answer }]);
    const follow = {
      model: 'claude',
      max_tokens: 100,
      system: 'Agent.',
      messages: [q, { role: 'assistant', content: answer.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'ok' }] }],
    };
    const r = tree.findOrCreate(follow);
    expect(r.matched).toBe(3); // system, user, the recorded tool_use answer
    expect(r.divergence!.index).toBe(3);
  });

  it('several choices become alternatives; Responses output items chain', () => {
    const t = ConversationTree.fromRecords([
      { request: { model: 'gpt-4o', n: 2, messages: [user('name a colour')] }, value: { choices: [{ index: 0, message: asst('red') }, { index: 1, message: asst('blue') }] } },
      { request: { model: 'gpt-4o', input: 'hi' }, value: { object: 'response', output: [{ type: 'reasoning', id: 'rs_1', summary: [] }, { type: 'message', id: 'msg_1', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] }] } },
    ]);
    expect(t.roots[0]!.alternatives.length).toBe(2);
    const resp = t.roots[1]!.alternatives[0]!;
    expect(resp.node.depth).toBe(2);
    const follow = t.findOrCreate({
      model: 'gpt-4o',
      input: [{ role: 'user', content: 'hi' }, { type: 'reasoning', id: 'rs_9', summary: [] }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] }, { role: 'user', content: 'again' }],
    });
    expect(follow.matched).toBe(3);
  });
});

describe('fromRecords', () => {
  it('takes readTape entries, skips foreign records, and reports unplaceable ones with offsets', () => {
    const tree = ConversationTree.fromRecords([
      { offset: 16, length: 100, value: { v: 1, key: 'k1', request: { model: 'm', messages: [user('a')] }, value: 'A', recordedAt: '2026-01-01T00:00:00.000Z' } },
      { offset: 116, length: 10, value: { something: 'else' } },
      { offset: 126, length: 50, value: { request: 42, value: 'x' } },
      { offset: 176, length: 50, value: { request: { model: 'm', messages: [] }, value: 'x' } },
    ]);
    expect(tree.stats().exchanges).toBe(1);
    const alt = tree.roots[0]!.alternatives[0]!;
    expect(alt).toMatchObject({ key: 'k1', model: 'm', recordedAt: '2026-01-01T00:00:00.000Z', value: 'A', meta: { offset: 16, record: 0 } });
    expect(tree.warnings.map((w) => [w.index, w.offset, w.code])).toEqual([
      [2, 126, 'E_REQUEST'],
      [3, 176, 'E_TREE'],
    ]);
  });

  it('a record without an answer adds its path without serving or counting anything', () => {
    const body = { model: 'm', messages: [user('q')] };
    const tree = ConversationTree.fromRecords([{ request: body, value: 'A' }, { request: body, value: null }, { request: { ...body, messages: [user('q'), asst('A'), user('more')] }, value: null }]);
    expect(tree.stats()).toMatchObject({ hits: 0, misses: 0, exchanges: 1, nodes: 3 });
    expect(tree.roots[0]!.alternatives[0]!.uses).toBe(0);
  });

  it('divergence siblings are the continuations recorded before the call', () => {
    const tree = new ConversationTree();
    for (let i = 0; i < 5; i++) tree.findOrCreate([user('root'), asst(`a${i}`)]);
    const r = tree.findOrCreate([user('root'), asst('new one')]);
    tree.findOrCreate([user('root'), asst('later')]);
    expect(r.divergence!.siblings.map((s) => (s.message as { content: string }).content)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    expect(tree.findOrCreate([user('other')]).divergence!.siblings.length).toBe(1);
  });

  it('a record without a key gets the matcher key, so a body lookup picks it', () => {
    const body = { model: 'gpt-4o', temperature: 0, messages: [user('q')] };
    const tree = ConversationTree.fromRecords([{ request: body, value: 'A' }, { request: { ...body, model: 'other' }, value: 'B' }]);
    expect(tree.roots[0]!.alternatives.map((a) => a.key)).toEqual([requestKeys(body).key, requestKeys({ ...body, model: 'other' }).key]);
    expect(tree.findOrCreate({ ...body, model: 'other' }).alternative!.value).toBe('B');
  });

  it('keeps the strings a record gives exactly, Latin-1 or not, and its children and answers in order', () => {
    // The tree keeps copies of its own of the hashes and record fields it stores (a slice of a
    // larger string would keep all of it alive); a string the copy cannot give back is kept as it is.
    const odd = ['2026-01-01T00:00:00.000Z', 'ключ-🔑', 'caf\u00e9 \u00ff', 'lone \ud800', `${'x'.repeat(300)}é`];
    const body = { model: 'm', messages: [user('q')] };
    const tree = ConversationTree.fromRecords(odd.map((s, i) => ({ request: body, value: `A${i}`, key: s, recordedAt: s })));
    const alts = tree.roots[0]!.alternatives;
    expect(alts.map((a) => [a.key, a.recordedAt])).toEqual(odd.map((s) => [s, s]));
    expect(alts.map((a) => a.index)).toEqual([0, 1, 2, 3, 4]);
    expect(tree.roots[0]!.children.map((c) => (c.message as { content: unknown }).content)).toEqual(['A0', 'A1', 'A2', 'A3', 'A4'].map((t) => [{ type: 'text', text: t }]));
    for (const n of tree.nodes()) {
      expect(tree.byPathHash(n.pathHash)).toBe(n);
      expect(n.pathHash).toBe(pathTo(n).length === 1 ? n.promptHash : refSha256Hex(`${n.parent!.pathHash}:${n.promptHash}`));
    }
  });
});

describe('errors', () => {
  it('bad input is a TapedeckError with a stable code', () => {
    const tree = new ConversationTree();
    expect(errorOf(() => tree.findOrCreate([])).code).toBe('E_TREE');
    expect(errorOf(() => tree.findOrCreate({ messageHashes: ['a'], pathHashes: [] })).code).toBe('E_TREE');
    const bad = errorOf(() => tree.findOrCreate({ messageHashes: ['nothex'], pathHashes: ['nothex'] }));
    expect(bad.code).toBe('E_TREE');
    expect(bad.path).toBe('messageHashes[0]');
    expect(errorOf(() => tree.findOrCreate(42 as never)).code).toBe('E_ARG');
    expect(errorOf(() => tree.findOrCreate({ hello: 1 })).code).toBe('E_REQUEST');
    const r = tree.findOrCreate([user('x')]);
    expect(errorOf(() => tree.addResponse(r.node, {})).code).toBe('E_TREE');
    expect(errorOf(() => tree.addResponse(r.node, { messages: [] })).code).toBe('E_TREE');
    expect(errorOf(() => new ConversationTree().addResponse(r.node, { messages: [asst('y')] })).code).toBe('E_ARG');
    expect(errorOf(() => new ConversationTree({ now: 5 as never })).code).toBe('E_ARG');
    expect(errorOf(() => tree.findOrCreate('[1,')).code).toBe('E_JSON');
    expect(tree.size).toBe(1); // failed calls added nothing
  });
});
