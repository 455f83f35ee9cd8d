// A sampling temperature is not in the request key (docs/matching.md, "Options"): a recording
// made at 0.2 answers a request at 0.7. That keeps tests replaying when a temperature is nudged,
// but an eval that sweeps temperatures would report one temperature's answer for all of them
// without a word. So an entry point that serves such a recording says which temperature answered
// which. Only the serving path calls this, and only for a recording made at a sampling
// temperature: replays of recordings at 0 or with none (every benchmark's) do no new work.

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
 * undefined when both name the same one. `request` is the body as sent (bytes) or the value a
 * cache was given. Only a recording made at a sampling temperature is looked at (a recording at
 * 0 answers only requests at 0: the key holds it; one made without a temperature is left
 * alone), and then a request whose bytes spell the recording's own `"temperature":0.7` costs one
 * byte search, never a parse: replays of every other recording do no new work.
 *
 * @example
 * const note = samplingNote(new TextEncoder().encode('{"temperature":0.7,"messages":[]}'), { temperature: 0.2, messages: [] });
 * // 'A request at temperature 0.7 was answered by a recording made at temperature 0.2: ...'
 */
export function samplingNote(request: Uint8Array | unknown, recorded: unknown): string | undefined {
  const made = temperatureOf(recorded);
  if (made === undefined || made === 0) return undefined;
  let asked: number | undefined;
  if (request instanceof Uint8Array) {
    if (spells(request, made)) return undefined;
    try {
      asked = temperatureOf(JSON.parse(new TextDecoder().decode(request)));
    } catch {
      return undefined; // not JSON (compressed, form data): nothing to compare
    }
  } else asked = temperatureOf(request);
  if (asked === made) return undefined;
  return (
    `A request ${said(asked)} was answered by a recording made ${said(made)}: a sampling temperature is not ` +
    'part of the request key (docs/matching.md, "Options"), so every temperature but 0 replays the same recordings. ' +
    'For a temperature sweep (an eval), record each temperature in a tape of its own.'
  );
}

/** The bytes searched for, for the temperature last asked about (a sweep asks about a few). */
let needle: { t: number; bytes: Buffer } | undefined;

/**
 * Whether the bytes hold `"temperature":t` as JSON.stringify spells it (what the SDKs send),
 * followed by no further digit: the request asks for the recording's own temperature.
 */
function spells(bytes: Uint8Array, t: number): boolean {
  if (needle?.t !== t) needle = { t, bytes: Buffer.from(`"${WORD}":${JSON.stringify(t)}`) };
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = b.indexOf(needle.bytes);
  if (at === -1) return false;
  const next = b[at + needle.bytes.length];
  return next === undefined || !((next >= 0x30 && next <= 0x39) || next === 0x2e || next === 0x65 || next === 0x45);
}
