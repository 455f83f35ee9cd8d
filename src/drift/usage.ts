// Token usage between two recordings of a request: what changed, whether past the tolerance, and
// the words the reports say it in. Usage is read apart from the text because the same words can
// cost far more tokens (hidden reasoning changed): a report that said only "text 100% similar"
// for such a pair told the reader nothing changed.

/** Input and output tokens of an answer, as its provider module reads them. */
export interface Usage {
  input?: number;
  output?: number;
}

/** Token usage that changed past the tolerance: both sides, and the tolerance it passed. */
export interface UsageChange {
  old: Usage;
  new: Usage;
  /** The largest relative change still counted as noise (`--usage-tolerance`). */
  tolerance: number;
}

/** The kinds of tokens compared, in the order they are said. */
const KINDS = ['input', 'output'] as const;

/**
 * How usage changed: `note`, the changed counts as one phrase (undefined when none changed), and
 * `beyond`, whether a count moved by more than `tolerance` of the larger of its two values.
 *
 * @example
 * compareUsage({ input: 20, output: 12 }, { input: 20, output: 40 }, 0.2)
 * // { note: 'usage: output tokens 12 -> 40', beyond: true }
 */
export function compareUsage(a: Usage | undefined, b: Usage | undefined, tolerance: number): { note?: string; beyond: boolean } {
  if (!a || !b) return { beyond: false };
  const parts: string[] = [];
  let beyond = false;
  for (const k of KINDS) {
    const x = a[k];
    const y = b[k];
    if (x === undefined || y === undefined || x === y) continue;
    const rel = Math.abs(x - y) / Math.max(x, y, 1);
    if (rel > tolerance) beyond = true;
    parts.push(`${k} tokens ${x} -> ${y}`);
  }
  return { note: parts.length ? `usage: ${parts.join(', ')}` : undefined, beyond };
}

/**
 * The changed counts of a usage change, each with its change relative to the old count (none
 * from 0), joined by `arrow`: how much, which the old -> new numbers alone leave to the reader.
 *
 * @example
 * usageCounts({ old: { input: 20, output: 12 }, new: { input: 20, output: 40 }, tolerance: 0.2 })
 * // 'output tokens 12 -> 40 (+233%)'
 */
export function usageCounts(u: UsageChange, arrow = '->'): string {
  const parts: string[] = [];
  for (const k of KINDS) {
    const x = u.old[k];
    const y = u.new[k];
    if (x === undefined || y === undefined || x === y) continue;
    const pct = x === 0 ? '' : ` (${y > x ? '+' : '-'}${Math.round((Math.abs(y - x) / x) * 100)}%)`;
    parts.push(`${k} tokens ${x} ${arrow} ${y}${pct}`);
  }
  return parts.join(', ');
}

/** The tolerance as a report says it: `the 20% tolerance`. */
export const toleranceText = (u: UsageChange): string => `the ${Math.round(u.tolerance * 100)}% tolerance`;
