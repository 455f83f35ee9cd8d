// Secrets in tool-call arguments of parallel calls streamed interleaved, and in JSON text written
// whole once in a stream. OpenAI streams parallel calls' arguments interleaved: each event holds
// one call at `tool_calls[0]`, its `index` saying which; joined by position, two calls' pieces
// made a text of neither, so a `password` member or a key in either reached the tape (and the
// scan called it clean). A Responses stream writes each call's arguments whole in its `.done`
// events and in `response.completed`: the member's quotes are escaped in the event's text, so no
// redaction read it. Oracle: the arguments joined per call as the SDK joins them, after
// redaction, parse to the same JSON with the secrets masked, and no 6 characters of a secret
// are left in the bytes; the scan's reading of parsed events finds the same secrets before.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { redactStream, splitCredentials } from '../../src/store/stream-redact.ts';
import { rng } from '../reference.ts';

const r = redactor({ salt: '00112233445566778899aabbccddeeff' });
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const token = (next: () => number, n: number) => Array.from({ length: n }, () => ALNUM[Math.floor(next() * ALNUM.length)]).join('');

/** Text cut into pieces of 1-7 characters. */
function cut(text: string, next: () => number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const n = 1 + Math.floor(next() * 7);
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/** The call's arguments: a password member, or a key inside a note, or both. */
function argumentsOf(next: () => number, k: number): { text: string; secrets: string[] } {
  const password = `Pw-${token(next, 20)}`;
  const key = `sk-proj-${token(next, 40)}`;
  const kind = Math.floor(next() * 3);
  const doc = kind === 0 ? { user: `u${k}`, password } : kind === 1 ? { title: `t${k}`, note: `use ${key} now` } : { user: `u${k}`, password, note: `key ${key}` };
  return { text: JSON.stringify(doc), secrets: kind === 0 ? [password] : kind === 1 ? [key] : [password, key] };
}

/**
 * An OpenAI chat stream of `calls` parallel tool calls, their argument pieces interleaved at
 * random; `late`: each tool call written with `index` after `function` (as a server serializing
 * Python's field order does), not first.
 */
function chatStream(calls: string[], next: () => number, late: boolean): string {
  const ev = (tc: Record<string, unknown>) => {
    const call = late ? { id: tc.id, type: tc.type, function: tc.function, index: tc.index } : tc;
    return `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-4o', choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }] })}\n\n`;
  };
  let out = `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] })}\n\n`;
  calls.forEach((_, k) => (out += ev({ index: k, id: `call_${k}`, type: 'function', function: { name: `f${k}`, arguments: '' } })));
  const queues = calls.map((c) => cut(c, next));
  while (queues.some((q) => q.length > 0)) {
    const open = queues.map((q, k) => [q, k] as const).filter(([q]) => q.length > 0);
    const [q, k] = open[Math.floor(next() * open.length)]!;
    out += ev({ index: k, function: { arguments: q.shift()! } });
  }
  return `${out}data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] })}\n\ndata: [DONE]\n\n`;
}

/** Each call's arguments joined by its index, as the SDK joins them. */
function joinedCalls(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^data: (\{.*)$/gm)) {
    for (const tc of JSON.parse(m[1]!).choices?.[0]?.delta?.tool_calls ?? []) out[tc.index] = (out[tc.index] ?? '') + (tc.function?.arguments ?? '');
  }
  return out;
}

/** The stream's events as the scan reads them (parsed). */
const eventsOf = (text: string) => [...text.matchAll(/^data: (\{.*)$/gm)].map((m) => ({ kind: '', docs: [JSON.parse(m[1]!) as unknown] }));

/** The arguments with each secret masked as one string's redaction masks it. */
function expectedArgs(text: string): unknown {
  return JSON.parse(new TextDecoder().decode(r.bytes(new TextEncoder().encode(text), 'application/json')));
}

describe('secrets in the arguments of parallel tool calls streamed interleaved', () => {
  it('are masked in each call, its index written first or last; the scan finds them in the stream before', () => {
    let interleaved = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const next = rng(seed);
      const n = 2 + Math.floor(next() * 3);
      const calls = Array.from({ length: n }, (_, k) => argumentsOf(next, k));
      const late = seed % 2 === 0;
      const text = chatStream(calls.map((c) => c.text), next, late);
      const body = new TextEncoder().encode(text);
      const out = redactStream(body, 'text/event-stream', r);
      const after = new TextDecoder().decode(out!.body);
      const args = joinedCalls(after);
      expect(args.length, `seed ${seed}`).toBe(n);
      args.forEach((a, k) => expect(JSON.parse(a), `seed ${seed} call ${k}`).toEqual(expectedArgs(calls[k]!.text)));
      for (const c of calls) for (const s of c.secrets) for (let i = 3; i + 6 <= s.length; i++) expect(after.includes(s.slice(i, i + 6)), `seed ${seed}: ${s}`).toBe(false);
      // The scan of a tape recorded before reports each secret: pieces are 1-7 characters, so
      // every one (23 or 48 characters) lies across events.
      const found = splitCredentials(eventsOf(text), (name) => name === 'password').map((f) => f.text);
      for (const c of calls) for (const s of c.secrets) expect(found, `seed ${seed}`).toContain(s);
      if (new Set(text.match(/"index":[1-9]/g)).size > 0) interleaved++;
    }
    expect(interleaved).toBeGreaterThan(150);
  });
});

describe('JSON text written whole once in a stream (a Responses call\'s arguments)', () => {
  it('has its secret-named members masked in the .done events and in response.completed', () => {
    const password = 'Tr0ub4dor-horse-battery-77';
    const args = JSON.stringify({ user: 'bob', password });
    const item = { id: 'fc_1', type: 'function_call', status: 'completed', arguments: args, call_id: 'call_1', name: 'login' };
    const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const text =
      ev('response.created', { response: { id: 'resp_1', status: 'in_progress', output: [] } }) +
      ev('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: args.slice(0, 20) }) +
      ev('response.function_call_arguments.delta', { item_id: 'fc_1', output_index: 0, delta: args.slice(20) }) +
      ev('response.function_call_arguments.done', { item_id: 'fc_1', output_index: 0, arguments: args }) +
      ev('response.output_item.done', { output_index: 0, item }) +
      ev('response.completed', { response: { id: 'resp_1', status: 'completed', output: [item] } });
    const out = redactStream(new TextEncoder().encode(text), 'text/event-stream', r);
    const after = new TextDecoder().decode(out!.body);
    expect(after.includes('Tr0ub4dor')).toBe(false);
    const masked = expectedArgs(args);
    const docs = [...after.matchAll(/^data: (\{.*)$/gm)].map((m) => JSON.parse(m[1]!));
    expect(JSON.parse(docs[3].arguments)).toEqual(masked);
    expect(JSON.parse(docs[4].item.arguments)).toEqual(masked);
    expect(JSON.parse(docs[5].response.output[0].arguments)).toEqual(masked);
    // The deltas joined read as the same masked text, so the SDK's assembled call agrees with its final one.
    expect(JSON.parse(docs[1].delta + docs[2].delta)).toEqual(masked);
    // Nothing else changed: events and their order as before.
    expect(docs.map((d) => d.type)).toEqual(['response.created', 'response.function_call_arguments.delta', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done', 'response.completed']);
  });

  it('leaves a string that only looks like JSON text, with no secret member, byte for byte', () => {
    const text = `data: ${JSON.stringify({ type: 'response.output_item.done', item: { arguments: JSON.stringify({ city: 'Paris', unit: 'C' }) } })}\n\ndata: [DONE]\n\n`;
    const body = new TextEncoder().encode(text);
    expect(redactStream(body, 'text/event-stream', r)!.body).toBe(body);
  });
});
