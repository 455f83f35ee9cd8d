/**
 * Tape files whose keyed masks must agree: a test's tape and its MCP tape beside it (the test
 * helpers' tape.mcp(), `<tape>.mcp.tape`). A tool result the MCP tape replays goes into the
 * model's next request, whose key is made from it masked under the test tape's salt: with a salt
 * of their own per tape, one secret masked two ways and that request never found its recording,
 * however often it was recorded again. The test helper's fetch, its proxies and its MCP
 * transports each open their tape by its path (or their Redis namespace by its name), so the
 * salt a new one of such a group gets is looked up here where it is created (backends/tape.ts,
 * backends/redis-backend.ts).
 */
import { resolve } from 'node:path';
import { isRedactionSalt, type TapeHeader } from './tape-codec.ts';
import { readTapeFileHeader } from './tape-file.ts';
import { newRedactionSalt } from './salt.ts';

/** A tape or namespace of a group: the key its backend looks its salt up by, and how to read the salt it has. */
export interface SaltSource {
  /** A tape file's resolved path; a Redis namespace's location (RedisBackend.location). */
  readonly key: string;
  /** Its salt (`null`: it has none, its masks are plain); undefined when it does not exist (or does not read). */
  read(): Promise<string | null | undefined>;
}

interface SaltGroup {
  readonly sources: readonly SaltSource[];
  /** The salt for the case where none of the group's tapes exists yet: made once, when first asked. */
  salt?: string;
  /** Test tapes open on this group (tests that share a tape path register it each). */
  holders: number;
}

const groups = new Map<string, SaltGroup>();

/**
 * Makes the tapes or namespaces of `sources` share one redaction salt from now on: one of them
 * created takes the salt of one that exists, else one salt made for them all. Those that exist
 * keep theirs. Returns the function that ends it (call it once).
 *
 * @example
 * const end = shareSalt([tapeFileSalt('tapes/agent.tape'), tapeFileSalt('tapes/agent.mcp.tape')])
 * // ... record ...
 * end()
 */
export function shareSalt(sources: readonly SaltSource[]): () => void {
  const group = groups.get(sources[0]!.key) ?? { sources, holders: 0 };
  group.holders++;
  for (const s of sources) groups.set(s.key, group);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    if (--group.holders > 0) return;
    for (const s of sources) if (groups.get(s.key) === group) groups.delete(s.key);
  };
}

/**
 * The salt the tape or namespace of `key` is created with: the salt of one of its group (see
 * {@link shareSalt}) that exists (`null` when that one has none: a tape older than salts, whose
 * masks are plain), else the group's own; undefined outside any group (a new random salt, as
 * always).
 *
 * @example
 * await createTape(path, { salt: await saltForNew(resolve(path)) })
 */
export async function saltForNew(key: string): Promise<string | null | undefined> {
  const group = groups.get(key);
  if (group === undefined) return undefined;
  for (const other of group.sources) {
    if (other.key === key) continue;
    const salt = await other.read().catch(() => undefined);
    if (salt !== undefined) return salt;
  }
  return (group.salt ??= newRedactionSalt());
}

/**
 * A tape file as a member of a group (see {@link shareSalt}).
 *
 * @example
 * tapeFileSalt('tapes/agent.mcp.tape') // { key: '/repo/tapes/agent.mcp.tape', read }
 */
export const tapeFileSalt = (path: string): SaltSource => ({ key: resolve(path), read: () => headerSalt(path) });

/** The salt a new tape file at `path` is created with (see {@link saltForNew}). */
export const saltForNewTape = (path: string): Promise<string | null | undefined> => saltForNew(resolve(path));

/**
 * The salt in the header of the tape file at `path` (`null`: a header without one); undefined
 * when there is no such file or its header does not read (then it decides nothing).
 */
async function headerSalt(path: string): Promise<string | null | undefined> {
  let header: TapeHeader | undefined;
  try {
    header = readTapeFileHeader(path);
  } catch {
    return undefined;
  }
  if (header === undefined) return undefined;
  return isRedactionSalt(header.salt) ? header.salt : null;
}
