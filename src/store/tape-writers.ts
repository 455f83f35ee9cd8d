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
import { mkdir, readdir, readFile, rmdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TapedeckError } from '../errors.ts';
import type { WriterHandle } from './backend.ts';
import { holderGone, holderId } from './tape-file.ts';

/**
 * Registers a writer of `run` on the tape at `path` and returns the runs open now.
 *
 * @example
 * const w = await openTapeWriter('chat.tape', 'run-1'); try { ... } finally { await w.release() }
 */
export async function openTapeWriter(path: string, run: string, staleMs = 30_000): Promise<WriterHandle> {
  const dir = `${path}.writers`;
  const file = join(dir, `${process.pid}-${randomBytes(6).toString('hex')}.json`);
  for (let attempt = 0; ; attempt++) {
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(file, JSON.stringify({ run, ...holderId() }));
      break;
    } catch (e) {
      // The last writer out removed the directory while we made it or wrote into it: again.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 50) continue;
      // A full disk, a read-only or unwritable directory: no half-written file is left behind
      // for other writers to read, and the error names where it happened.
      await unlink(file).catch(() => {});
      await rmdir(dir).catch(() => {});
      const err = e as NodeJS.ErrnoException;
      throw new TapedeckError('E_TAPE_IO', `Tape ${path}: registering this writer in ${dir} failed: ${err.message}`, {
        file: path,
        cause: err.code,
        hint: 'Check permissions and free disk space where the tape is.',
      });
    }
  }
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(file, now, now).catch(() => {});
  }, Math.max(10, Math.floor(staleMs / 3)));
  heartbeat.unref();
  const live = new Set<string>([run]);
  for (const w of await openWriters(path, staleMs, file)) if (typeof w.run === 'string') live.add(w.run);
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

/** A writer's registration, as its file holds it (a file being written holds nothing yet). */
export interface WriterInfo {
  run?: unknown;
  pid?: unknown;
  host?: unknown;
  start?: unknown;
}

/**
 * The writers registered as open on the tape at `path` now, `except` a registration file (the
 * caller's own); the files of writers that have ended are removed on the way.
 *
 * @example
 * const open = await openWriters('chat.tape'); if (open.length) console.log(`pid ${open[0].pid} records to it`)
 */
export async function openWriters(path: string, staleMs = 30_000, except?: string): Promise<WriterInfo[]> {
  const dir = `${path}.writers`;
  const open: WriterInfo[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const other = join(dir, name);
    if (other === except || !name.endsWith('.json')) continue;
    try {
      const st = await stat(other);
      let info: WriterInfo = {};
      try {
        info = JSON.parse(await readFile(other, 'utf8')) as WriterInfo;
      } catch {
        // Being written: its writer has appended nothing yet.
      }
      // On this host the process decides, however long ago the file was touched: a paused
      // writer touches nothing, and its acknowledged recordings must stay.
      const dead = holderGone(info) ?? Date.now() - st.mtimeMs > staleMs;
      if (dead) await unlink(other).catch(() => {});
      else open.push(info);
    } catch {
      // Gone meanwhile (its writer closed), or being written: a writer that has not finished
      // registering has appended nothing yet.
    }
  }
  return open;
}

/**
 * Whether some writer has the tape at `path` registered as open now (its own registration, if
 * any, released first).
 *
 * @example
 * if (!(await tapeWritersOpen('chat.tape'))) await unlink('chat.tape')
 */
export async function tapeWritersOpen(path: string): Promise<boolean> {
  const names = await readdir(`${path}.writers`).catch(() => [] as string[]);
  return names.some((n) => n.endsWith('.json'));
}
