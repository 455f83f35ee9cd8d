/**
 * What an upload that missed changes against the closest recording of its route: which part of
 * the multipart body (a file, a field) differs, and how. A miss on an upload said only that "none
 * of the N recordings has this body", which does not tell a new file from a changed `model` field
 * or a renamed file; this names the part.
 *
 * Both sides are compared as they are keyed and stored: multipart rebuilt with
 * NORMALIZED_BOUNDARY and redacted (src/store/http-body.ts), so a part differs here exactly when
 * it made the key differ. Bodies that are not multipart are left to the route's general sentence.
 */
import { latin1Bytes, latin1Text } from '../store/redact.ts';
import { NORMALIZED_BOUNDARY, partName, parts, type Part } from '../store/http-body.ts';

interface Seen {
  name: string;
  /** The part's filename, for a file part. */
  file?: string;
  size: number;
  part: Part;
}

function seen(p: Part): Seen {
  const disp = /^content-disposition:(.*)$/im.exec(p.head)?.[1] ?? '';
  const file = /(?:^|;)\s*filename\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(disp);
  return { name: partName(p.head) ?? '?', ...(file ? { file: file[1] ?? file[2] } : {}), size: p.body.length, part: p };
}

function partsOf(body: Uint8Array | string | undefined): Seen[] | undefined {
  if (body === undefined) return undefined;
  const text = typeof body === 'string' ? body : latin1Text(body);
  // The boundary the text was rebuilt with (NORMALIZED_BOUNDARY, longer when a part held it).
  const first = /^--([^\r\n]+)\r\n/.exec(text)?.[1];
  return first?.startsWith(NORMALIZED_BOUNDARY) ? parts(text, first)?.map(seen) : undefined;
}

const bytes = (n: number) => `${n.toLocaleString('en-US')} byte${n === 1 ? '' : 's'}`;
const shown = (s: string) => JSON.stringify(s.length > 40 ? `${s.slice(0, 39)}…` : s);

function describe(p: Seen): string {
  if (p.file !== undefined) return `${shown(p.file)}, ${bytes(p.size)}`;
  return shown(new TextDecoder().decode(latin1Bytes(p.part.body)));
}

/** How two parts with the same contents differ in their headers: the filename, else the first header line that differs. */
function headerDifference(which: string, x: Seen, y: Seen): string {
  const lead = `${which} has other part headers than the closest recording's`;
  if (x.file !== y.file) return `${lead}: filename ${shown(x.file ?? '(none)')} here, ${shown(y.file ?? '(none)')} there`;
  const mine = x.part.head.split('\r\n');
  const theirs = y.part.head.split('\r\n');
  const line = mine.find((l) => !theirs.includes(l)) ?? theirs.find((l) => !mine.includes(l));
  if (line === undefined) return lead;
  // The same header's line on the other side, if it has one (`Content-Type: audio/wav`).
  const name = line.slice(0, line.indexOf(':') + 1).toLowerCase();
  const pair = (side: string[], other: string[]) => side.find((l) => name !== '' && l.toLowerCase().startsWith(name) && !other.includes(l));
  const here = pair(mine, theirs);
  const there = pair(theirs, mine);
  return `${lead}: ${here === undefined ? '(none)' : shown(here)} here, ${there === undefined ? '(none)' : shown(there)} there`;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** A text file by its part's Content-Type or its name's extension (a batch JSONL, a CSV, a YAML): where two such part is worth saying. */
const isText = (p: Seen): boolean =>
  /^content-type:[ \t]*(?:text\/|application\/(?:[\w.+-]*json[\w-]*|x-ndjson|(?:x-)?yaml|csv|xml))/im.test(p.part.head) || /\.(?:jsonl|ndjson|json|txt|csv|tsv|md|ya?ml|xml|html?)$/i.test(p.file ?? '');

/** The line where two text files part, and what each holds there; '' for binary files. */
function textDifference(a: string, b: string): string {
  let x: string;
  let y: string;
  try {
    x = strictUtf8.decode(latin1Bytes(a));
    y = strictUtf8.decode(latin1Bytes(b));
  } catch {
    return '';
  }
  if (x.includes('\u0000') || y.includes('\u0000')) return '';
  let i = 0;
  while (i < x.length && x[i] === y[i]) i++;
  const start = x.lastIndexOf('\n', i - 1) + 1;
  const line = x.slice(0, start).split('\n').length;
  const from = Math.max(start, i - 10);
  const piece = (s: string) => shown(s.slice(from, from + 30).split('\n')[0]!);
  return `: line ${line} differs at character ${i - start + 1}: ${piece(x)} here, ${piece(y)} there`;
}

/** Whether the file parts of both sides agree in `what` (name or size). */
function near(a: Seen[], b: Seen[], what: (p: Seen) => unknown): boolean {
  const files = (x: Seen[]) => x.filter((p) => p.file !== undefined).map(what);
  return JSON.stringify(files(a)) === JSON.stringify(files(b));
}

/** The differences of `asked` from one recording's parts, first one first. */
function differences(asked: Seen[], rec: Seen[]): string[] {
  const out: string[] = [];
  const names = new Set([...asked.map((p) => p.name), ...rec.map((p) => p.name)]);
  for (const name of names) {
    const a = asked.filter((p) => p.name === name);
    const r = rec.filter((p) => p.name === name);
    if (r.length === 0) out.push(`part ${shown(name)} is not in the closest recording`);
    else if (a.length === 0) out.push(`part ${shown(name)} of the closest recording is missing`);
    else if (a.length !== r.length) out.push(`${a.length} ${shown(name)} parts, the closest recording ${r.length}`);
    else
      for (let i = 0; i < a.length; i++) {
        const x = a[i]!;
        const y = r[i]!;
        if (x.part.head === y.part.head && x.part.body === y.part.body) continue;
        const which = a.length > 1 ? `part ${shown(name)} #${i + 1}` : `part ${shown(name)}`;
        if (x.part.body === y.part.body) out.push(headerDifference(which, x, y));
        else if (x.file !== undefined || y.file !== undefined) out.push(`${which} (${describe(x)}) is another file than the closest recording's (${describe(y)})${isText(x) && isText(y) ? textDifference(x.part.body, y.part.body) : ''}`);
        else out.push(`${which} is ${describe(x)}, the closest recording's ${describe(y)}`);
      }
  }
  if (out.length === 0) out.push('the parts are in another order than in the closest recording');
  return out;
}

/**
 * The difference of an upload from the closest of `recorded` (stored request bodies), or
 * undefined when the request is not multipart or no recording is.
 *
 * @example
 * uploadDifference(normalizedBytes, [recording.request.body])
 * // 'part "file" ("c.wav", 120,004 bytes) is another file than the closest recording\'s ("b.wav", 120,004 bytes)'
 */
export function uploadDifference(asked: Uint8Array, recorded: Iterable<Uint8Array | string | undefined>): string | undefined {
  const mine = partsOf(asked);
  if (!mine) return undefined;
  let best: string[] | undefined;
  let bestScore = Infinity;
  for (const body of recorded) {
    const theirs = partsOf(body);
    if (!theirs) continue;
    const d = differences(mine, theirs);
    // Fewest differing parts first; among those, the recording of a file with the same name and
    // size (the file the user changed, rather than another one).
    const score = d.length * 4 + (near(mine, theirs, (p) => p.file) ? 0 : 2) + (near(mine, theirs, (p) => p.size) ? 0 : 1);
    if (score < bestScore) [best, bestScore] = [d, score];
  }
  if (!best) return undefined;
  return best.length === 1 ? best[0] : `${best[0]} (and ${best.length - 1} more difference${best.length === 2 ? '' : 's'})`;
}
