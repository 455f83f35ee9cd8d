/**
 * A tape's damage in file order, as a streamed read finds it: the tape commands that number
 * records (scan, inspect) number the frames damage took among all frames, so a record keeps its
 * number whichever command names it.
 */
import { damagedFrameStarts, type TapeWarning } from './tape-codec.ts';

/** A damaged region, and the frames it took. */
export interface DamagedRegion {
  warning: TapeWarning;
  /** The header is damaged (the region starts at byte 0). */
  header: boolean;
  /** Its bytes [start, end) in the file. */
  start: number;
  end: number;
  bytes: Uint8Array;
  /** Where each frame it took starts, relative to `start` (see damagedFrameStarts). */
  frames: number[];
}

/**
 * Hands out a tape's damaged regions in file order while its records are read: call it with
 * each record's offset before handling the record (the regions before it), and with the file's
 * size at the end. `warnings` may grow as reading goes; each is handed out once. An empty file's
 * warning is no region (there is nothing in it).
 *
 * @example
 * const before = damageInOrder(t.warnings, t.bytes)
 * for await (const r of decodedRecords(t, file)) { for (const d of await before(r.offset)) n += d.frames.length; n++ }
 * for (const d of await before(t.size)) n += d.frames.length
 */
export function damageInOrder(warnings: readonly TapeWarning[], bytes: (start: number, end: number) => Promise<Uint8Array>): (limit: number) => Promise<DamagedRegion[]> {
  // Taken by identity: an undecodable record's warning can come after later damage's.
  const taken = new Set<TapeWarning>();
  const pending: TapeWarning[] = [];
  return async (limit) => {
    if (taken.size < warnings.length) {
      for (const w of warnings) {
        if (taken.has(w)) continue;
        taken.add(w);
        pending.push(w);
      }
      pending.sort((a, b) => a.offset - b.offset);
    }
    const out: DamagedRegion[] = [];
    while (pending.length > 0 && pending[0]!.offset < limit) {
      const w = pending.shift()!;
      // A 0-byte file holds nothing: read whole, not damage that hides anything.
      if (w.code === 'E_TAPE_EMPTY') continue;
      const header = w.code === 'E_TAPE_HEADER';
      const start = header ? 0 : w.offset;
      const end = Math.min(limit, pending[0]?.offset ?? limit);
      const b = await bytes(start, end);
      out.push({ warning: w, header, start, end, bytes: b, frames: damagedFrameStarts(b, !header) });
    }
    return out;
  };
}
