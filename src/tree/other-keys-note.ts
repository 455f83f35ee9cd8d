// A request whose whole conversation a tree holds, with answers at its end for other requests
// only, misses: an answer is served only to the request it was recorded for (another model's or
// other options' answer would be a wrong one). The miss then says what those answers were
// recorded for, so that a lookup from an eval's sweep (the same prompt, another model) does not
// read as a conversation the tape lacks.

/** What the note needs of the answers at a node. */
interface Answered {
  model?: string;
}

/**
 * The note of a miss at a node holding `alternatives` (each recorded for another request), for a
 * request of `model` (undefined when the input named none, e.g. a plain message list).
 *
 * @example
 * otherKeysNote([{ model: 'gpt-4o-mini' }], 'gpt-4.1')
 * // '1 answer recorded here is for other requests: model gpt-4.1 has none: it was recorded for gpt-4o-mini. …'
 */
export function otherKeysNote(alternatives: readonly Answered[], model: unknown): string {
  const n = alternatives.length;
  const head = n === 1 ? '1 answer recorded here is for other requests' : `${n} answers recorded here are for other requests`;
  const models = [...new Set(alternatives.map((a) => a.model).filter((m): m is string => typeof m === 'string'))];
  const why = 'an answer is served only to the request it was recorded for (model, tools and options), never to another';
  if (typeof model !== 'string' || models.length === 0) return `${head}: ${why}.`;
  if (!models.includes(model)) return `${head}: model ${model} has none: ${n === 1 ? 'it was' : 'they were'} recorded for ${models.join(', ')}; ${why}.`;
  return `${head}: ${model} has answers here for other tools or options (stream, max_tokens, a temperature of 0 or a sampling one, ...); ${why}.`;
}
