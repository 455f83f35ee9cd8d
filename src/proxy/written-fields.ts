/**
 * The field names a hand-written recording may use (docs/hand-written.md), and the first name it
 * uses that is not one of them. A misspelt field is not an extra: `"stauts": 500` would leave the
 * status at its default of 200 and `"bdy"` the body empty, so the recording would replay as
 * something other than what was written. Request and response bodies and event data are the
 * user's own JSON and are not looked into.
 */
import { closestName } from '../edit-distance.ts';

/** The known fields of each object of a hand-written recording, by its place. */
export const WRITTEN_FIELDS = {
  recording: ['request', 'response'],
  request: ['method', 'url', 'headers', 'body'],
  response: ['status', 'headers', 'body', 'events', 'gapMs', 'cut'],
  event: ['event', 'data', 'afterMs'],
} as const;

/** A field a hand-written object has that its place does not know. */
export interface UnknownField {
  /** Its path, as the error names it: `response.stauts`, `response.events[2].dta`. */
  field: string;
  /** The known field it most likely misspells, if one is close. */
  suggestion?: string;
  /** The fields its place knows. */
  known: readonly string[];
}

/** The known name closest to a misspelt one: at most two edits away, case aside. */
const closest = (name: string, known: readonly string[]): string | undefined => closestName(name, known);

/**
 * The first field of `value` (an object at `path`, '' for the recording itself) that `known`
 * does not list; undefined when all are known.
 *
 * @example
 * unknownField({ bdy: {} }, 'response', WRITTEN_FIELDS.response) // { field: 'response.bdy', suggestion: 'body', known: [...] }
 */
export function unknownField(value: object, path: string, known: readonly string[]): UnknownField | undefined {
  for (const name of Object.keys(value)) {
    if (known.includes(name)) continue;
    const suggestion = closest(name, known);
    return { field: path ? `${path}.${name}` : name, known, ...(suggestion ? { suggestion } : {}) };
  }
  return undefined;
}
