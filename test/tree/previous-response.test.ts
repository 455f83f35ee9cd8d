// The Responses API keeps a conversation on the server: a follow-up sends only its new input and
// `previous_response_id`, the id of the answer it continues (the OpenAI Agents SDK's
// `previousResponseId`, every step of its tool loop). The tree must hang such a follow-up under
// the answer it names, not at the root as if it were a first question: two conversations asking
// the same follow-up are two paths, not two alternatives of one prompt, and a tool result sent
// this way continues the call it answers. Recorded through createFetch by the real openai SDK
// against a fake Responses server speaking the wire format, as JSON and as a stream.
import OpenAI from 'openai';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConversationTree, formatTree } from '../../src/tree/index.ts';
import { loadTree } from '../../src/tree/load.ts';
import { treeCommand } from '../../src/tree/cli.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { readTape } from '../../src/store/tape-file.ts';
import { requestKeys } from '../../src/match/matcher.ts';
import type { HttpRecord } from '../../src/store/records.ts';
import { listenLoopback } from '../proxy/fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-tree-prev-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Item = { type?: string; role?: string; content?: unknown; call_id?: string; output?: string };
type Body = { model: string; input: Item[]; stream?: boolean; tools?: unknown[]; previous_response_id?: string; instructions?: string };

/**
 * A Responses API with tools: a user question naming cities gets one get_weather call per city,
 * a tool result gets a text answer saying it. Every id is fresh, as the API's are.
 */
async function startWeatherApi() {
  let n = 0;
  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    const body = JSON.parse(raw) as Body;
    n++;
    const last = body.input.at(-1)!;
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
    let output: Record<string, unknown>[];
    if (last.role === 'user') {
      const cities = String(last.content).match(/Paris|Oslo|Rome/g) ?? [];
      output = cities.map((city, k) => ({ type: 'function_call', id: `fc_${n}_${k}`, call_id: `call_${n}_${k}`, name: 'get_weather', arguments: JSON.stringify({ city }), status: 'completed' }));
    } else {
      output = [{ type: 'message', id: `msg_${n}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: `It is ${last.output}`, annotations: [] }] }];
    }
    const response = { id: `resp_${n}`, object: 'response', created_at: 1767225600, status: 'completed', model: body.model, output, usage, incomplete_details: null, error: null, store: true };
    if (!body.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(response));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let seq = 0;
    const ev = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
    ev('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
    output.forEach((item, i) => {
      ev('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress' } });
      ev('response.output_item.done', { output_index: i, item });
    });
    ev('response.completed', { response });
    res.end();
  });
  return listenLoopback(server);
}

const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', description: 'Get weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true }];

/**
 * Two conversations at once, each a question, then a follow-up sent with previous_response_id;
 * every tool result goes back with previous_response_id too (the Agents SDK's way).
 */
async function recordTwoConversations(tape: string, stream: boolean): Promise<void> {
  const api = await startWeatherApi();
  const fetch = createFetch({ tape, mode: 'record' });
  try {
    const client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: 'sk-test-unused', fetch, maxRetries: 0 });
    const call = async (input: OpenAI.Responses.ResponseInput, prev: string | undefined): Promise<OpenAI.Responses.Response> => {
      const body = { model: 'gpt-4.1-mini', instructions: 'Multi-turn agent.', input, tools, ...(prev ? { previous_response_id: prev } : {}) };
      if (!stream) return client.responses.create(body);
      let done: OpenAI.Responses.Response | undefined;
      for await (const e of await client.responses.create({ ...body, stream: true })) if (e.type === 'response.completed') done = e.response;
      return done!;
    };
    const ask = async (q: string, prev?: string): Promise<OpenAI.Responses.Response> => {
      let r = await call([{ role: 'user', content: q }], prev);
      for (;;) {
        const calls = r.output.filter((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call');
        if (calls.length === 0) return r;
        const results = calls.map((c) => ({ type: 'function_call_output' as const, call_id: c.call_id, output: `${(JSON.parse(c.arguments) as { city: string }).city}: mild` }));
        r = await call(results, r.id);
      }
    };
    const conversation = async (q: string) => ask('And Rome?', (await ask(q)).id);
    await Promise.all([conversation('Weather in Paris?'), conversation('Weather in Oslo?')]);
  } finally {
    await fetch.close();
    await api.close();
  }
}

async function llmRecords(tape: string) {
  const recs = (await readTape(tape)).records.map((r) => r.value as HttpRecord).filter((r) => r.match === 'llm');
  return recs.map((r) => ({ record: r, body: r.request.body as Body }));
}

/** The id of a record's answer: the JSON body's, or a stream's response.completed response's. */
function responseId(rec: HttpRecord): string | undefined {
  const text = new TextDecoder().decode(rec.response.body);
  if (text.startsWith('{')) return (JSON.parse(text) as { id?: string }).id;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: ')) continue;
    const e = JSON.parse(line.slice(6)) as { type: string; response?: { id?: string } };
    if (e.type === 'response.completed') return e.response?.id;
  }
  return undefined;
}

async function treeJson(tape: string) {
  let out = '';
  const code = await treeCommand([tape, '--json'], async (text) => void (out += text));
  expect(code).toBe(0);
  return out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { pathHash: string; parentHash: string | null; responsePathHash: string; alternative: number; depth: number; key: string });
}

describe('a follow-up sent with previous_response_id continues the answer it names', () => {
  for (const stream of [false, true]) {
    it(`two concurrent conversations, ${stream ? 'streamed' : 'JSON'}: each follow-up and tool result under its own answer`, async () => {
      const tape = join(dir, `two-${stream}.tape`);
      await recordTwoConversations(tape, stream);
      const recs = await llmRecords(tape);
      expect(recs.length).toBe(8);
      // The SDK sent only the new input with the previous answer's id (else this tests nothing).
      const followUps = recs.filter((r) => r.body.input[0]!.content === 'And Rome?');
      expect(followUps.length).toBe(2);
      for (const f of followUps) expect(f.body.previous_response_id).toMatch(/^resp_\d+$/);

      const { tree } = await loadTree(tape);
      expect(tree.warnings).toEqual([]);
      // One system prompt, two questions under it, each conversation one unbranched path of
      // 8 messages: question, call, result, answer, follow-up, call, result, answer.
      expect(tree.stats()).toMatchObject({ roots: 1, branchPoints: 1, alternativeSets: 0, exchanges: 8, nodes: 17, maxLength: 9 });
      const text = formatTree(tree, { width: 40 });
      expect(text).toContain('1 conversation root · 17 messages · 8 recorded answers · 1 branch point · 0 prompts with alternatives · longest 9 messages');
      const lines = text.split('\n').slice(2).map((l) => l.replace(/ +← .*$/, ''));
      expect(lines.slice(0, 17)).toEqual([
        '#1 system    Multi-turn agent.',
        '├─ #2 user      Weather in Paris?',
        '│  #3 assistant get_weather({"city":"Paris"})',
        '│  #4 tool      → Paris: mild',
        '│  #5 assistant It is Paris: mild',
        '│  #6 user      And Rome?',
        '│  #7 assistant get_weather({"city":"Rome"})',
        '│  #8 tool      → Rome: mild',
        '│  #9 assistant It is Rome: mild',
        '└─ #2 user      Weather in Oslo?',
        '   #3 assistant get_weather({"city":"Oslo"})',
        '   #4 tool      → Oslo: mild',
        '   #5 assistant It is Oslo: mild',
        '   #6 user      And Rome?',
        '   #7 assistant get_weather({"city":"Rome"})',
        '   #8 tool      → Rome: mild',
        '   #9 assistant It is Rome: mild',
      ]);
      expect(text).not.toMatch(/answers \d, \d|answer \d\/\d/);

      // --json: each follow-up's exchange hangs under the final answer of its own first turn.
      const rows = await treeJson(tape);
      expect(rows.length).toBe(8);
      expect(rows.every((r) => r.alternative === 0)).toBe(true);
      const byKey = new Map(rows.map((r) => [r.key, r]));
      for (const f of followUps) {
        const row = byKey.get(f.record.key)!;
        expect(row.depth).toBe(5);
        const previous = recs.find((r) => responseId(r.record) === f.body.previous_response_id)!;
        expect(previous).toBeDefined();
        // The follow-up's user message is a child of the answer it names.
        expect(row.parentHash).toBe(byKey.get(previous.record.key)!.responsePathHash);
      }

      // Each follow-up as sent is a hit at full depth, under the key it was recorded with.
      for (const { record, body } of recs) {
        const r = tree.findOrCreate(body);
        expect(r).toMatchObject({ hit: true, divergence: null, created: 0 });
        expect(r.key).toBe(record.key);
        expect(r.key).toBe(requestKeys(body).key);
      }
    });
  }

  it('an id no record of the tape gave: the requests naming it hang under a line that says so', async () => {
    const tape = join(dir, 'unknown.tape');
    await recordTwoConversations(tape, false);
    const recs = await llmRecords(tape);
    // Leave out the first answer of the Paris conversation (the tape's first record asking it).
    const first = recs.findIndex((r) => r.body.input[0]!.content === 'Weather in Paris?');
    const missing = responseId(recs[first]!.record)!;
    const tree = ConversationTree.fromRecords(recs.filter((_, i) => i !== first).map((r) => r.record));
    expect(tree.warnings).toEqual([]);
    // Oslo's path as before (8 messages), and Paris from its tool result on (6), under one line
    // standing for the answer that is not on the tape.
    expect(tree.stats()).toMatchObject({ roots: 1, branchPoints: 1, alternativeSets: 0, exchanges: 7, nodes: 16, maxLength: 9 });
    const text = formatTree(tree, { width: 40 });
    expect(text).toContain(`#2 ?         previous response ${missing}: on no recording of this tape`);
    expect(text).toMatch(/#3 tool {6}→ Paris: mild/);
    expect(text).toMatch(/#9 assistant It is Rome: mild/);
  });

  it('new instructions on a follow-up (a handoff to another agent) are a system message where they took over', () => {
    const answer = (id: string, text: string) => ({ id, object: 'response', status: 'completed', model: 'm', output: [{ type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }] });
    const tree = ConversationTree.fromRecords([
      { request: { model: 'm', instructions: 'Triage.', input: 'Hi' }, value: answer('resp_a', 'Hello') },
      { request: { model: 'm', instructions: 'Triage.', previous_response_id: 'resp_a', input: 'Book a flight' }, value: answer('resp_b', 'Handing over') },
      { request: { model: 'm', instructions: 'Flights.', previous_response_id: 'resp_b', input: 'To Rome' }, value: answer('resp_c', 'Booked') },
    ]);
    expect(tree.warnings).toEqual([]);
    expect(tree.stats()).toMatchObject({ roots: 1, branchPoints: 0, alternativeSets: 0, exchanges: 3, nodes: 8 });
    expect([...tree.nodes()].map((n) => `${n.role} ${JSON.stringify((n.message as { content: { text: string }[] }).content[0]!.text)}`)).toEqual([
      'system "Triage."',
      'user "Hi"',
      'assistant "Hello"',
      'user "Book a flight"',
      'assistant "Handing over"',
      'system "Flights."',
      'user "To Rome"',
      'assistant "Booked"',
    ]);
  });

  it('an answer recorded live with addResponse(result, …) is continued by a follow-up that names it', async () => {
    const api = await startWeatherApi();
    try {
      const client = new OpenAI({ baseURL: `${api.url}/v1`, apiKey: 'sk-test-unused', maxRetries: 0 });
      const tree = new ConversationTree();
      const body = { model: 'gpt-4.1-mini', instructions: 'Be brief.', input: [{ role: 'user' as const, content: 'Weather in Oslo?' }], tools };
      const r = tree.findOrCreate(body);
      const answer = await client.responses.create(body);
      tree.addResponse(r, { messages: answer.output, value: answer });
      const call = answer.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
      const follow = { model: 'gpt-4.1-mini', instructions: 'Be brief.', previous_response_id: answer.id, input: [{ type: 'function_call_output' as const, call_id: call.call_id, output: 'Oslo: mild' }], tools };
      const next = tree.findOrCreate(follow);
      // system, question and the recorded call are walked; the tool result is the new message.
      expect(next.matched).toBe(3);
      expect(next.divergence!.parent!.origin).toBe('response');
      expect(next.key).toBe(requestKeys(follow).key);
      expect(tree.stats()).toMatchObject({ roots: 1, branchPoints: 0 });
    } finally {
      await api.close();
    }
  });
});
