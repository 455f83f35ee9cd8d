/**
 * Moving recordings between a tape file and a Redis store, byte for byte: `push` seeds a shared
 * store from a committed tape, `pull` snapshots a store back into a tape. A tape pushed into an
 * empty namespace and pulled back is the same file: the header bytes are kept as they were, and
 * every record payload goes through Redis untouched, in tape order (docs/redis.md).
 */
import { createHash } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { TapedeckError } from '../errors.ts';
import { saltOf } from './backends/redis-backend.ts';
import { collectionKeyOf, RedisRecords, type RedisStoreOptions, type StoredRecord } from './backends/redis.ts';
import { redisCliTarget, redisLocation, redisRecordDamage, redisRecordPlace } from './backends/redis-damage.ts';
import { FRAME_HEADER_SIZE, parseHeader, type TapeWarning } from './tape-codec.ts';
import { recordBytes, removeDeadTempsSoon, scanTape } from './tape-file.ts';
import { importTempPath } from './rewrite-temps.ts';
import { missingNamespace } from './backends/redis-missing.ts';
import { intoPlace, refuseOpenWriters, targetExists } from './import/target.ts';

/** What a push did. */
export interface PushResult {
  /** Records written to Redis. */
  records: number;
  /** Records of the tape the namespace held already (a push run again): not written twice. */
  already: number;
  /** Whether the tape's header was stored (false: the namespace already had one, kept). */
  headerStored: boolean;
  /** Damage in the tape that was skipped (damaged records are never pushed). */
  warnings: TapeWarning[];
  /**
   * What the caller should know though every record was pushed (`TAPEDECK_SALT`: the namespace
   * keeps another redaction salt): not damage, so no failure.
   */
  notes: TapeWarning[];
  /** The store's URL with the password masked. */
  url: string;
  /** The namespace pushed into. */
  namespace: string;
}

/** What a pull did. */
export interface PullResult {
  /** Records written to the tape. */
  records: number;
  bytes: number;
  url: string;
  /** The namespace pulled from. */
  namespace: string;
  /**
   * Records of the namespace left out because they do not read (`offset`: the record's sequence
   * number; the message says where it is in Redis): the tape holds every other one, and verifies.
   * One `E_STORE_DAMAGED` warning when the namespace's index does not list records a replay
   * still serves (its index was lost): those are written to the tape too.
   */
  warnings: TapeWarning[];
}

/** Records per batch: one reservation of sequence numbers and one script per request key. */
const BATCH = 500;

/**
 * Copies every intact record of a tape into a Redis namespace, in tape order, and the tape's
 * header if the namespace has none. Records already in the namespace stay (a push adds; pull
 * into an empty namespace first when the store must equal the tape).
 *
 * @example
 * await pushTape('test/fixtures/app.tape', 'redis://127.0.0.1:6379/0', { namespace: 'app' })
 */
export async function pushTape(tape: string, url: string, opts: RedisStoreOptions = {}): Promise<PushResult> {
  const scan = await scanTape(tape);
  const store = await RedisRecords.open(url, opts);
  try {
    const { end, header } = parseHeader(scan.bytes, tape);
    const headerStored = await store.setHeaderIfAbsent(scan.bytes.subarray(0, end));
    const warnings = [...scan.warnings];
    const notes: TapeWarning[] = [];
    if (!headerStored) {
      // Keyed masks only match under the salt they were made with (docs/redis.md).
      const theirs = saltOf(await store.header(), store.url);
      if (header.salt !== theirs) {
        notes.push({
          code: 'TAPEDECK_SALT',
          offset: 0,
          message: `The namespace's redaction salt differs from ${tape}'s: pushed recordings of requests with masked values (a ?token=, a secret member, a key in a prompt) will not match there. Push into an empty namespace (tapedeck push --namespace NEW) to keep the tape's salt.`,
        });
      }
    }
    const items = scan.frames.map((f) => {
      const payload = scan.bytes.subarray(f.offset + FRAME_HEADER_SIZE, f.offset + f.length);
      return { key: collectionKeyOf(payload), payload };
    });
    // A namespace that had records: those the tape holds already (a push run again, a pull
    // pushed back) are not appended twice, or a call would get each answer twice in turn.
    // Counted: a tape with two equal records and a namespace with one pushes one. Asked even
    // when the header was missing: a namespace that lost its header and index (its master
    // restarted without persistence) may still hold the tape's records on other masters, and
    // the keys that hold them are listed again.
    const have = await storedCopies(store, items);
    const fresh = items.filter((it) => {
      const id = copyId(it.key, it.payload);
      const n = have.get(id) ?? 0;
      if (n === 0) return true;
      have.set(id, n - 1);
      return false;
    });
    for (let i = 0; i < fresh.length; i += BATCH) await store.append(fresh.slice(i, i + BATCH));
    return { records: fresh.length, already: items.length - fresh.length, headerStored, warnings, notes, url: store.url, namespace: store.namespace };
  } finally {
    await store.close();
  }
}

/**
 * The live records of request keys the namespace's index does not list (its index was lost and
 * made again by later writes): found by a SCAN of every master, so a pull leaves out nothing a
 * replay still serves. A SCAN refused (an ACL) finds nothing.
 */
async function unlistedRecords(store: RedisRecords, listed: readonly StoredRecord[]): Promise<StoredRecord[]> {
  const known = new Set(await store.keys());
  for (const r of listed) known.add(r.key);
  const stray = (await store.storedKeys().catch(() => [])).filter((k) => !known.has(k));
  const out: StoredRecord[] = [];
  for (let i = 0; i < stray.length; i += 64) {
    for (const recs of await Promise.all(stray.slice(i, i + 64).map((k) => store.read(k)))) out.push(...recs);
  }
  return out;
}

/** A record's identity for push: its collection key and its bytes' digest. */
const copyId = (key: string, payload: Uint8Array): string => `${key}\u0000${createHash('sha256').update(payload).digest('hex')}`;

/** How many copies of each record (copyId) the namespace holds, for the keys `items` have. */
async function storedCopies(store: RedisRecords, items: readonly { key: string }[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const keys = [...new Set(items.map((it) => it.key))];
  for (let i = 0; i < keys.length; i += 64) {
    const found = (await Promise.all(keys.slice(i, i + 64).map((k) => store.read(k)))).flat();
    for (const r of found) {
      const id = copyId(r.key, r.payload);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    // Listed (again): records the index lost are found by pull and verify once more.
    if (found.length > 0) await store.relist(found);
  }
  return counts;
}

/**
 * Writes every live record of a Redis namespace to a tape, in the order they were written to
 * Redis, under the header a push stored (or a fresh one). The tape is written beside its final
 * name, fsynced, and renamed into place, so a failure mid-pull leaves no partial tape; an
 * existing tape is replaced only with `force`, and then as an import replaces one: under the
 * tape's lock, and never while a writer has it open (E_TAPE_IN_USE: a proxy or test run
 * recording to it would lose what it has recorded). A record that does not read (bytes that do not
 * decode, or that do not name the key they are filed under) is left out and reported in
 * `warnings`, as any tape reader skips a damaged record; it stays in Redis.
 *
 * @example
 * await pullTape('redis://127.0.0.1:6379/0', 'snapshots/app.tape', { namespace: 'app' })
 */
export async function pullTape(url: string, tape: string, opts: RedisStoreOptions & { force?: boolean } = {}): Promise<PullResult> {
  const exists = () =>
    new TapedeckError('E_TAPE_EXISTS', `Tape ${tape} already exists; pull does not overwrite it.`, {
      file: tape,
      hint: 'Pass --force (force: true) to replace it, or pull into a new file.',
    });
  // A directory there is no tape to replace: said so, with a file path that would do.
  const there = targetExists(tape);
  if (there && !opts.force) throw exists();
  // Said before the work (and checked again under the lock as the tape is replaced): what a
  // writer appended was acknowledged to its caller, and the replacement would take it away.
  if (there) await refuseOpenWriters(tape, 'pull');
  const store = await RedisRecords.open(url, opts);
  let stored: StoredRecord[];
  let header;
  let unlisted: StoredRecord[] = [];
  try {
    header = await store.header();
    stored = await store.readAll();
    // Nothing there is what a mistyped URL or namespace reads as: an empty tape would replace
    // the one asked for (with --force) and report success. Or the namespace lost its index.
    if (header === undefined && stored.length === 0) throw await missingNamespace(store, `${tape} was left as it was`);
    unlisted = await unlistedRecords(store, stored);
    if (unlisted.length > 0) stored = [...stored, ...unlisted].sort((a, b) => a.seq - b.seq);
  } finally {
    await store.close();
  }
  // Every record is decoded once here: the tape must verify, so what a tape reader would skip
  // is not written, and each one is said, where it is in Redis.
  const warnings: TapeWarning[] = [];
  const records = stored.filter((r) => {
    const why = redisRecordDamage(r, { decode: true });
    if (why === undefined) return true;
    warnings.push({
      code: 'E_TAPE_CORRUPT',
      offset: r.seq,
      message: `${redisLocation(store.url, store.namespace)}: ${redisRecordPlace(store.namespace, r)} is ${why}; left out of ${tape} (it stays in Redis: tapedeck prune ${redisCliTarget(store.url, store.namespace)} removes it).`,
    });
    return false;
  });
  // Written to the tape all the same (a replay still serves them), but the namespace is damaged:
  // said so, with the fix, and the exit code tells scripts.
  if (unlisted.length > 0) {
    const keys = new Set(unlisted.map((r) => r.key)).size;
    const target = redisCliTarget(store.url, store.namespace);
    warnings.push({
      code: 'E_STORE_DAMAGED',
      offset: 0,
      message: `${redisLocation(store.url, store.namespace)}: ${keys} request key${keys === 1 ? ' holds' : 's hold'} ${unlisted.length} record${unlisted.length === 1 ? '' : 's'} the namespace's index does not list (the index was lost, as after a Redis restart without persistence); found by a scan and written to ${tape} too. List them again by pushing this tape: tapedeck push ${tape} ${target}.`,
    });
  }
  // A pull killed midway left its file beside the tape: gone once its process is. This one's is
  // named with this process and host, so the next pull, import or writer removes it the same way.
  await removeDeadTempsSoon(tape);
  const tmp = importTempPath(tape, 'pull');
  let fh: FileHandle | undefined;
  let bytes = 0;
  try {
    // A header a push stored must still be a tape header: a damaged one would make an
    // unreadable tape. Records written by proxies alone get a fresh one.
    if (header) parseHeader(header, `${store.url} (stored header)`);
    const head = header ?? recordBytes.header();
    fh = await open(tmp, 'wx');
    await fh.writeFile(head);
    bytes = head.length;
    // Frames are written in batches so a large namespace never needs one huge buffer.
    for (let i = 0; i < records.length; i += BATCH) {
      const chunk = Buffer.concat(records.slice(i, i + BATCH).map((r) => recordBytes.frame(r.payload)));
      await fh.writeFile(chunk);
      bytes += chunk.length;
    }
    await fh.sync();
    await fh.close();
    fh = undefined;
    await intoPlace(tmp, tape, opts.force === true, exists, 'pull');
  } catch (e) {
    await fh?.close().catch(() => {});
    if (e instanceof TapedeckError) throw e;
    throw new TapedeckError('E_TAPE_IO', `Could not write ${tape} from ${store.url}: ${(e as Error).message}`, { file: tape, hint: 'Check that the directory exists and is writable.' });
  } finally {
    // Moved into place (renamed, or linked: then this is the second name), or failed.
    await unlink(tmp).catch(() => {});
  }
  return { records: records.length, bytes, url: store.url, namespace: store.namespace, warnings };
}
