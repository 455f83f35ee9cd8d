/**
 * The temp files written beside a tape before they are renamed over it or into its place: a
 * rewrite's (`tapedeck prune`, record-mode pruning, `tapedeck merge`),
 * `.<tape>.<pid>.<hex>.tmp`, and an import's (`tapedeck import`, importTapeJSON, a migration),
 * `.<tape>.<pid>.<host><hex>.<what>.tmp` (createTape's too, `<what>` `create`: the header of a
 * new tape, linked into place once written): the names init's .gitignore and `tapedeck diff`'s
 * folder scan expect. One killed midway (SIGKILL, a crash, the machine going down) leaves its
 * temp file behind; as git does with the files of a dead writer, the next rewrite, import or
 * writer of that tape removes it, so it neither piles up nor is committed. Only a temp file
 * whose process is dead on this host goes: a live writer's (its pid alive, whoever it is) is
 * never touched.
 *
 * A rewrite holds the tape's lock while its temp file exists, so one running on another host
 * sharing the folder is never judged from here. An import does not (it would stop every
 * recorder of the tape for as long as it reads its source): its name carries a tag of its host
 * instead, and only a temp file tagged with this host is judged by its pid.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** This host as an import temp file's name carries it: 8 hex digits of its name's hash. */
const HOST_TAG = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);

/**
 * The temp file a rewrite of `file` (the tape's real path) writes, in its directory.
 *
 * @example
 * rewriteTempPath('/tapes/chat.tape') // '/tapes/.chat.tape.4242.9f3c01ab.tmp'
 */
export function rewriteTempPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/**
 * The temp file an import (`what`: a lowercase word, `import`, `migrate`; createTape's is
 * `create`) builds a new tape at `file` (the tape's real path) in, in its directory: named with
 * this host, so that a writer of the tape on another host sharing the folder never takes it for
 * a dead process's.
 *
 * @example
 * importTempPath('/tapes/chat.tape', 'import') // '/tapes/.chat.tape.4242.5d41402c9f3c01ab.import.tmp'
 */
export function importTempPath(file: string, what: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}.${HOST_TAG}${randomBytes(4).toString('hex')}.${what}.tmp`);
}

/**
 * Whether `file` is named as one of the temp files above (of any tape): a tape built in it is
 * read by no one until it is moved into place.
 *
 * @example
 * isTapeTemp('/tapes/.chat.tape.4242.5d41402c9f3c01ab.import.tmp') // true
 * isTapeTemp('/tapes/chat.tape') // false
 */
export function isTapeTemp(file: string): boolean {
  return /^\..+\.\d+\.(?:[0-9a-f]{8}|[0-9a-f]{16}\.[a-z]+)\.tmp$/.test(basename(file));
}

/**
 * The writer's pid a temp file of `base` is named with, or undefined for any other name and for
 * an import's temp file of another host (its pid says nothing here).
 */
function tempPid(name: string, base: string): number | undefined {
  const prefix = `.${base}.`;
  if (!name.startsWith(prefix) || !name.endsWith('.tmp')) return undefined;
  const middle = name.slice(prefix.length, -'.tmp'.length);
  // <pid>.<8 hex>: exactly what rewriteTempPath makes.
  const rewrite = /^(\d+)\.[0-9a-f]{8}$/.exec(middle);
  if (rewrite) return Number(rewrite[1]);
  // <pid>.<host tag><8 hex>.<what>: what importTempPath makes. An older version's import temp
  // file (<pid>.<8 hex>.<what>) names no host, so it is never judged.
  const imported = /^(\d+)\.([0-9a-f]{8})[0-9a-f]{8}\.[a-z]+$/.exec(middle);
  return imported && imported[2] === HOST_TAG ? Number(imported[1]) : undefined;
}

/**
 * The temp files of `file` (the tape's real path) whose writer `gone` says is dead
 * (tape-file.ts's deadHere: the lock's own judgement of a pid on this host). A pid that is alive
 * keeps its file, even when it was reused by another process: the name cannot tell, and a live
 * writer's file must never go. This process's own are never listed (a rewrite or import of its
 * own is running; a failed one removes its file itself). Never throws: an unreadable directory
 * lists nothing.
 *
 * @example
 * await deadTapeTemps('/tapes/chat.tape', deadHere) // ['.chat.tape.4242.9f3c01ab.tmp'] when pid 4242 is gone
 */
export async function deadTapeTemps(file: string, gone: (pid: number) => boolean): Promise<string[]> {
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
 * Removes {@link deadTapeTemps}. Call it holding the tape's lock: a rewrite running elsewhere
 * holds it while its temp file exists, so none of a live writer is judged from a distance.
 * Returns the names removed; never throws (a file that cannot be removed is left for the next
 * time).
 *
 * @example
 * await withTapeLock(tape, () => removeDeadTapeTemps(tapeTarget(tape), deadHere))
 */
export async function removeDeadTapeTemps(file: string, gone: (pid: number) => boolean): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await deadTapeTemps(file, gone)) {
    try {
      await unlink(join(dirname(file), name));
      removed.push(name);
    } catch {
      // Removed by another writer meanwhile, or not ours to remove: left as it is.
    }
  }
  return removed;
}
