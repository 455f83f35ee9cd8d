/**
 * A three-way merge of tapes, for `tapedeck merge` as git's merge driver (`%O %A %B`): two
 * branches that recorded into the same tape keep both their recordings instead of a conflict on
 * a binary file.
 *
 * A record is identified by its frame's bytes (magic, length, CRC and payload): a record never
 * changes once written (appends only; prune and re-record drop whole frames and copy the rest
 * verbatim), and every recording carries its own time and run, so two records with the same
 * bytes are the same recording (the same commit on both branches), and two recordings of one
 * request made apart are different records. Records are compared as multisets, so a tape that
 * holds the same bytes twice keeps both copies.
 *
 * The merged tape is: the records of the base that both sides kept, in the base's order; then
 * the ones ours added, in ours' order; then the ones theirs added that ours did not add too, in
 * theirs' order. Repeated recordings of one key keep their order within each side, and nothing
 * either side recorded is lost. A base record one side removed is removed (a prune or a
 * re-record is a decision; keeping the record the other side merely left in place would undo
 * it, and re-recorded keys would replay the stale answer first). A base record a side lost to
 * damage (absent from it just where its damaged bytes are) was not removed: base's copy is kept.
 * One base lost to damage that both sides hold is kept once, where base had it; one only one side
 * holds was removed by the other, and is dropped (lostInBase).
 *
 * The header is ours (the tape's `created`, version and salt). Theirs may have another salt (both
 * branches created the tape) only while the records it adds hold no keyed mask (`[REDACTED:<hex>]`,
 * a non-credential secret masked with an HMAC under theirs' salt): such a mask cannot be re-keyed
 * (its value is gone), and under ours' salt the same request would never match it. A record
 * without one reads and keys the same under any salt (records are not compressed, so the mask's
 * bytes are found in the frame as they are).
 */
import { createHash } from 'node:crypto';
import { MAX_INPUT_BYTES, TapedeckError } from '../errors.ts';
import { readBounded, type ReadBound } from '../read-bounded.ts';
import { holdsKeyedMask } from './keyed-mask.ts';
import { parseTape, type TapeHeader, type TapeWarning } from './tape-codec.ts';
import { recordBytes, rewriteTapeWith, tapeIoError, type TapeScan } from './tape-file.ts';

/** One side of a merge as read: its header, frames (CRC-checked) and damage. */
export interface MergeSide {
  /** What the user calls it in messages: base, ours or theirs, and the file git gave. */
  label: 'base' | 'ours' | 'theirs';
  file: string;
  bytes: Uint8Array;
  header: TapeHeader;
  /** Where the header ends (the first frame's offset on a sound tape). */
  headerEnd: number;
  frames: { offset: number; length: number }[];
  warnings: TapeWarning[];
}

/** What a merge did, counted in records. */
export interface MergeSummary {
  /** Base records both sides kept. */
  base: number;
  /** Records ours added. */
  ours: number;
  /** Records theirs added, not counting the duplicates. */
  theirs: number;
  /** Records both sides added with the same bytes (the same recording), kept once. */
  duplicates: number;
  /** Base records one side removed (prune, re-record): left out. */
  removed: number;
  /**
   * Of `base`, records a side lost to damage (absent from it where its damaged bytes are) that
   * base holds whole: kept, as no side removed them.
   */
  recovered: number;
  /** Damage in any input, with the side it was found in. The intact records were merged. */
  damage: { label: MergeSide['label']; file: string; warning: TapeWarning }[];
}

/**
 * Merges three parsed tapes: the bytes of the merged tape and what was taken from where. Throws
 * E_TAPE_MERGE when the tapes cannot be merged (different salts or format versions, ours' header
 * and salt lost to damage on a tape that has records).
 *
 * @example
 * const { parts, summary } = mergeTapeImages(sideOf('base', b, bBytes), sideOf('ours', a, aBytes), sideOf('theirs', c, cBytes));
 * // summary: { base: 3, ours: 1, theirs: 2, duplicates: 0, removed: 0, damage: [] }
 */
export function mergeTapeImages(base: MergeSide, ours: MergeSide, theirs: MergeSide): { parts: Uint8Array[]; summary: MergeSummary } {
  const { head, saltsDiffer } = mergedHeader(ours, theirs);
  let keyedMasks = 0;
  const id = (side: MergeSide, f: { offset: number; length: number }) => createHash('sha256').update(side.bytes.subarray(f.offset, f.offset + f.length)).digest('base64');
  const baseIds = base.frames.map((f) => id(base, f));
  const oursIds = ours.frames.map((f) => id(ours, f));
  const theirsIds = theirs.frames.map((f) => id(theirs, f));
  const oursLeft = counts(oursIds);
  const theirsLeft = counts(theirsIds);
  // Base records each side still holds: matched to that side's earliest copies below.
  const oursFromBase = new Map<string, number>();
  const theirsFromBase = new Map<string, number>();
  const parts: Uint8Array[] = [head];
  const summary: MergeSummary = { base: 0, ours: 0, theirs: 0, duplicates: 0, removed: 0, recovered: 0, damage: [] };
  // Where each base record is on each side (its earliest copy there), -1 where it is not.
  const oursAt = placed(baseIds, oursIds);
  const theirsAt = placed(baseIds, theirsIds);
  // Base records lost to damage in base: put back where base had them when both sides hold them,
  // left out when one side removed them (lostInBase).
  const lost = lostInBase(base, oursIds, oursAt, theirsIds, theirsAt);
  const { before } = lost;
  summary.removed += lost.removed;
  baseIds.forEach((k, i) => {
    for (const j of before.get(i) ?? []) {
      parts.push(frameBytes(ours, ours.frames[j]!));
      summary.duplicates++;
    }
    const inOurs = take(oursLeft, k);
    const inTheirs = take(theirsLeft, k);
    if (inOurs) bump(oursFromBase, k);
    if (inTheirs) bump(theirsFromBase, k);
    if (inOurs && inTheirs) {
      parts.push(frameBytes(base, base.frames[i]!));
      summary.base++;
      return;
    }
    // Absent where a side is damaged is no removal: the bytes it was in are lost there, and base
    // (and maybe the other side) still holds it whole.
    const lostInOurs = !inOurs && lostToDamage(ours, oursAt, i);
    const lostInTheirs = !inTheirs && lostToDamage(theirs, theirsAt, i);
    if ((inOurs || lostInOurs) && (inTheirs || lostInTheirs)) {
      parts.push(frameBytes(base, base.frames[i]!));
      summary.base++;
      summary.recovered++;
    } else summary.removed++;
  });
  const oursAdded = new Map<string, number>();
  for (const j of before.get(baseIds.length) ?? []) {
    parts.push(frameBytes(ours, ours.frames[j]!));
    summary.duplicates++;
  }
  const placedOurs = new Set([...before.values()].flat());
  oursIds.forEach((k, i) => {
    if (placedOurs.has(i) || lost.dropOurs.has(i)) return;
    if (take(oursFromBase, k)) return;
    bump(oursAdded, k);
    parts.push(frameBytes(ours, ours.frames[i]!));
    summary.ours++;
  });
  theirsIds.forEach((k, i) => {
    if (lost.skipTheirs.has(i)) return;
    if (take(theirsFromBase, k)) return;
    if (take(oursAdded, k)) {
      summary.duplicates++;
      return;
    }
    const frame = frameBytes(theirs, theirs.frames[i]!);
    if (saltsDiffer && holdsKeyedMask(frame)) keyedMasks++;
    parts.push(frame);
    summary.theirs++;
  });
  if (keyedMasks > 0) throw saltError(ours, theirs, keyedMasks);
  for (const side of [base, ours, theirs]) for (const warning of side.warnings) summary.damage.push({ label: side.label, file: side.file, warning });
  return { parts, summary };
}

/**
 * Merges the tapes at `base`, `ours` and `theirs` (git's `%O %A %B`) into `ours`, atomically and
 * under ours' tape lock (as prune rewrites a tape). Returns what was merged; throws E_TAPE_MERGE,
 * leaving `ours` as it was, when the tapes cannot be merged. Damaged inputs are merged from
 * their intact records and reported in `summary.damage` (the caller tells git the merge is not
 * clean, so the user looks at it).
 *
 * @example
 * const s = await mergeTapeFiles('.merge_file_a', 'chat.tape', '.merge_file_b');
 * console.log(`${s.base} from base, ${s.ours} ours, ${s.theirs} theirs`);
 */
export async function mergeTapeFiles(base: string, ours: string, theirs: string): Promise<MergeSummary> {
  const [b, t] = await Promise.all([readSide('base', base), readSide('theirs', theirs)]);
  // Read ours first outside the lock: a missing file is E_TAPE_NOT_FOUND, not a lock made for it.
  await readSide('ours', ours);
  let summary: MergeSummary | undefined;
  await rewriteTapeWith(ours, (scan: TapeScan & { headerEnd: number }) => {
    const o: MergeSide = { label: 'ours', file: ours, bytes: scan.bytes, header: scan.header, headerEnd: scan.headerEnd, frames: scan.frames, warnings: scan.size === 0 ? [] : scan.warnings };
    const merged = mergeTapeImages(b, o, t);
    summary = merged.summary;
    return merged.parts;
  });
  return summary!;
}

/**
 * How much of a side is read: a tape file whatever its size (git gives its versions as files),
 * anything else (a pipe, a device: no size to check first, and /dev/zero never ends) at most
 * 64 MiB, counted while reading.
 */
const MERGE_SIDE: ReadBound = {
  limit: MAX_INPUT_BYTES,
  fileLimit: Infinity,
  most: 'the most tapedeck merge reads',
  hint: 'Give each side as a tape file (git merge gives them so: tapedeck init registers the driver).',
};

/** Reads one side: a 0-byte file (git's base when both branches added the tape) is an empty tape. */
async function readSide(label: MergeSide['label'], file: string): Promise<MergeSide> {
  let bytes: Buffer;
  try {
    bytes = readBounded(file, MERGE_SIDE);
  } catch (e) {
    if (e instanceof TapedeckError) throw e;
    throw tapeIoError(e, file, 'read');
  }
  const parsed = parseTape(bytes, file, false);
  // A 0-byte file is reported by the parser as a lost header: it is no damage here (git gives an
  // empty base when the tape has no common ancestor).
  const warnings = bytes.length === 0 ? [] : parsed.warnings;
  return { label, file, bytes, header: parsed.header, headerEnd: parsed.headerEnd, frames: parsed.records, warnings };
}

/**
 * The merged tape's header (ours, once theirs is known to be the same format version), and whether
 * their salts differ. A header lost to damage costs only its metadata when its salt still reads
 * whole (tape-codec.ts keeps it): that salt is the side's, and a damaged ours gets a fresh header
 * carrying it, as prune writes one. Theirs' salt lost with its header counts as a different salt
 * (only records holding keyed masks cannot be carried over); ours' cannot be replaced: ours' own
 * keyed masks were made under it.
 */
function mergedHeader(ours: MergeSide, theirs: MergeSide): { head: Uint8Array; saltsDiffer: boolean } {
  const empty = (s: MergeSide) => s.header.headerLost === true && s.bytes.length === 0;
  const lost = (s: MergeSide) => s.header.headerLost === true && s.bytes.length > 0;
  const sound = (s: MergeSide) => s.bytes.subarray(0, s.headerEnd);
  const fresh = (s: MergeSide) => recordBytes.header({ ...(salt(s) !== undefined ? { salt: salt(s) } : {}) });
  if (lost(ours) && salt(ours) === undefined) {
    throw new TapedeckError('E_TAPE_MERGE', `${ours.file} (ours): the tape's header is damaged, so its redaction salt is unknown; no merge was written.`, {
      hint: `git leaves the conflict: run tapedeck verify on each side (git show :2:<tape> > ours.tape, :3: for theirs), then keep one side (git checkout --ours <tape> or --theirs) and re-record what the other branch added.`,
      file: ours.file,
    });
  }
  if (empty(ours)) return { head: lost(theirs) ? fresh(theirs) : sound(theirs), saltsDiffer: false };
  const head = lost(ours) ? fresh(ours) : sound(ours);
  if (empty(theirs)) return { head, saltsDiffer: false };
  if (!lost(ours) && !lost(theirs) && ours.header.formatVersion !== theirs.header.formatVersion) {
    throw new TapedeckError('E_TAPE_MERGE', `ours (${ours.file}) is tape format version ${ours.header.formatVersion}, theirs (${theirs.file}) version ${theirs.header.formatVersion}: records of two formats cannot share a tape; no merge was written.`, {
      hint: 'git leaves the conflict: keep one side (git checkout --ours <tape> or --theirs) and re-record what the other branch added with the same tapedeck version.',
    });
  }
  return { head, saltsDiffer: salt(theirs) === undefined ? lost(theirs) || salt(ours) !== undefined : salt(ours) !== salt(theirs) };
}

const salt = (s: MergeSide) => (typeof s.header.salt === 'string' ? s.header.salt : undefined);

/** Theirs adds `n` records holding masks keyed under a salt other than ours'. */
function saltError(ours: MergeSide, theirs: MergeSide, n: number): TapedeckError {
  if (theirs.header.headerLost === true && salt(theirs) === undefined) {
    return new TapedeckError('E_TAPE_MERGE', `theirs (${theirs.file}): the tape's header is damaged, so its redaction salt is unknown, and ${n} of the records theirs adds hold secrets masked under it, which match no request under ours' salt; no merge was written.`, {
      hint: "git leaves the conflict: keep ours (git checkout --ours <tape>), git add it, and re-record the other branch's calls into it (TAPEDECK_MODE=update runs only what is missing).",
      file: theirs.file,
    });
  }
  return new TapedeckError(
    'E_TAPE_MERGE',
    `ours (${ours.file}) and theirs (${theirs.file}) have different redaction salts (${salt(ours) ?? 'none'} and ${salt(theirs) ?? 'none'}): the branches created the tape separately, and ${n} of the records theirs adds hold secrets masked under its salt, which cannot be changed afterwards (the values are gone); no merge was written.`,
    { hint: "git leaves the conflict: keep one side (git checkout --ours <tape>, or --theirs), git add it, and re-record the other branch's calls into it (TAPEDECK_MODE=update runs only what is missing)." },
  );
}


/** For each base record, the index of its earliest copy among a side's frames, or -1. */
function placed(baseIds: string[], sideIds: string[]): number[] {
  const where = new Map<string, number[]>();
  sideIds.forEach((k, i) => {
    const list = where.get(k);
    if (list) list.push(i);
    else where.set(k, [i]);
  });
  return baseIds.map((k) => where.get(k)?.shift() ?? -1);
}

/**
 * Whether base record `i`, absent from `side`, was where that side is damaged: sides keep base
 * order (records are only appended or dropped), so it was after the side's copy of the nearest
 * earlier base record it holds, before the frame that follows that copy there; damage in that gap
 * may be it. Damage elsewhere leaves the absence a removal (a prune, a re-record).
 */
function lostToDamage(side: MergeSide, at: number[], i: number): boolean {
  if (side.warnings.length === 0) return false;
  let prev = -1;
  for (let j = i - 1; j >= 0 && prev < 0; j--) prev = at[j]!;
  const from = prev < 0 ? side.headerEnd : side.frames[prev]!.offset + side.frames[prev]!.length;
  const to = prev + 1 < side.frames.length ? side.frames[prev + 1]!.offset : Infinity;
  return side.warnings.some((w) => w.offset >= from && w.offset < to);
}

/**
 * What to do with records base lost to damage. Sides keep base order and only append (see
 * lostToDamage), so a side's record that is no copy of a base record yet comes before its copy of
 * some base record was in base before that one: a record base's damaged bytes held. Such a
 * record both sides hold is a base record both kept: placed before the base record that follows
 * it in ours (the docs count it as added by both, kept once), so repeats of its request keep
 * their order. Held by one side only, the other removed it (a prune, a re-record): dropped, as a
 * base record one side removed is, or the answer a re-record replaced would come back first.
 * `before` maps a base index (base's length for none) to ours' frames to put before it;
 * `dropOurs` and `skipTheirs` are the sides' frames the merge leaves for this reason.
 */
function lostInBase(
  base: MergeSide,
  oursIds: string[],
  oursAt: number[],
  theirsIds: string[],
  theirsAt: number[],
): { before: Map<number, number[]>; dropOurs: Set<number>; skipTheirs: Set<number>; removed: number } {
  const out = { before: new Map<number, number[]>(), dropOurs: new Set<number>(), skipTheirs: new Set<number>(), removed: 0 };
  if (base.warnings.length === 0) return out;
  const copies = (at: number[]) => new Set(at.filter((x) => x >= 0));
  const oursCopies = copies(oursAt);
  const theirsCopies = copies(theirsAt);
  const inside = (ids: string[], at: number[], own: Set<number>): number[] => {
    // A loop, not Math.max(...at): a tape of 100,000 records is too many arguments.
    let last = -1;
    for (const x of at) if (x > last) last = x;
    return ids.map((_, j) => j).filter((j) => j < last && !own.has(j));
  };
  const oursInside = inside(oursIds, oursAt, oursCopies);
  const theirsInside = inside(theirsIds, theirsAt, theirsCopies);
  // Theirs' frames that are no base copy, by record: those inside base's span first.
  const theirsHeld = new Map<string, number[]>();
  const insideSet = new Set(theirsInside);
  for (const j of [...theirsInside, ...theirsIds.map((_, j) => j).filter((j) => !theirsCopies.has(j) && !insideSet.has(j))]) {
    const list = theirsHeld.get(theirsIds[j]!);
    if (list) list.push(j);
    else theirsHeld.set(theirsIds[j]!, [j]);
  }
  for (const j of oursInside) {
    const t = theirsHeld.get(oursIds[j]!)?.shift();
    if (t === undefined) {
      out.dropOurs.add(j);
      out.removed++;
      continue;
    }
    out.skipTheirs.add(t);
    // The base record ours holds next after it.
    let next = oursAt.findIndex((x) => x > j);
    if (next < 0) next = oursAt.length;
    const list = out.before.get(next);
    if (list) list.push(j);
    else out.before.set(next, [j]);
  }
  // Theirs' records base lost that ours holds nowhere: ours removed them.
  const oursInsideSet = new Set(oursInside);
  const oursOutside = counts(oursIds.filter((_, j) => !oursCopies.has(j) && !oursInsideSet.has(j)));
  for (const t of theirsInside) {
    if (out.skipTheirs.has(t) || take(oursOutside, theirsIds[t]!)) continue;
    out.skipTheirs.add(t);
    out.removed++;
  }
  return out;
}

function frameBytes(side: MergeSide, f: { offset: number; length: number }): Uint8Array {
  return side.bytes.subarray(f.offset, f.offset + f.length);
}

function counts(ids: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of ids) bump(m, k);
  return m;
}

function bump(m: Map<string, number>, k: string): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

/** Takes one of `k` from the multiset: whether there was one. */
function take(m: Map<string, number>, k: string): boolean {
  const n = m.get(k) ?? 0;
  if (n === 0) return false;
  m.set(k, n - 1);
  return true;
}
