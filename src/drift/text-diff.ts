// A word-level diff of two texts (Myers' O(ND) algorithm on word and whitespace tokens), and how
// similar the two are. Written here rather than taken from a package: it is ~100 lines, and the
// drift report needs words and whitespace as separate tokens, so that a change of spacing alone
// is told apart from a change of words.

/** One run of a diff: '=' in both texts, '-' only in the old one, '+' only in the new one. */
export type DiffOp = ['=' | '-' | '+', string];

/**
 * Whether a word diff shows a change: any op that removes or adds. A text that was emptied (one
 * removal) or that is new (one addition) is a change too, which "more than one op" missed.
 *
 * @example
 * showsChange([['-', 'Sure, here it is.']]) // true
 * showsChange([['=', 'same']])              // false
 */
export function showsChange(ops: readonly DiffOp[]): boolean {
  return ops.some(([op]) => op !== '=');
}

/** Words and the whitespace between them, in order; joined they give the text back. */
export function wordTokens(text: string): string[] {
  return text.match(/\s+|[^\s]+/g) ?? [];
}

const isSpace = (t: string) => /^\s/.test(t);

// Past this many edits the middle is reported as one removal and one insertion: the trace grows
// with the square of the edit count, and so different a pair is read as "rewritten" anyway.
const MAX_EDITS = 4000;

/**
 * The shortest edit script from `a` to `b` (token arrays), as runs of equal, removed and added
 * tokens. The number of '=' tokens is the length of a longest common subsequence.
 *
 * @example
 * diffTokens(['a', 'b', 'c'], ['a', 'c', 'd'])
 * // [['=', 'a'], ['-', 'b'], ['=', 'c'], ['+', 'd']]  (tokens joined per run)
 */
export function diffTokens(a: readonly string[], b: readonly string[]): DiffOp[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const ops: ['=' | '-' | '+', string][] = [];
  for (let i = 0; i < start; i++) ops.push(['=', a[i]!]);
  middle(a.slice(start, endA), b.slice(start, endB), ops);
  for (let i = endA; i < a.length; i++) ops.push(['=', a[i]!]);
  return merge(ops);
}

/** Myers' greedy forward search with the V array of every step kept, then the path walked back. */
function middle(a: readonly string[], b: readonly string[], ops: DiffOp[]): void {
  const n = a.length;
  const m = b.length;
  if (n === 0 || m === 0) {
    for (const t of a) ops.push(['-', t]);
    for (const t of b) ops.push(['+', t]);
    return;
  }
  const max = n + m;
  const offset = max + 1;
  let v: Int32Array = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= Math.min(max, MAX_EDITS); d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  if (found < 0) {
    for (const t of a) ops.push(['-', t]);
    for (const t of b) ops.push(['+', t]);
    return;
  }
  // Walk back from (n, m) through the V arrays saved before each step.
  const back: DiffOp[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) back.push(['=', a[--x]!]), y--;
    if (x === prevX) back.push(['+', b[--y]!]);
    else back.push(['-', a[--x]!]);
  }
  while (x > 0 && y > 0) back.push(['=', a[--x]!]), y--;
  for (let i = back.length - 1; i >= 0; i--) ops.push(back[i]!);
}

function merge(ops: DiffOp[]): DiffOp[] {
  const out: DiffOp[] = [];
  for (const [op, t] of ops) {
    const last = out[out.length - 1];
    if (last && last[0] === op) last[1] += t;
    else out.push([op, t]);
  }
  return out;
}

/** A word diff of two texts and how similar they are. */
export interface TextDiff {
  ops: DiffOp[];
  /** 2 x words in common / (words in old + words in new), 0..1; 1 for two texts without words. */
  similarity: number;
  /** The texts differ in whitespace only. */
  whitespaceOnly: boolean;
}

/**
 * Word-level diff of two texts: runs of equal, removed and added text, and the share of words
 * the two have in common.
 *
 * @example
 * diffText('The sky is blue.', 'The sky is grey.').similarity // 0.75
 */
export function diffText(before: string, after: string): TextDiff {
  const a = wordTokens(before);
  const b = wordTokens(after);
  const ops = diffTokens(a, b);
  const wa = a.filter((t) => !isSpace(t));
  const wb = b.filter((t) => !isSpace(t));
  // Words in common, from a diff of the words alone: the text's diff also aligns the spaces, and
  // may keep spaces at the cost of words ("the the x" / "The the the": 1 word kept, not 2). Each
  // word carries a space, so a run of them splits back into its words.
  let common = 0;
  for (const [op, t] of diffTokens(wa.map((w) => `${w} `), wb.map((w) => `${w} `))) if (op === '=') common += wordTokens(t).length / 2;
  const total = wa.length + wb.length;
  const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
  return { ops, similarity: total === 0 ? 1 : (2 * common) / total, whitespaceOnly: before !== after && squash(before) === squash(after) };
}

/**
 * A diff as one text with the changes marked, around the changes only: `[-removed-]{+added+}`
 * by default, other marks for colour. Unchanged runs longer than `context` characters on each
 * side of a change are cut to their ends.
 *
 * @example
 * inlineDiff(diffText('The sky is blue.', 'The sky is grey.').ops) // 'The sky is [-blue.-]{+grey.+}'
 */
export function inlineDiff(ops: readonly DiffOp[], marks: { del: (s: string) => string; ins: (s: string) => string } = { del: (s) => `[-${s}-]`, ins: (s) => `{+${s}+}` }, context = 40): string {
  let out = '';
  ops.forEach(([op, t], i) => {
    if (op === '-') out += marks.del(t);
    else if (op === '+') out += marks.ins(t);
    else {
      const first = i === 0;
      const last = i === ops.length - 1;
      let s = t;
      if (first && s.length > context) s = `…${s.slice(-context)}`;
      else if (last && s.length > context) s = `${s.slice(0, context)}…`;
      else if (!first && !last && s.length > 2 * context + 1) s = `${s.slice(0, context)} … ${s.slice(-context)}`;
      out += s;
    }
  });
  return out;
}
