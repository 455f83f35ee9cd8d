// A sampling temperature is not in the request key (docs/matching.md, "Options"): a recording
// made at 0.2 answers a request at 0.7. That keeps tests replaying when a temperature is nudged,
// but an eval that sweeps temperatures would report one temperature's answer for all of them
// without a word. So an entry point that serves such a recording says which temperature answered
// which. Only the serving path calls this, and a request whose bytes never spell `temperature`
// costs one byte search, never a parse.

const WORD = 'temperature';

/** Where each API family carries its temperature: top level, or inside its generation options. */
const NESTED = ['generationConfig', 'inferenceConfig', 'options'] as const;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The temperature a request body asks for: top-level `temperature` (OpenAI, Anthropic,
 * Responses, the AI SDK's call options), else Gemini's `generationConfig`, Bedrock's
 * `inferenceConfig` or Ollama's `options`. Undefined when it gives none (the API's default).
 *
 * @example
 * temperatureOf({ model: 'gpt-4o', temperature: 0.7, messages: [] }) // 0.7
 * temperatureOf({ contents: [], generationConfig: { temperature: 1 } }) // 1
 * temperatureOf({ model: 'gpt-4o', messages: [] }) // undefined
 */
export function temperatureOf(body: unknown): number | undefined {
  if (!isObj(body)) return undefined;
  if (typeof body[WORD] === 'number') return body[WORD];
  for (const k of NESTED) {
    const o = body[k];
    if (isObj(o) && typeof o[WORD] === 'number') return o[WORD];
  }
  return undefined;
}

const said = (t: number | undefined) => (t === undefined ? 'with no temperature (the API default)' : `at temperature ${t}`);

/**
 * The note for a request answered by a recording made at another sampling temperature, or
 * undefined when both name the same one (or neither names one). `request` is the body as sent:
 * bytes (parsed only when they contain the word `temperature`) or the value a cache was given.
 *
 * @example
 * const note = samplingNote(new TextEncoder().encode('{"temperature":0.7,"messages":[]}'), { temperature: 0.2, messages: [] });
 * // 'A request at temperature 0.7 was answered by a recording made at temperature 0.2: ...'
 */
export function samplingNote(request: Uint8Array | unknown, recorded: unknown): string | undefined {
  const made = temperatureOf(recorded);
  let asked: number | undefined;
  if (request instanceof Uint8Array) {
    if (spells(request)) {
      try {
        asked = temperatureOf(JSON.parse(new TextDecoder().decode(request)));
      } catch {
        return undefined; // not JSON (compressed, form data): nothing to compare
      }
    }
  } else asked = temperatureOf(request);
  if (asked === made) return undefined;
  return (
    `A request ${said(asked)} was answered by a recording made ${said(made)}: a sampling temperature is not ` +
    'part of the request key (docs/matching.md, "Options"), so every temperature but 0 replays the same recordings. ' +
    'For a temperature sweep (an eval), record each temperature in a tape of its own.'
  );
}

/** Whether the bytes contain the word `temperature` (a search, no decoding). */
function spells(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(WORD) !== -1;
}
