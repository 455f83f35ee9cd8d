/**
 * How far apart two short strings are, for a "did you mean" under a misspelt name (an option, a
 * mode): the Levenshtein distance, the fewest one-character insertions, deletions and
 * substitutions that turn one into the other.
 *
 * @example
 * editDistance('fautls', 'faults') // 2
 */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The known name a misspelt one most likely means: the nearest at most `most` edits away, case
 * aside (the first of equals, in the order given), or undefined.
 *
 * @example
 * closestName('stauts', ['status', 'headers', 'body']) // 'status'
 */
export function closestName(name: string, known: Iterable<string>, most = 2): string | undefined {
  let best: string | undefined;
  let bestDistance = most + 1;
  const n = name.toLowerCase();
  for (const k of known) {
    const d = editDistance(n, k.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best;
}
