// Answers recorded live, the way docs/tree.md shows: findOrCreate(requestBody), and on a miss
// the real OpenAI SDK calls the (fake) provider and addResponse records its answer. The answer
// must be recorded under the request's key, so a request of another model, tools or options is a
// miss and never served it, and it must sit where the SDK's follow-up request walks.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationTree, type FindResult } from '../../src/tree/index.ts';
import { requestKeys } from '../../src/match/matcher.ts';
import { errorOf } from '../helpers.ts';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';

let upstream: Upstream;
let client: OpenAI;
beforeAll(async () => {
  upstream = await startUpstream({ gapMs: 0 });
  client = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'sk-test-unused', maxRetries: 0 });
});
afterAll(() => upstream.close());

type Body = OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming;

const question: Body['messages'] = [
  { role: 'system', content: 'You are helpful.' },
  { role: 'user', content: 'Capital of France?' },
];
const mini: Body = { model: 'gpt-4o-mini', messages: question };
// The tester's requests: the same conversation, asked of another model with tools, or with
// options that change the answer's shape. A wrong replay of the mini answer for either would be
// served silently.
const others: Body[] = [
  { model: 'o3', messages: question, temperature: 0, tools: [{ type: 'function', function: { name: 'x', parameters: {} } }] },
  { model: 'gpt-4o-mini', messages: question, response_format: { type: 'json_object' }, n: 3 },
];

/** The body the SDK put on the wire for its last call. */
const lastSent = () => JSON.parse(upstream.calls.at(-1)!.body) as Body;

describe('an answer recorded after a miss is keyed by its request', () => {
  it('the miss result carries the request key', () => {
    const tree = new ConversationTree();
    const r = tree.findOrCreate(mini);
    expect(r.hit).toBe(false);
    expect(r.key).toBe(requestKeys(mini).key);
    // A plain message list has no key.
    expect(new ConversationTree().findOrCreate(question).key).toBeUndefined();
  });

  for (const form of ['result', 'node'] as const) {
    it(`addResponse(${form === 'result' ? 'r' : 'r.node'}, …) records under the request's key: other models and options miss`, async () => {
      const tree = new ConversationTree();
      const r = tree.findOrCreate(mini);
      const answer = await client.chat.completions.create(mini);
      // docs/tree.md's flow; the node form is how it read before, and user code still has it.
      const alt = tree.addResponse(form === 'result' ? r : r.node, { messages: [answer.choices[0]!.message], value: answer });
      expect(alt.key).toBe(requestKeys(mini).key);
      for (const other of others) {
        const o = tree.findOrCreate(other);
        expect(o.hit, `${other.model} ${JSON.stringify(other.response_format ?? other.tools)}`).toBe(false);
        expect(o.alternative).toBeUndefined();
      }
      // The request itself is served its answer, once it is asked again.
      const again = tree.findOrCreate(mini);
      expect(again.hit).toBe(true);
      expect(again.alternative!.value).toBe(answer);
      expect(tree.stats()).toMatchObject({ hits: 1, misses: 1 + others.length, exchanges: 1 });
    });
  }

  it('the docs example, run as written, against the real SDK', async () => {
    const tree = new ConversationTree();
    const callTheApi = (body: Body) => client.chat.completions.create(body);
    async function serve(requestBody: Body) {
      const r = tree.findOrCreate(requestBody); // normalized exactly like the matcher
      if (r.hit) return r.alternative!.value; // served, marked as reused with its own timestamp
      const answer = await callTheApi(requestBody);
      tree.addResponse(r, { messages: [answer.choices[0]!.message], value: answer });
      return answer;
    }
    const first = (await serve(mini)) as OpenAI.Chat.Completions.ChatCompletion;
    const live = upstream.calls.length;
    expect(await serve(mini)).toBe(first); // a hit: no call
    expect(upstream.calls.length).toBe(live);
    // Another model is a miss, so it is called and gets its own answer.
    const o3 = (await serve(others[0]!)) as OpenAI.Chat.Completions.ChatCompletion;
    expect(upstream.calls.length).toBe(live + 1);
    expect(o3).not.toBe(first);
    expect(await serve(others[0]!)).toBe(o3);
    expect(await serve(mini)).toBe(first);
  });

  it("given the result, the answer sits where the SDK's follow-up walks", async () => {
    const tree = new ConversationTree();
    const r = tree.findOrCreate(mini);
    const answer = await client.chat.completions.create(mini);
    tree.addResponse(r, { messages: [answer.choices[0]!.message], value: answer });
    // The follow-up as the SDK sends it: the answer's message as it came, then a new question.
    await client.chat.completions.create({ ...mini, messages: [...question, answer.choices[0]!.message, { role: 'user', content: 'And Germany?' }] });
    const next = tree.findOrCreate(lastSent());
    expect(next.matched).toBe(3); // system, user and the recorded answer
    expect(next.divergence).toMatchObject({ index: 3 });
    expect(next.divergence!.parent!.origin).toBe('response');
    expect(tree.stats()).toMatchObject({ roots: 1, branchPoints: 0 });
    // The same holds for findOrCreate(body, { response }).
    const t2 = new ConversationTree();
    t2.findOrCreate(mini, { response: { messages: [answer.choices[0]!.message], value: answer } });
    expect(t2.findOrCreate(lastSent()).matched).toBe(3);
    expect(t2.findOrCreate(others[0]!).hit).toBe(false);
  });

  it('two requests of different keys waiting at one node: the node alone is refused, the results record each under its own key', async () => {
    const tree = new ConversationTree();
    const a = tree.findOrCreate(mini);
    const b = tree.findOrCreate(others[0]!);
    expect(b.node).toBe(a.node);
    const [ansA, ansB] = await Promise.all([client.chat.completions.create(mini), client.chat.completions.create(others[0]!)]);
    const e = errorOf(() => tree.addResponse(a.node, { messages: [ansA.choices[0]!.message], value: ansA }));
    expect(e.code).toBe('E_TREE');
    expect(e.message).toMatch(/different request keys/);
    expect(a.node.alternatives).toEqual([]);
    tree.addResponse(b, { messages: [ansB.choices[0]!.message], value: ansB });
    // One request left waiting: the node alone is that request again.
    expect(tree.addResponse(a.node, { messages: [ansA.choices[0]!.message], value: ansA }).key).toBe(a.key);
    expect(tree.findOrCreate(mini).alternative!.value).toBe(ansA);
    expect(tree.findOrCreate(others[0]!).alternative!.value).toBe(ansB);
    expect(tree.findOrCreate(others[1]!).hit).toBe(false);
  });

  it('an explicit response.key wins; a result of a message list records without a key, as before', () => {
    const tree = new ConversationTree();
    const r = tree.findOrCreate(mini);
    expect(tree.addResponse(r, { messages: [{ role: 'assistant', content: 'Paris' }], key: 'k-explicit' }).key).toBe('k-explicit');
    expect(tree.addResponse(r.node, { messages: [{ role: 'assistant', content: 'Lyon' }], key: 'k-other' }).key).toBe('k-other');
    const plain = new ConversationTree();
    const p = plain.findOrCreate([{ role: 'user', content: 'hi' }]);
    expect(plain.addResponse(p, { messages: [{ role: 'assistant', content: 'hello' }] }).key).toBeUndefined();
    expect(plain.findOrCreate([{ role: 'user', content: 'hi' }]).hit).toBe(true);
  });

  it('anything but a node or a findOrCreate result of this tree is refused with E_ARG', () => {
    const tree = new ConversationTree();
    const r = tree.findOrCreate(mini);
    const answer = { messages: [{ role: 'assistant', content: 'Paris' }] };
    expect(errorOf(() => new ConversationTree().addResponse(r, answer)).code).toBe('E_ARG');
    expect(errorOf(() => tree.addResponse({ node: {}, hit: false } as unknown as FindResult, answer)).code).toBe('E_ARG');
    expect(errorOf(() => tree.addResponse(tree.find(mini) as unknown as FindResult, answer)).code).toBe('E_ARG');
  });
});
