/**
 * The tape file backend: the framed msgpack file of docs/tape-format.md (src/store/tape-file.ts
 * does the bytes). Loading reads the file once and checks every frame's CRC without decoding:
 * a record is decoded the first time someone asks for its value, and its leading scalar fields
 * (the key an index needs) are read straight from the bytes.
 */
import { createHash } from 'node:crypto';
import { mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TapedeckError } from '../../errors.ts';
import type { HeadScalar, LoadedRecord, LoadResult, RecordBackend, RewriteSelect, StoreWarning, WriterHandle } from '../backend.ts';
import { openTapeWriter, tapeWritersOpen } from '../tape-writers.ts';
import { isRedactionSalt } from '../tape-codec.ts';
import { appendRecords, createTape, decodeFrame, FRAME_HEADER_SIZE, payloadMember, peekPayload, rewriteTapeFrames, scanTape, syncDir, withTapeLock, type TapeLockOptions, type TapeScan } from '../tape-file.ts';

export interface TapeBackendOptions {
  /** Lock timing for appends and rewrites (src/store/tape-file.ts). */
  lock?: TapeLockOptions;
}

/** The file image records of one load decode from, shared by all of them. */
interface TapeImage {
  readonly bytes: Buffer;
  readonly file: string;
}

/**
 * One frame of a tape image: decoded, peeked and digested on demand (one small object per
 * record; the scan's frame objects are not kept).
 */
class TapeRecord implements LoadedRecord {
  constructor(
    private readonly image: TapeImage,
    readonly at: number,
    private readonly length: number,
  ) {}
  head(fields?: readonly string[], deep?: boolean): Readonly<Record<string, HeadScalar>> {
    return peekPayload(this.image.bytes, this.at, this.length, fields, deep);
  }
  value(): unknown {
    return decodeFrame(this.image.bytes, { offset: this.at, length: this.length }, this.image.file);
  }
  member(name: string): unknown {
    return payloadMember(this.image.bytes, this.at, this.length, name, this.image.file);
  }
  /**
   * The payload's digest: stable when other writers append or rewrite (frames are copied
   * verbatim), equal only for equal bytes.
   */
  id(): string {
    return createHash('sha256').update(this.image.bytes.subarray(this.at + FRAME_HEADER_SIZE, this.at + this.length)).digest('base64');
  }
}

function records(scan: TapeScan, file: string): LoadedRecord[] {
  const image: TapeImage = { bytes: scan.bytes, file };
  return scan.frames.map((f) => new TapeRecord(image, f.offset, f.length));
}

/**
 * @example
 * const backend = new TapeBackend('test/__tapes__/chat.tape');
 * const col = await RecordCollection.open(backend, { mode: 'update', kind: cacheRecords });
 */
export class TapeBackend implements RecordBackend {
  readonly location: string;
  private readonly lock: TapeLockOptions;
  /** The file image of the last load, kept so the records it handed out can decode lazily. */
  bytes: Buffer | undefined;
  salt: string | undefined;
  /** This writer's load created the file, and this writer appended nothing since. */
  private madeEmpty = false;

  constructor(
    readonly path: string,
    opts: TapeBackendOptions = {},
  ) {
    this.location = path;
    this.lock = opts.lock ?? {};
  }

  async load(opts: { create: boolean }): Promise<LoadResult> {
    if (opts.create) {
      await mkdir(dirname(this.path), { recursive: true });
      try {
        await createTape(this.path);
        this.madeEmpty = true;
      } catch (e) {
        // Another writer created it first: then we simply share it.
        if (!(e instanceof TapedeckError && e.code === 'E_TAPE_EXISTS')) throw e;
      }
    }
    let scan: TapeScan;
    try {
      scan = await scanTape(this.path);
    } catch (e) {
      if (!opts.create && e instanceof TapedeckError && e.code === 'E_TAPE_NOT_FOUND') return { exists: false, records: [], warnings: [] };
      throw e;
    }
    const warnings = [...scan.warnings];
    if (opts.create && scan.header.headerLost === true) {
      // A writer needs the tape's salt before its first record (masks are keyed under it), so
      // a lost header (a 0-byte file, damage) is replaced now, keeping every record, rather
      // than at the first append. The damage stays reported.
      await rewriteTapeFrames(this.path, () => [], this.lock);
      scan = await scanTape(this.path);
    }
    this.bytes = scan.bytes;
    this.salt = isRedactionSalt(scan.header.salt) ? scan.header.salt : undefined;
    return { exists: true, records: records(scan, this.path), warnings };
  }

  async append(values: readonly unknown[], opts: { durable: boolean }): Promise<void> {
    this.madeEmpty = false;
    try {
      await appendRecords(this.path, values as unknown[], { ...this.lock, durable: opts.durable });
    } catch (e) {
      // The writer that made the tape removed it, empty, as it closed (see close()) after this
      // one had loaded it: made again with the salt this writer keys its masks under, which is
      // the same empty tape, then appended to. Made again meanwhile by another: its salt must be
      // this one's.
      if (!(e instanceof TapedeckError && e.code === 'E_TAPE_NOT_FOUND') || this.bytes === undefined) throw e;
      await createTape(this.path, { salt: this.salt ?? null }).catch((c: unknown) => {
        if (!(c instanceof TapedeckError && c.code === 'E_TAPE_EXISTS')) throw c;
      });
      const again = await scanTape(this.path);
      const salt = isRedactionSalt(again.header.salt) ? again.header.salt : undefined;
      if (salt !== this.salt) {
        throw new TapedeckError('E_TAPE_IO', `Tape ${this.path} was removed and made again by another writer while this one had it open; nothing was appended.`, {
          file: this.path,
          hint: 'Record again: the next run opens the tape as it is now.',
        });
      }
      await appendRecords(this.path, values as unknown[], { ...this.lock, durable: opts.durable });
    }
  }

  async rewrite(select: RewriteSelect): Promise<{ kept: number; removed: unknown[]; warnings: StoreWarning[] }> {
    const r = await rewriteTapeFrames(this.path, (scan) => select(records(scan, this.path)), this.lock);
    return { kept: r.kept, removed: r.dropped, warnings: r.warnings };
  }

  openWriter(run: string): Promise<WriterHandle> {
    return openTapeWriter(this.path, run, this.lock.staleMs);
  }

  /**
   * A tape this writer made and never appended to is removed again, so a run that recorded
   * nothing (every request answered, or none could be recorded) leaves no empty file behind to
   * commit. Only while it holds no record and no other writer has it open (writers register
   * before they load: one that opens later makes it anew), under the tape's lock.
   */
  async close(): Promise<void> {
    this.bytes = undefined;
    if (!this.madeEmpty) return;
    this.madeEmpty = false;
    await withTapeLock(this.path, async () => {
      if (await tapeWritersOpen(this.path)) return;
      const scan = await scanTape(this.path).catch(() => undefined);
      // A header and nothing after it (bytes past it would be a frame or a warning).
      if (scan === undefined || scan.frames.length > 0 || scan.warnings.length > 0 || scan.header.headerLost === true) return;
      await unlink(this.path);
      await syncDir(dirname(this.path));
    }, this.lock).catch(() => {
      // Left as it is: an empty tape, as before.
    });
  }
}
