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
  return parts(text, NORMALIZED_BOUNDARY)?.map(seen);
}

const bytes = (n: number) => `${n.toLocaleString('en-US')} byte${n === 1 ? '' : 's'}`;
const shown = (s: string) => JSON.stringify(s.length > 40 ? `${s.slice(0, 39)}…` : s);

function describe(p: Seen): string {
  if (p.file !== undefined) return `${shown(p.file)}, ${bytes(p.size)}`;
  return shown(new TextDecoder().decode(latin1Bytes(p.part.body)));
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
        if (x.part.body === y.part.body) out.push(`${which} has other part headers than the closest recording's`);
        else if (x.file !== undefined || y.file !== undefined) out.push(`${which} (${describe(x)}) is another file than the closest recording's (${describe(y)})`);
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
