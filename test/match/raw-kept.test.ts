// What the raw-bytes path keeps between the requests of a conversation, against the reference
// (requestKeys: JSON.parse + normalize.ts + one core call over the whole view, which keeps
// nothing): the canonical form of a view's tool list (src/match/raw-keys/tools-cache.ts) and
// the normalized top level (raw-keys/core.ts). The same tools and options arrive with other
// messages, in another member order, respelled, changed by one byte at the same length right
// after the original was kept, under other options: every key must be the reference's, so an
// entry never answers for bytes other than its own.
import { describe, expect, it } from 'vitest';
import { backend, requestDigests, requestKeys } from '../../src/index.ts';
import { JsEngine } from '../../src/core/js.ts';
import { WasmEngine } from '../../src/core/wasm.ts';
import { clearToolsCache, toolsCacheCounts } from '../../src/match/raw-keys/tools-cache.ts';
import { filledCounts } from '../../src/match/raw-keys/core.ts';
import { converseBody, geminiBody, ollamaChatBody, requestBodies } from '../../bench/workloads.mjs';
import type { NormalizeOptions } from '../../src/providers/types.ts';
import { agree, rng } from './raw-agree.ts';
import { respell } from './respell.ts';

type Obj = Record<string, any>;

const encoder = new TextEncoder();
const hasTape = backend() !== 'js';
const heavy = (requestBodies() as Obj)['openai-chat-tools'].body as Obj;

/** The request of turn `k`: the first k messages, the same tools. */
const turn = (base: Obj, k: number): Obj => ({ ...base, messages: base.messages.slice(0, k) });

/** The same value with every object's members in reverse order. */
function reversed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reversed);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversed(x)]));
}

const counts = () => ({ ...toolsCacheCounts });

describe('the kept canonical form of a tool list', () => {
  it('a conversation growing turn by turn with the same tools keys as the reference, its tools canonicalized once', () => {
    clearToolsCache();
    const before = counts();
    let turns = 0;
    for (let k = 1; k <= heavy.messages.length; k += 3) {
      expect(agree(encoder.encode(JSON.stringify(turn(heavy, k))))).toBe(hasTape);
      turns++;
    }
    if (!hasTape) return;
    expect(toolsCacheCounts.misses - before.misses).toBe(1);
    // The list sits as far from the end of every body: skipped by the index from the second on.
    expect(toolsCacheCounts.skipped - before.skipped).toBe(turns - 1);
    expect(toolsCacheCounts.hits - before.hits).toBe(0);
  });

  it('every shape with tools (chat, Anthropic, Responses, generic) keys as the reference with its tools kept', () => {
    for (const [shape, { body }] of Object.entries(requestBodies() as Record<string, { body: Obj }>)) {
      if (shape === 'openai-embeddings') continue;
      clearToolsCache();
      const list = body.messages ?? body.input;
      const at = body.messages ? 'messages' : 'input';
      const before = counts();
      for (const k of [2, 9, list.length]) expect(agree(encoder.encode(JSON.stringify({ ...body, [at]: list.slice(0, k) })))).toBe(hasTape);
      if (hasTape) expect(toolsCacheCounts.hits + toolsCacheCounts.skipped - before.hits - before.skipped, shape).toBe(2);
    }
  });

  it('the same tools in another member order or spelling key as the original; other bytes never reuse its entry', () => {
    clearToolsCache();
    const original = encoder.encode(JSON.stringify(heavy));
    const key = requestKeys(original).key;
    expect(agree(original)).toBe(hasTape);
    const reorderedTools = encoder.encode(JSON.stringify({ ...heavy, tools: reversed(heavy.tools) }));
    const before = counts();
    expect(agree(reorderedTools)).toBe(hasTape);
    expect(requestKeys(reorderedTools).key).toBe(key);
    // Other bytes, the same canonical form: made again, not found by the original's entry.
    if (hasTape) expect(toolsCacheCounts.misses - before.misses).toBe(1);
    for (let seed = 1; seed <= 4; seed++) {
      const respelled = encoder.encode(respell(heavy, rng(seed)));
      expect(agree(respelled)).toBe(hasTape);
      expect(requestKeys(respelled).key).toBe(key);
      expect(agree(original)).toBe(hasTape);
    }
  });

  it('a tool list changed by one byte (same length) right after the original was kept is never answered by the original', () => {
    const text = JSON.stringify(heavy);
    const from = text.lastIndexOf('"tools":[');
    const to = text.indexOf('],"tool_choice"', from);
    expect(from).toBeGreaterThan(0);
    expect(to).toBeGreaterThan(from);
    const original = encoder.encode(text);
    const originalKey = requestKeys(original).key;
    let changed = 0;
    let rejected = 0;
    // Every 37th letter of the tool list: in names, descriptions, schema keys and types, and
    // in the literals true/false (a change there is a body the reference rejects).
    for (let p = from + 9; p < to; p += 37) {
      const c = text[p]!;
      if (!/[a-z]/.test(c)) continue;
      const mutated = encoder.encode(text.slice(0, p) + (c === 'z' ? 'y' : String.fromCharCode(c.charCodeAt(0) + 1)) + text.slice(p + 1));
      expect(mutated.length).toBe(original.length);
      // The original's entry is kept (and first) when the changed list arrives.
      expect(agree(original)).toBe(hasTape);
      const ref = requestKeys.bind(null, mutated);
      let refKey: string | undefined;
      try {
        refKey = ref().key;
      } catch {
        rejected++;
      }
      agree(mutated);
      if (refKey !== undefined && refKey !== originalKey) changed++;
    }
    expect(changed).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(0);
  });

  it('more tool lists than the cache holds, revisited: evicted lists are made again, never mixed up', () => {
    clearToolsCache();
    const variants = Array.from({ length: 12 }, (_, i) => ({
      ...heavy,
      tools: heavy.tools.map((t: Obj, j: number) => (j === i ? { ...t, function: { ...t.function, description: `${t.function.description} (${i})` } } : t)),
    }));
    for (let pass = 0; pass < 2; pass++) {
      for (const [i, v] of variants.entries()) expect(agree(encoder.encode(JSON.stringify(turn(v, 5 + i + pass))))).toBe(hasTape);
    }
    const keys = new Set(variants.map((v) => requestKeys(encoder.encode(JSON.stringify(v))).key));
    expect(keys.size).toBe(variants.length);
  });

  it('the index skips a kept list only where it is the root `tools` member: not nested, not under another name, not sorted in with `functions`', () => {
    clearToolsCache();
    const T = JSON.stringify(heavy.tools);
    const msg = '{"role":"user","content":"hi"}';
    // The same bytes as far from the end as where they were kept, elsewhere in the body.
    const elsewhere = [
      `{"model":"gpt-4o","messages":[${msg},{"role":"user","content":"again","x":{"tools":${T},"more":"zzzz"}}]}`,
      `{"model":"gpt-4o","messages":[${msg},{"role":"user","content":"again"}],"functions":${T},"stream":false}`,
      `{"model":"gpt-4o","messages":[${msg},{"role":"user","content":"again"}],"tools":${T},"functions":[{"name":"legacy_fn","parameters":{"type":"object"}}]}`,
      `{"model":"gpt-4o","messages":[${msg},{"role":"user","content":"again"}],"tools":${T},"stream":false}`,
    ];
    for (const [i, body2] of elsewhere.entries()) {
      clearToolsCache();
      const after = body2.length - body2.lastIndexOf(T) - T.length;
      expect(after).toBeGreaterThanOrEqual(10);
      // Kept as the root tools of a body with exactly as many bytes after them.
      const body1 = `{"model":"gpt-4o","messages":[${msg}],"tools":${T},"pad":"${'p'.repeat(after - 10)}"}`;
      expect(body1.length - body1.lastIndexOf(T) - T.length).toBe(after);
      expect(agree(encoder.encode(body1))).toBe(hasTape);
      const before = counts();
      expect(agree(encoder.encode(body2))).toBe(hasTape);
      // Only the last one carries the list as its root `tools` with no `functions`: skipped.
      if (hasTape) expect(toolsCacheCounts.skipped - before.skipped, `case ${i}`).toBe(i === 3 ? 1 : 0);
    }
  });

  it("the provider detection reads a skipped list's verdict: Anthropic tools in a body of plain messages", () => {
    clearToolsCache();
    const tools = heavy.tools.map((t: Obj) => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters }));
    const plain = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'book it' }, { role: 'assistant', content: 'done' }];
    const before = counts();
    for (let k = 1; k <= plain.length; k++) {
      const bytes = encoder.encode(JSON.stringify({ model: 'm', messages: plain.slice(0, k), tools, max_tokens: 100 }));
      expect(agree(bytes)).toBe(hasTape);
      expect(requestKeys(bytes).provider).toBe('anthropic');
      // Where the tools are all that says Anthropic, a body without them is OpenAI chat.
      expect(requestKeys(encoder.encode(JSON.stringify({ model: 'm', messages: plain.slice(0, k), max_tokens: 100 }))).provider).toBe('openai-chat');
    }
    if (hasTape) expect(toolsCacheCounts.skipped - before.skipped).toBe(plain.length - 1);
    // The same list kept for Anthropic, in a body a context member makes generic: made again.
    const generic = encoder.encode(JSON.stringify({ model: 'm', messages: plain, tools, max_tokens: 100, context: { a: 1 } }));
    expect(agree(generic)).toBe(hasTape);
    expect(requestKeys(generic).provider).toBe('generic');
  });

  it.each([
    ['wasm-simd', () => new WasmEngine('wasm-simd')],
    ['js', () => new JsEngine()],
  ] as const)('the core ends the digest with a given tail as if the tail were in the text (%s engine)', (_name, make) => {
    const engine = make();
    const small = '{"messages":[{"role":"user","content":"hi"}],"options":{"b":1,"a":2}}';
    const tools = '[{"name":"f","parameters":{"z":1,"a":[true,null]}}]';
    const whole = encoder.encode(`${small.slice(0, -1)},"tools":${tools}}`);
    const canonicalTools = new TextDecoder().decode(engine.canonical(encoder.encode(tools), { keys: [], rootOnly: false }));
    const tail = encoder.encode(`,"tools":${canonicalTools}}`);
    const member = encoder.encode('messages');
    for (const text of [small, small.padEnd(2000, ' ')]) {
      const withTail = engine.elementsHex(encoder.encode(text), { keys: [], rootOnly: false }, true, true, member, true, tail);
      const direct = engine.elementsHex(whole, { keys: [], rootOnly: false }, true, true, member, true);
      expect(withTail).toEqual(direct);
    }
  });
});

describe('the kept top level (model, options, context)', () => {
  const chat = (requestBodies() as Obj)['openai-chat'].body as Obj;

  it('the same top level with other messages, and top levels changed by one byte, key as the reference', () => {
    for (let k = 2; k <= 10; k++) expect(agree(encoder.encode(JSON.stringify(turn(chat, k))))).toBe(hasTape);
    const text = JSON.stringify(turn(chat, 6));
    const variants = [
      text.replace('"temperature":0.7', '"temperature":0.8'),
      text.replace('"temperature":0.7', '"temperature":0.7 '),
      text.replace('"model":"gpt-4o', '"model":"gpt-4p'),
      text.replace(/}$/, ',"context":{"tenant":"a"}}'),
      text.replace(/}$/, ',"context":{"tenant":"b"}}'),
      text.replace(/}$/, ',"context":{"tenanu":"a"}}'),
      text.replace("\"seed\":1234567", "\"seed\":1234568"),
      // Top levels too large to keep, differing in their last bytes.
      text.replace(/}$/, `,"metadata":{"note":"${'x'.repeat(20_000)}a"}}`),
      text.replace(/}$/, `,"metadata":{"note":"${'x'.repeat(20_000)}b"}}`),
    ];
    expect(new Set(variants).size).toBe(variants.length);
    for (const v of variants) {
      expect(v).not.toBe(text);
      for (const body of [text, v, v, text]) expect(agree(encoder.encode(body))).toBe(hasTape);
    }
  });

  it('a top level changed in any one byte of a member (same length) keys as the reference, not as the kept one', () => {
    // The first and last byte of each top-level member's name and value, with each member in
    // turn the last of the body: the kept top level is found by comparing byte ranges, and a
    // range's ends are where a compare cut short would pass a change over.
    if (!hasTape) return; // no kept top level without the core's view
    const base: Obj = { ...turn(chat, 3), context: { tenant: 'abc' }, stop: ['x', 'yz'] };
    const bump = (c: string): string => (c === '9' ? '8' : /[0-9]/.test(c) ? String(Number(c) + 1) : c === 'z' ? 'y' : String.fromCharCode(c.charCodeAt(0) + 1));
    let answered = 0;
    let variants = 0;
    for (const last of Object.keys(base)) {
      if (last === 'messages' || last === 'tools') continue;
      const { [last]: moved, ...rest } = base;
      const body: Obj = { ...rest, [last]: moved };
      const text = JSON.stringify(body);
      for (const name of Object.keys(body)) {
        if (name === 'messages' || name === 'tools') continue;
        const at = text.indexOf(`"${name}":`);
        const value = JSON.stringify(body[name]);
        const from = at + name.length + 3;
        expect(text.slice(from, from + value.length)).toBe(value);
        const spots = [at + 1, at + name.length, from, from + value.length - 1, from + 1, from + value.length - 2];
        for (const s of new Set(spots)) {
          const c = text[s]!;
          if (!/[0-9a-z]/.test(c)) continue;
          const v = text.slice(0, s) + bump(c) + text.slice(s + 1);
          variants++;
          // A bumped name the raw path does not know (a model spelled otherwise) may go to the
          // walk; whatever it answers is the reference's (agree()), and the original always answers.
          for (const b of [text, v, v, text]) {
            const raw = agree(encoder.encode(b));
            if (b === text) expect(raw).toBe(true);
            else if (raw) answered++;
          }
        }
      }
    }
    expect(variants).toBeGreaterThan(200);
    expect(answered).toBeGreaterThan(variants);
  });

  it('the same top-level text under other ignored arguments or another provider keys as the reference', () => {
    const bytes = encoder.encode(JSON.stringify(turn(chat, 6)));
    const options = [{}, { ignoreArgs: ['temperature'] }, {}, { ignoreArgs: ['max_completion_tokens', 'seed'] }, { ignoreArgs: ['temperature'] }, { provider: 'generic' as const }, { provider: 'openai-chat' as const }, {}];
    for (const opts of options) expect(agree(bytes, opts)).toBe(hasTape);
    const keys = new Set(options.map((opts) => requestKeys(bytes, opts).key));
    expect(keys.size).toBeGreaterThan(1);
  });

  it('an embeddings body keeps its top level too: changed by one byte, or under other ignored arguments, it keys as the reference', () => {
    const text = JSON.stringify((requestBodies() as Obj)['openai-embeddings'].body);
    const variants = [text, text.replace('"dimensions":512', '"dimensions":513'), text.replace('"user":"user-42"', '"user":"user-43"'), text.replace('"encoding_format":"float"', '"encoding_format":"floaT"')];
    expect(new Set(variants).size).toBe(variants.length);
    for (const v of [...variants, ...variants]) {
      for (const opts of [{}, { ignoreArgs: ['user'] }, { ignoreArgs: ['dimensions'] }]) expect(agree(encoder.encode(v), opts)).toBe(hasTape);
    }
  });

  it("a caller that changes a returned signature does not change the next request's", () => {
    const bytes = encoder.encode(JSON.stringify({ ...turn(chat, 4), context: { tenant: 'a' } }));
    const first = requestDigests(bytes);
    expect(first.signature.contextKeys).toEqual(['tenant']);
    first.signature.contextKeys.push('changed');
    first.signature.toolNames.length = 0;
    expect(agree(bytes)).toBe(hasTape);
    expect(requestDigests(bytes).signature.contextKeys).toEqual(['tenant']);
  });
});

/**
 * Changes one letter of `text` every `step` bytes in [from, to) (same length), each right after
 * `text` was keyed (its tool list kept): every changed body is declined or keyed as the
 * reference. Returns how many changed bodies the reference keys differently from `text`.
 */
function oneLetterChanges(text: string, from: number, to: number, step: number, opts: NormalizeOptions): number {
  const original = encoder.encode(text);
  const originalKey = requestKeys(original, opts).key;
  let changed = 0;
  for (let p = from; p < to; p += step) {
    const c = text[p]!;
    if (!/[a-y]/.test(c)) continue;
    const mutated = encoder.encode(text.slice(0, p) + String.fromCharCode(c.charCodeAt(0) + 1) + text.slice(p + 1));
    expect(agree(original, opts)).toBe(hasTape);
    let refKey: string | undefined;
    try {
      refKey = requestKeys(mutated, opts).key;
    } catch {
      continue;
    }
    // Declined (a snake_case name, a literal broken) or keyed as the reference.
    agree(mutated, opts);
    if (refKey !== originalKey) changed++;
  }
  return changed;
}

/**
 * Keys every `step`-th turn of a conversation (`turnOf(k)`: the body of its first k items, the
 * same tools) as the reference; its tool list is canonicalized once and skipped by the index
 * from the second request on.
 */
function conversationSkipsItsTools(turnOf: (k: number) => string, items: number, step: number, opts: NormalizeOptions): void {
  clearToolsCache();
  const before = counts();
  let turns = 0;
  for (let k = 1; k <= items; k += step) {
    expect(agree(encoder.encode(turnOf(k)), opts)).toBe(hasTape);
    turns++;
  }
  if (!hasTape) return;
  expect(toolsCacheCounts.misses - before.misses).toBe(1);
  expect(toolsCacheCounts.skipped - before.skipped).toBe(turns - 1);
}

describe('what the raw-bytes path keeps for Gemini and Converse bodies on their routes', () => {
  const gemini = geminiBody() as { body: Obj; endpoint: { method: string; url: string } };
  const converse = converseBody() as { body: Obj; endpoint: { method: string; url: string } };
  const at = (endpoint: { method: string; url: string }) => ({ endpoint });
  it('a Gemini conversation growing turn by turn keys as the reference, its root tools skipped by the index from the second request on', () => {
    conversationSkipsItsTools((k) => JSON.stringify({ ...gemini.body, contents: gemini.body.contents.slice(0, k) }), gemini.body.contents.length, 4, at(gemini.endpoint));
  });

  it('a Gemini tool list changed by one byte (same length) after the original was kept is never answered by it', () => {
    clearToolsCache();
    const text = JSON.stringify({ ...gemini.body, contents: gemini.body.contents.slice(0, 6) });
    const from = text.indexOf('"tools":[');
    expect(from).toBeGreaterThan(0);
    const changed = oneLetterChanges(text, from + 9, text.indexOf('"toolConfig"', from), 53, at(gemini.endpoint));
    expect(changed).toBeGreaterThan(20);
  });

  it('an Ollama conversation growing turn by turn keys as the reference, its root tools skipped from the second request on; a one-byte change is never answered by the kept list', () => {
    const ollama = ollamaChatBody() as { body: Obj; endpoint: { method: string; url: string } };
    const ollamaTurn = (k: number): string => JSON.stringify({ ...ollama.body, messages: ollama.body.messages.slice(0, k) });
    conversationSkipsItsTools(ollamaTurn, ollama.body.messages.length, 5, at(ollama.endpoint));
    const text = ollamaTurn(8);
    const from = text.indexOf('"tools":[');
    expect(from).toBeGreaterThan(0);
    const changed = oneLetterChanges(text, from + 9, text.indexOf('],"stream"', from), 61, at(ollama.endpoint));
    expect(changed).toBeGreaterThan(20);
    // The same top level under other ignored arguments, and changed by one byte.
    const bytes = encoder.encode(text);
    for (const opts of [{ ignoreArgs: ['temperature'] }, {}, { ignoreArgs: ['seed'] }]) expect(agree(bytes, { ...at(ollama.endpoint), ...opts })).toBe(hasTape);
    expect(agree(encoder.encode(text.replace('"num_ctx":32768', '"num_ctx":32769')), at(ollama.endpoint))).toBe(hasTape);
  });

  it("a Converse conversation keys as the reference, its toolConfig's tools skipped from the second request on, and only there", () => {
    const converseTurn = (k: number): string => JSON.stringify({ ...converse.body, messages: converse.body.messages.slice(0, k) });
    conversationSkipsItsTools(converseTurn, converse.body.messages.length, 6, at(converse.endpoint));
    const text = converseTurn(7);
    const from = text.indexOf('"toolConfig":{"tools":[');
    expect(from).toBeGreaterThan(0);
    expect(oneLetterChanges(text, from + 23, text.indexOf('"toolChoice"', from), 59, at(converse.endpoint))).toBeGreaterThan(20);
    // The same bytes in the same place under another member name (the same length): not skipped.
    const renamed = [text.replace('"toolConfig":{', '"toolConfiG":{'), text.replace('"toolConfig":{"tools":[', '"toolConfig":{"toolz":[')];
    for (const body of renamed) {
      expect(agree(encoder.encode(text), at(converse.endpoint))).toBe(hasTape);
      const b = counts();
      agree(encoder.encode(body), at(converse.endpoint));
      expect(toolsCacheCounts.skipped - b.skipped).toBe(0);
    }
  });

  it('a Gemini or Converse top level changed by one byte (same length) right after the original was kept is never answered by it, the Converse tools aside included', () => {
    for (const [shape, head, tail] of [
      [gemini, '"systemInstruction"', '"contents"'],
      [gemini, '"toolConfig"', ''],
      [converse, '"system"', '"messages"'],
      [converse, '],"toolChoice"', ''],
    ] as const) {
      clearToolsCache();
      const text = JSON.stringify(shape.body);
      const from = text.indexOf(head);
      const to = tail === '' ? text.length : text.indexOf(tail);
      expect(from).toBeGreaterThan(0);
      expect(oneLetterChanges(text, from, to, 5, at(shape.endpoint)), head).toBeGreaterThan(8);
    }
  });

  it('the same top level on another route (another model in the path) or changed by one byte keys as the reference', () => {
    for (const [shape, other] of [
      [gemini, '/v1beta/models/gemini-2.5-pro:generateContent'],
      [converse, '/model/us.anthropic.claude-opus-4-1-20250805-v1%3A0/converse'],
    ] as const) {
      const text = JSON.stringify(shape.body);
      const bytes = encoder.encode(text);
      const moved = { ...shape.endpoint, url: other };
      const tweaked = encoder.encode(text.replace('"temperature":0', '"temperature":1'));
      expect(tweaked).not.toEqual(bytes);
      for (const [b, e] of [[bytes, shape.endpoint], [bytes, moved], [tweaked, shape.endpoint], [bytes, shape.endpoint], [bytes, moved]] as const) {
        expect(agree(b, at(e))).toBe(hasTape);
      }
      expect(requestKeys(bytes, at(moved)).key).not.toBe(requestKeys(bytes, at(shape.endpoint)).key);
    }
  });
});

describe('messages with kept attachment parts, filled where the view lies', () => {
  const gemini = geminiBody() as { body: Obj; endpoint: { method: string; url: string } };
  const converse = converseBody() as { body: Obj; endpoint: { method: string; url: string } };
  const anthropic = (requestBodies() as Obj).anthropic.body as Obj;
  const cases: [string, Obj, NormalizeOptions][] = [
    ['anthropic', anthropic, {}],
    ['gemini', gemini.body, { endpoint: gemini.endpoint }],
    ['bedrock-converse', converse.body, { endpoint: converse.endpoint }],
  ];

  it('a message with an image whose part is kept is filled with its canonical text, new text or not; its text, its image or a message beside it changed by one byte keys as the reference', () => {
    for (const [shape, body, opts] of cases) {
      const text = JSON.stringify(body);
      const image = text.indexOf('https://images.example.com/');
      expect(image, shape).toBeGreaterThan(0);
      const bytes = encoder.encode(text);
      // The first request keeps the tool list, the second the image's canonical part.
      expect(agree(bytes, opts)).toBe(hasTape);
      expect(agree(bytes, opts)).toBe(hasTape);
      const before = { ...filledCounts };
      expect(agree(bytes, opts)).toBe(hasTape);
      if (hasTape) expect(filledCounts.spliced - before.spliced, shape).toBe(1);
      // The message before the image's, the image's own text and its URL, and the message after.
      const changed = oneLetterChanges(text, image - 900, image + 700, 23, opts);
      expect(changed, shape).toBeGreaterThan(30);
    }
  });

  it('a message with an image and members out of order (not canonical but for its hole) is made canonical once filled, kept part or not', () => {
    const text = JSON.stringify(anthropic);
    const image = text.indexOf('{"type":"image"');
    // The text part before the image, with members of its own that the view copies in body order.
    const textPart = text.lastIndexOf('{"type":"text"', image);
    const unsorted = `${text.slice(0, textPart)}{"zeta":1,"alpha":2,${text.slice(textPart + 1)}`;
    expect(unsorted).not.toBe(text);
    const before = { ...filledCounts };
    for (const t of [text, text, unsorted, unsorted, text, unsorted]) expect(agree(encoder.encode(t))).toBe(hasTape);
    // The unsorted ones filled by the canonicalizing path (the part kept by the earlier requests).
    if (hasTape) expect(filledCounts.made - before.made).toBeGreaterThanOrEqual(3);
  });

  it('two images in one message, and the same image in two messages, key as the reference when repeated', () => {
    const text = JSON.stringify(anthropic);
    const image = text.indexOf('{"type":"image"');
    const end = text.indexOf('}}', image) + 2;
    const part = text.slice(image, end);
    const twice = text.slice(0, end) + ',' + part.replace('.png', '.jpg') + text.slice(end);
    const elsewhere = text.replace('"content":[{"type":"text"', `"content":[${part},{"type":"text"`);
    expect(elsewhere).not.toBe(text);
    for (const t of [twice, elsewhere, twice, elsewhere, text]) expect(agree(encoder.encode(t))).toBe(hasTape);
  });
});
