// The shape of the answer a request asks for: a stream of events or one JSON body, how many
// choices, which format. The request key holds it already (docs/matching.md, "Shape-deciding
// arguments are always in the key"); the matcher's fallbacks (signature, sequential), which
// look past the key, need it on its own: a recording of another shape is an answer the client
// cannot read (a plain body read as a stream yields no chunk, an event stream read as a body
// throws), so no fallback crosses it.
import { canonicalText } from '../core/value.ts';
import { SHAPE_ARGS_KEPT, SHAPE_DEFAULTS } from '../providers/normalize.ts';

/**
 * The options of a view that decide the answer's shape: the chat family's (SHAPE_DEFAULTS,
 * SHAPE_ARGS_KEPT), Ollama's `format` (its JSON mode and structured output), and Gemini's
 * operation (`streamGenerateContent`), `alt=sse` and output dimensionality. Bedrock's streaming
 * operations put `stream: true` in the view. Each is in the view only when it is not at its
 * default, as the key holds it.
 */
const SHAPE_OPTIONS = new Set<string>([...Object.keys(SHAPE_DEFAULTS), ...SHAPE_ARGS_KEPT, 'format', 'operation', 'alt', 'outputDimensionality']);

/** Members of Gemini's generationConfig that decide the answer's shape (n, format, modalities, log-probabilities). */
const GENERATION_SHAPE = ['candidateCount', 'responseMimeType', 'responseSchema', 'responseJsonSchema', 'responseModalities', 'responseLogprobs', 'logprobs'];

const NONE: ReadonlySet<string> = new Set();

/**
 * The answer shape of a normalized view's `options`: the canonical JSON of its shape-deciding
 * members, or '' when it has none (a plain answer of one choice in the default format). Two
 * requests whose views have equal options have the same shape; a streamed and a plain request
 * never do.
 *
 * @example
 * answerShape({ stream: true, temperature: 0 }) // '{"stream":true}'
 * answerShape({ max_tokens: 50 })                // ''
 */
export function answerShape(options: unknown): string {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) return '';
  const o = options as Record<string, unknown>;
  let shape: Record<string, unknown> | undefined;
  for (const name of Object.keys(o)) {
    if (SHAPE_OPTIONS.has(name)) (shape ??= {})[name] = o[name];
    else if (name === 'generationConfig' && o[name] !== null && typeof o[name] === 'object') {
      const g = o[name] as Record<string, unknown>;
      for (const k of GENERATION_SHAPE) if (g[k] !== undefined) (shape ??= {})[`generationConfig.${k}`] = g[k];
    }
  }
  if (shape === undefined) return '';
  // The common cases, one member of a plain value (`stream: true`, an embeddings body's
  // `encoding_format`), without the serializer: JSON.stringify spells a string, a boolean and a
  // finite number as RFC 8785 does (the serializer cost the embeddings body ~2 us a request).
  const names = Object.keys(shape);
  if (names.length === 1) {
    const v = shape[names[0]!];
    if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) return `{${JSON.stringify(names[0])}:${JSON.stringify(v)}}`;
  }
  return canonicalText(shape, NONE);
}
