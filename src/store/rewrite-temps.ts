/**
 * The temp files a tape rewrite (`tapedeck prune`, record-mode pruning, `tapedeck merge`) writes
 * beside the tape before renaming it over it: `.<tape>.<pid>.<hex>.tmp`, the name init's
 * .gitignore and `tapedeck diff`'s folder scan expect. A rewrite killed midway (SIGKILL, a
 * crash, the machine going down) leaves its temp file behind; as git does with the files of a
 * dead writer, the next rewrite or writer of that tape removes it, so it neither piles up nor
 * is committed. Only a temp file whose process is dead on this host goes: a live rewrite's (its
 * pid alive, whoever it is) is never touched.
 */
import { randomBytes } from 'node:crypto';
import { readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * The temp file a rewrite of `file` (the tape's real path) writes, in its directory.
 *
 * @example
 * rewriteTempPath('/tapes/chat.tape') // '/tapes/.chat.tape.4242.9f3c01ab.tmp'
 */
export function rewriteTempPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** The writer's pid a rewrite temp file of `base` is named with, or undefined for any other name. */
function tempPid(name: string, base: string): number | undefined {
  const prefix = `.${base}.`;
  if (!name.startsWith(prefix) || !name.endsWith('.tmp')) return undefined;
  // <pid>.<8 hex>: exactly what rewriteTempPath makes (an import's `.<what>.tmp` is not ours).
  const m = /^(\d+)\.[0-9a-f]{8}$/.exec(name.slice(prefix.length, -'.tmp'.length));
  return m ? Number(m[1]) : undefined;
}

/**
 * The rewrite temp files of `file` (the tape's real path) whose writer `gone` says is dead
 * (tape-file.ts's deadHere: the lock's own judgement of a pid on this host). A pid that is alive
 * keeps its file, even when it was reused by another process: the name cannot tell, and a live
 * rewrite's file must never go. This process's own are never listed (a rewrite of its own is
 * running; a failed one removes its file itself). Never throws: an unreadable directory lists
 * nothing.
 *
 * @example
 * await deadRewriteTemps('/tapes/chat.tape', deadHere) // ['.chat.tape.4242.9f3c01ab.tmp'] when pid 4242 is gone
 */
export async function deadRewriteTemps(file: string, gone: (pid: number) => boolean): Promise<string[]> {
  const base = basename(file);
  let names: string[];
  try {
    names = await readdir(dirname(file));
  } catch {
    return [];
  }
  return names.filter((name) => {
    const pid = tempPid(name, base);
    return pid !== undefined && pid !== process.pid && gone(pid);
  });
}

/**
 * Removes {@link deadRewriteTemps}. Call it holding the tape's lock: a rewrite running
 * elsewhere holds it while its temp file exists, so none of a live writer is judged from a
 * distance. Returns the names removed; never throws (a file that cannot be removed is left for
 * the next time).
 *
 * @example
 * await withTapeLock(tape, () => removeDeadRewriteTemps(tapeTarget(tape), deadHere))
 */
export async function removeDeadRewriteTemps(file: string, gone: (pid: number) => boolean): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await deadRewriteTemps(file, gone)) {
    try {
      await unlink(join(dirname(file), name));
      removed.push(name);
    } catch {
      // Removed by another writer meanwhile, or not ours to remove: left as it is.
    }
  }
  return removed;
}
