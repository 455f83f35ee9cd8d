// The miss diagnostics and the event-stream readers, given a wrong argument from plain
// JavaScript, throw an E_ARG naming the function, what it got and what to pass. Before, each
// threw Node's TypeError (`Cannot read properties of null (reading 'charCodeAt')`, of
// `request`), which names neither. parseSse and assembleStream also take the stream's bytes.
import { describe, expect, it } from 'vitest';
import { closestRecordings, explainMiss } from '../../src/index.ts';
import { assembleStream, parseSse } from '../../src/proxy/index.ts';
import { parseSse as innerParse } from '../../src/providers/sse-parse.ts';
import { errorOf } from '../helpers.ts';

describe('wrong arguments to the diagnostics and the stream readers', () => {
  it('explainMiss and closestRecordings: E_ARG for anything but a miss context', () => {
    for (const [name, f] of [['explainMiss', explainMiss], ['closestRecordings', closestRecordings]] as const) {
      for (const [bad, got] of [[null, 'got null'], [undefined, 'got undefined'], ['x', 'got the string "x"'], [{}, 'got an object without them'], [[], 'got an array']] as const) {
        const e = errorOf(() => (f as (c: unknown) => unknown)(bad));
        expect(e.code, `${name}(${String(bad)})`).toBe('E_ARG');
        expect(e.message).toContain(`${name} takes the context of a miss`);
        expect(e.message).toContain(got);
        expect(e.hint).toContain('E_MISS');
      }
    }
  });

  it('parseSse and assembleStream: E_ARG for neither text nor bytes; bytes read as their UTF-8', () => {
    for (const bad of [null, undefined, 5, new ArrayBuffer(4), { data: 'x' }]) {
      const p = errorOf(() => parseSse(bad as never));
      expect(p.code).toBe('E_ARG');
      expect(p.message).toContain('parseSse takes an event stream as a string or a Uint8Array');
      expect(p.hint).toContain('parseSse(await res.text())');
      const a = errorOf(() => assembleStream('text/event-stream', bad as never));
      expect(a.code).toBe('E_ARG');
      expect(a.message).toContain('assembleStream takes an event stream');
    }
    const text = 'event: ping\ndata: {"é":1}\n\ndata: [DONE]\n\n';
    expect(parseSse(new TextEncoder().encode(text))).toEqual(innerParse(text));
    expect(parseSse(text)).toEqual([{ event: 'ping', data: '{"é":1}' }, { event: 'message', data: '[DONE]' }]);
    const chat = 'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}\n\ndata: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';
    expect(assembleStream('text/event-stream', new TextEncoder().encode(chat))).toEqual(assembleStream('text/event-stream', chat));
    expect((assembleStream('text/event-stream', chat) as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toBe('hi');
  });
});
