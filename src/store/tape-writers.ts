/**
 * Which writers have a tape open: one small file per open writer in `<tape>.writers/`, touched
 * while the writer lives and removed when it closes. A record run reads it at open so that at
 * close it replaces only recordings of runs that had ended (docs/modes.md): a recording made by
 * a writer that is still open, on this host or another sharing the directory, is never taken
 * for an old one.
 *
 * For writers on its host a writer is open exactly while its process is (its pid, checked with
 * signal 0, and its start time where /proc gives it, so a reused pid is not taken for it): one
 * paused past `staleMs` (a debugger, SIGSTOP, a blocked event loop) is still open, one killed
 * without closing is ended at once. Writers on other hosts sharing the
 * directory cannot see its pid: for them it is ended once its file has not been touched for
 * `staleMs`, as with the tape lock (docs/store-backends.md).
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, readdir, readFile, rmdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { TapedeckError } from '../errors.ts';
import type { WriterHandle } from './backend.ts';
import { isHandWrittenRun } from './hand-written-run.ts';
import { holderGone, holderId, peekFrame, scanTape } from './tape-file.ts';
import { tapeReadOnly } from './tape-path-errors.ts';
import { tapeTarget } from './tape-target.ts';

/**
 * Registers a writer of `run` on the tape at `path` and returns the runs open now.
 *
 * @example
 * const w = await openTapeWriter('chat.tape', 'run-1'); try { ... } finally { await w.release() }
 */
export async function openTapeWriter(path: string, run: string, staleMs = 30_000, mode?: 'record' | 'update', ended?: WriterInfo[]): Promise<WriterHandle> {
  await checkAppendable(path);
  const dir = `${tapeTarget(path)}.writers`;
  const file = join(dir, `${process.pid}-${randomBytes(6).toString('hex')}.json`);
  for (let attempt = 0; ; attempt++) {
    try {
      await makeWritersDir(dir);
      await writeFile(file, JSON.stringify({ run, ...(mode ? { mode } : {}), ...holderId() }));
      break;
    } catch (e) {
      // The last writer out removed the directory while we made it or wrote into it: again.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 50) continue;
      // A full disk, a read-only or unwritable directory: no half-written file is left behind
      // for other writers to read, and the error names where it happened.
      await unlink(file).catch(() => {});
      await rmdir(dir).catch(() => {});
      throw registrationFailed(path, dir, e as NodeJS.ErrnoException);
    }
  }
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(file, now, now).catch(() => {});
  }, Math.max(10, Math.floor(staleMs / 3)));
  heartbeat.unref();
  const live = new Set<string>([run]);
  for (const w of await openWriters(path, staleMs, file, ended)) if (typeof w.run === 'string') live.add(w.run);
  return {
    live,
    async release() {
      clearInterval(heartbeat);
      await unlink(file).catch(() => {});
      // The last writer out removes the directory; a writer registering meanwhile recreates it.
      await rmdir(dir).catch(() => {});
    },
  };
}

/**
 * Makes `<tape>.writers/` (and the tape's directories, if missing), one plain mkdir per folder
 * so that each failure says its real cause (EROFS, EACCES). Node's recursive mkdir is not used:
 * it says ENOENT for a directory it cannot make on a read-only file system, and on a file
 * system that says ENOENT for a folder whose parent exists (/proc) it retries forever at full
 * CPU. ENOENT thrown here means a folder of the path is missing (or was removed meanwhile):
 * the caller retries a bounded number of times.
 */
async function makeWritersDir(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A file in the folder's place is said as such (EEXIST), as recursive mkdir said it.
    if (code === 'EEXIST') {
      if ((await stat(dir)).isDirectory()) return;
      throw e;
    }
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw e;
    // Bounded by the path's depth.
    await makeWritersDir(parent);
    try {
      await mkdir(dir);
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again;
    }
  }
}

/**
 * Throws E_TAPE_IO when the tape exists and this user cannot write it (a 0444 file in a folder
 * the user can write): said when the writer opens, before any request, not after the first
 * answer was paid for and could not be appended.
 */
async function checkAppendable(path: string): Promise<void> {
  try {
    await access(path, constants.W_OK);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    // No tape yet (it is created), a folder missing, a read-only file system: said as this
    // writer registers in the tape's folder.
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR' || err.code === 'EROFS') return;
    throw new TapedeckError('E_TAPE_IO', `Tape ${path} cannot be recorded to: this user cannot write it (${err.code ?? err.message}).`, {
      file: path,
      cause: err.code,
      hint: `Make the tape writable for this user (chmod u+w ${path}, or chown it), or record into another tape (--tape PATH); replaying it only reads it (--mode replay).`,
    });
  }
}

/** E_TAPE_IO for a writer that could not register: where, the system's cause, and the fix. */
function registrationFailed(path: string, dir: string, err: NodeJS.ErrnoException): TapedeckError {
  const doing = `registering this writer in ${dir}`;
  if (err.code === 'EROFS') return tapeReadOnly(path, doing);
  return new TapedeckError('E_TAPE_IO', `Tape ${path}: ${doing} failed: ${err.message}`, {
    file: path,
    cause: err.code,
    // ENOENT with the folder there: a file system that takes no new files (/proc).
    hint: err.code === 'ENOENT' ? `Give a tape path on an ordinary disk (--tape PATH): ${dirname(dir)} does not take new files.` : 'Check permissions and free disk space where the tape is.',
  });
}

/** A writer's registration, as its file holds it (a file being written holds nothing yet). */
export interface WriterInfo {
  run?: unknown;
  /** 'record' or 'update' (registrations made before the mode was kept have none). */
  mode?: unknown;
  pid?: unknown;
  host?: unknown;
  start?: unknown;
}

/**
 * The writers registered as open on the tape at `path` now, `except` a registration file (the
 * caller's own); the files of writers that have ended are removed on the way (and their
 * registrations added to `ended`).
 *
 * @example
 * const open = await openWriters('chat.tape'); if (open.length) console.log(`pid ${open[0].pid} records to it`)
 */
export async function openWriters(path: string, staleMs = 30_000, except?: string, ended?: WriterInfo[]): Promise<WriterInfo[]> {
  const open: WriterInfo[] = [];
  for (const r of await registrations(path, staleMs, except)) {
    if (r.dead) {
      await unlink(r.file).catch(() => {});
      ended?.push(r.info);
    } else open.push(r.info);
  }
  return open;
}

/**
 * Every registration on the tape at `path` (but `except`), read as it is now: its file, what it
 * holds, and whether its writer has ended. On this host the process decides, however long ago
 * the file was touched: a paused writer touches nothing, and its acknowledged recordings must
 * stay. A file gone meanwhile (its writer closed) is not listed.
 */
async function registrations(path: string, staleMs: number, except?: string): Promise<{ file: string; info: WriterInfo; dead: boolean }[]> {
  const dir = `${tapeTarget(path)}.writers`;
  const out: { file: string; info: WriterInfo; dead: boolean }[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const file = join(dir, name);
    if (file === except || !name.endsWith('.json')) continue;
    try {
      const st = await stat(file);
      let info: WriterInfo = {};
      try {
        info = JSON.parse(await readFile(file, 'utf8')) as WriterInfo;
      } catch {
        // Being written: its writer has appended nothing yet.
      }
      out.push({ file, info, dead: holderGone(info) ?? Date.now() - st.mtimeMs > staleMs });
    } catch {
      // Gone meanwhile (its writer closed).
    }
  }
  return out;
}

/**
 * Whether a writer whose process is alive holds the tape at `path` now, read without removing
 * anything (a reader must not write): then a half-written record at the tape's end is its
 * append in flight, not a crash's.
 *
 * @example
 * if (await liveWriterHolds('chat.tape')) warnings = warnings.filter((w) => w.code !== 'E_TAPE_TORN_TAIL')
 */
export async function liveWriterHolds(path: string, staleMs = 30_000): Promise<boolean> {
  return (await registrations(path, staleMs)).some((r) => !r.dead);
}

/**
 * Whether some writer has the tape at `path` registered as open now (its own registration, if
 * any, released first).
 *
 * @example
 * if (!(await tapeWritersOpen('chat.tape'))) await unlink('chat.tape')
 */
export async function tapeWritersOpen(path: string): Promise<boolean> {
  const names = await readdir(`${tapeTarget(path)}.writers`).catch(() => [] as string[]);
  return names.some((n) => n.endsWith('.json'));
}

/**
 * The record runs registered on the tape at `path` whose writer ended without closing (killed,
 * crashed, exited before close()), read without removing anything (a reader must not write).
 * Such a run's recordings are on the tape, but the older recordings it was to replace at close
 * are too, and replay serves those first. `ended` is given every such run, stale recordings or not.
 *
 * @example
 * for (const w of await interruptedRecordRuns('chat.tape')) console.warn(`run ${w.run} (pid ${w.pid}) did not close`)
 */
export async function interruptedRecordRuns(path: string, staleMs = 30_000, ended?: WriterInfo[]): Promise<WriterInfo[]> {
  const dead = (await registrations(path, staleMs)).filter((r) => r.dead && r.info.mode === 'record').map((r) => r.info);
  ended?.push(...dead);
  if (dead.length === 0) return dead;
  // A run that left no older recording beside its own (into a new tape, or of requests the tape
  // did not hold) left nothing stale: no note, which would fail verify and scan for nothing.
  const stale = await runsBesideOlder(path, new Set(dead.map((w) => w.run).filter((r): r is string => typeof r === 'string')));
  return stale === undefined ? dead : dead.filter((w) => typeof w.run !== 'string' || stale.has(w.run));
}

/**
 * Of `runs`, those with a recording (in store order, `id` the request it answers) that follows
 * a recording of the same request by another run, hand-written ones left out: what such a run
 * was to replace at close. Shared by tapes (below) and Redis namespaces
 * (backends/redis-interrupted.ts).
 *
 * @example
 * runsAfterOthers([{ id: 'k', run: 'a' }, { id: 'k', run: 'b' }], new Set(['b'])) // Set { 'b' }
 */
export function runsAfterOthers(recorded: Iterable<{ id: string; run: string }>, runs: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  // The runs that recorded each request so far, in store order.
  const seen = new Map<string, Set<string>>();
  for (const { id, run } of recorded) {
    if (isHandWrittenRun(run)) continue;
    let by = seen.get(id);
    if (by === undefined) seen.set(id, (by = new Set()));
    if (runs.has(run) && [...by].some((r) => r !== run)) out.add(run);
    by.add(run);
  }
  return out;
}

/**
 * Of `runs`, those with a recording on the tape that follows a recording of the same request by
 * another run (not a hand-written one): what the run was to replace at close. Undefined when the
 * tape cannot be read (then every run is taken as having left one).
 */
async function runsBesideOlder(path: string, runs: ReadonlySet<string>): Promise<Set<string> | undefined> {
  let scan: Awaited<ReturnType<typeof scanTape>>;
  try {
    scan = await scanTape(path);
  } catch {
    return undefined;
  }
  const recorded: { id: string; run: string }[] = [];
  for (const frame of scan.frames) {
    let head: Record<string, unknown>;
    try {
      head = peekFrame(scan.bytes, frame, FIELDS);
    } catch {
      continue;
    }
    if (typeof head.key !== 'string') continue;
    recorded.push({ id: `${typeof head.kind === 'string' ? head.kind : ''}\u0000${head.key}`, run: typeof head.run === 'string' ? head.run : '' });
  }
  return runsAfterOthers(recorded, runs);
}

const FIELDS: readonly string[] = ['kind', 'key', 'run'];

/**
 * The note a tape's reader gives for a record run that ended without closing: what it left
 * behind and how to fix it. `runs` are the registrations of one process (`tapedeck serve` holds
 * a tape once for HTTP recordings and once for realtime sessions): one note names them all.
 *
 * @example
 * interruptedRunMessage('chat.tape', [{ run: 'r1', pid: 4242 }])
 */
export function interruptedRunMessage(path: string, runs: readonly WriterInfo[]): string {
  const pid = runs[0]?.pid;
  const ids = runs.map((w) => w.run).filter((r): r is string => typeof r === 'string');
  const who = [typeof pid === 'number' ? `pid ${pid}` : undefined, ids.length > 0 ? `run${ids.length > 1 ? 's' : ''} ${ids.join(', ')}` : undefined].filter(Boolean).join(', ');
  return `${path}: a record run (${who}) ended without closing the tape (killed, crashed, exited before close(), or its close could not remove the older recordings: a full disk). Its recordings are kept, but any older recordings of the same requests it was to replace were not removed, and replay serves those first. Record again (TAPEDECK_MODE=record, or tapedeck serve --mode record) and let it close, to replace them. A test runner that stops it with SIGKILL ends every record run so: in Playwright, give the webServer that starts it gracefulShutdown: { signal: 'SIGTERM', timeout: 15000 } (docs/proxy.md, End-to-end tests).`;
}

/**
 * The line a miss on the tape at `path` adds for record runs that ended without closing it: the
 * tape may lack the calls such a run had not made yet (a first run killed midway, in `once`
 * mode, leaves a tape that replays without a word until its first missing call).
 *
 * @example
 * unclosedRunMissNote('chat.tape', [{ run: 'r1', pid: 4242 }])
 */
export function unclosedRunMissNote(path: string, runs: readonly WriterInfo[]): string {
  const pid = runs.find((w) => typeof w.pid === 'number')?.pid;
  return `A record run of ${path}${typeof pid === 'number' ? ` (pid ${pid}${runs.length > 1 ? ` and ${runs.length - 1} more` : ''})` : ''} ended without closing it (killed or crashed): this request may be one it had not recorded yet. Record again (TAPEDECK_MODE=record, or tapedeck serve --mode record) and let the run close.`;
}

/**
 * Registrations grouped by the process that made them (host, pid and start time), in order.
 *
 * @example
 * byProcess([{ run: 'a', pid: 1 }, { run: 'b', pid: 1 }]).length // 1
 */
export function byProcess(runs: readonly WriterInfo[]): WriterInfo[][] {
  const groups = new Map<string, WriterInfo[]>();
  for (const w of runs) {
    const k = JSON.stringify([w.host, w.pid, w.start]);
    const g = groups.get(k);
    if (g) g.push(w);
    else groups.set(k, [w]);
  }
  return [...groups.values()];
}
