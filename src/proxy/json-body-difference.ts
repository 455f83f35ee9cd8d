/**
 * What a JSON request that is no LLM call (Google's upload `start` with the file's metadata, a
 * message batch, a files or vector-store call) changes against the closest recording of its
 * route. Its miss said only "none of the N recordings for ... has this request"; this names the
 * member and both values (`file.sizeBytes is "30008", the closest recording's "50008"`).
 *
 * Both sides are compared as stored: the request as redacted for its record, the recordings'
 * bodies as the tape holds them.
 */
import { differenceCount, firstDifference } from '../match/json-difference.ts';
import { isBytes } from '../bytes.ts';

function shown(v: unknown): string {
  if (v === undefined) return 'absent';
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/**
 * The first difference of `asked` from the closest of `recorded`, or undefined when no recording
 * has a JSON body.
 *
 * @example
 * jsonBodyDifference({ file: { sizeBytes: '30008' } }, [{ file: { sizeBytes: '50008' } }])
 * // 'file.sizeBytes is "30008", the closest recording\'s "50008"'
 */
export function jsonBodyDifference(asked: unknown, recorded: Iterable<unknown>): string | undefined {
  let best: unknown;
  let bestDistance = Infinity;
  for (const body of recorded) {
    if (body === undefined || isBytes(body) || typeof body === 'string') continue;
    const d = differenceCount(asked, body);
    if (d < bestDistance) [best, bestDistance] = [body, d];
  }
  if (bestDistance === Infinity) return undefined;
  const d = firstDifference(asked, best);
  if (!d) return undefined;
  const where = d.path === '' ? 'the body' : d.path;
  return `${where} is ${shown(d.got)}, the closest recording's ${shown(d.recorded)}`;
}
