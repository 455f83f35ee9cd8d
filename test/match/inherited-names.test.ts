// Members named like Object.prototype's properties (`constructor`, `toString`, `__proto__`, ...)
// are members like any other (docs/hash-spec.md, rest()): in the key wherever an unknown member
// is, on the object path (requestKeys), on the raw-bytes path (requestDigests: the core's view
// and the TypeScript walk) and in the Python reference (scripts/reference-key.py). They were
// once left out (`k in out` is true for inherited names), so two requests differing only there
// shared one key and replayed each other's answers.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backend, canonicalize, requestDigests, requestKeys, TapedeckError } from '../../src/index.ts';
import { createMatcher } from '../../src/match/index.ts';
import { rawPathCounts } from '../../src/match/raw-keys.ts';
import { hasPython } from '../vectors/regenerate.ts';
import { agree } from './raw-agree.ts';

const NAMES = Object.getOwnPropertyNames(Object.prototype).sort();
const decoder = new TextDecoder();

// Where an unknown member lands in the view: `@` is the member under test (JSON text, so that
// `__proto__` is an own member, as JSON.parse makes it).
const PLACES: Record<string, string> = {
  'chat message': '{"model":"gpt-4o","messages":[{"role":"user","content":"Which plan?","@":1}]}',
  'text part': '{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"text","text":"hi","@":1}]}]}',
  'unknown part': '{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"custom","data":1,"@":1}]}]}',
  'image_url part': '{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/a.png","@":1}}]}]}',
  'tool_result part':
    '{"model":"claude-sonnet-4-5","max_tokens":9,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},' +
    '{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok","@":1}]}]}',
  'tool_use part': '{"model":"claude-sonnet-4-5","max_tokens":9,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{},"@":1}]}]}',
  'thinking part': '{"model":"claude-sonnet-4-5","max_tokens":9,"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"hm","@":1}]}]}',
  'custom tool call':
    '{"model":"gpt-4o","messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"custom","custom":{"name":"g","input":"x"},"@":1}]}]}',
  'responses item': '{"model":"gpt-4o","input":[{"type":"reasoning","summary":[],"encrypted_content":"e","@":1}]}',
  'chat function tool': '{"model":"gpt-4o","messages":[],"tools":[{"type":"function","function":{"name":"f","@":1}}]}',
  'chat tool wrapper': '{"model":"gpt-4o","messages":[],"tools":[{"type":"function","function":{"name":"f"},"@":1}]}',
  'anthropic tool': '{"model":"claude-sonnet-4-5","max_tokens":9,"messages":[],"tools":[{"name":"f","input_schema":{"type":"object"},"@":1}]}',
  'built-in tool': '{"model":"gpt-4o","input":"hi","tools":[{"type":"web_search","@":1}]}',
  'generic message': '{"messages":[{"role":"narrator","content":"Once.","@":1}],"context":{}}',
  'top-level option': '{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"@":1}',
};

/**
 * The body of a place with the member named `name` set to `value` (undefined: without it);
 * `escaped`: the name's first character as a \u escape, which the core's view declines, so that
 * the TypeScript walk (src/match/raw-keys/walk.ts) keys the body.
 */
function body(place: string, name: string, value: unknown, escaped = false): string {
  const text = PLACES[place]!;
  if (value === undefined) return text.replace(/,"@":1/, '');
  const spelled = escaped ? `"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${name.slice(1)}"` : JSON.stringify(name);
  return text.replace('"@":1', `${spelled}:${JSON.stringify(value)}`);
}

const keyOf = (text: string): string => requestKeys(text).key;

describe(`members named like Object.prototype's (${backend()})`, () => {
  for (const place of Object.keys(PLACES)) {
    it(`${place}: every such name is in the key, with its value`, () => {
      const without = keyOf(body(place, '', undefined));
      for (const name of NAMES) {
        const a = body(place, name, 'enterprise');
        const b = body(place, name, 'free');
        const view = decoder.decode(canonicalize(requestKeys(a).view));
        expect(view, `${place}: ${name}`).toContain(`${JSON.stringify(name)}:"enterprise"`);
        expect(keyOf(a), `${place}: ${name}`).not.toBe(keyOf(b));
        expect(keyOf(a), `${place}: ${name}`).not.toBe(without);
      }
    });

    it(`${place}: the raw-bytes path gives the object path's digests`, () => {
      let answered = 0;
      for (const name of NAMES) {
        for (const value of ['enterprise', { nested: [1] }]) {
          for (const escaped of [false, true]) {
            const text = body(place, name, value, escaped);
            if (agree(text)) answered++;
            expect(requestDigests(new TextEncoder().encode(text)).key, text).toBe(keyOf(text));
            // The escaped spelling is the same name: the same key.
            if (escaped) expect(keyOf(text), text).toBe(keyOf(body(place, name, value)));
          }
        }
      }
      // The raw path keys them (the core's view or the walk) rather than declining them all.
      if (backend() !== 'js' && place !== 'responses item') expect(answered, place).toBeGreaterThan(0);
    });
  }

  it('the matcher does not answer one request with the recording of another that differs only in `constructor`', () => {
    const a = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Which plan?', constructor: 'enterprise' }] };
    const b = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Which plan?', constructor: 'free' }] };
    const m = createMatcher({ mode: 'exact', recordings: [{ request: a, response: 'answer for enterprise' }] });
    let err: unknown;
    try {
      m.match(new TextEncoder().encode(JSON.stringify(b)));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TapedeckError);
    expect((err as TapedeckError).code).toBe('E_MISS');
    expect(m.match(new TextEncoder().encode(JSON.stringify(a))).recording.response).toBe('answer for enterprise');
  });

  it("the core's own view (assembly/view.ts) keys chat-family bodies with such members on the wasm backends", () => {
    const places = ['chat message', 'text part', 'tool_result part', 'tool_use part', 'chat function tool', 'anthropic tool'];
    for (const place of places) {
      for (const name of ['constructor', '__proto__', 'toString']) {
        const text = body(place, name, 'x');
        const before = { ...rawPathCounts };
        const d = requestDigests(new TextEncoder().encode(text));
        expect(d.key, `${place}: ${name}`).toBe(keyOf(text));
        expect(rawPathCounts.answered - before.answered, `${place}: ${name}`).toBe(backend() === 'js' ? 0 : 1);
        expect(rawPathCounts.core - before.core, `${place}: ${name}`).toBe(backend() === 'js' ? 0 : 1);
      }
    }
  });

  it.skipIf(!hasPython)('the Python reference (scripts/reference-key.py) gives the same keys (skipped where python3 is missing)', () => {
    const texts: string[] = [];
    for (const place of Object.keys(PLACES)) for (const name of NAMES) texts.push(body(place, name, 'enterprise'));
    const script = [
      'import importlib.util, json, sys',
      `spec = importlib.util.spec_from_file_location('rk', ${JSON.stringify(join(import.meta.dirname, '../../scripts/reference-key.py'))})`,
      'rk = importlib.util.module_from_spec(spec); spec.loader.exec_module(rk)',
      'print(json.dumps([rk.request_keys(t, None, text=True)["key"] for t in json.load(sys.stdin)]))',
    ].join('\n');
    const run = spawnSync('python3', ['-c', script], { input: JSON.stringify(texts), encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const keys = JSON.parse(run.stdout) as string[];
    expect(keys.length).toBe(texts.length);
    texts.forEach((t, i) => expect(keyOf(t), t).toBe(keys[i]));
  });
});
