/**
 * A bounded walk of a project's source tree, for the searches that look for tapes in it (the
 * tapes of a moved test file, the tape folders of gone test files): dot folders and
 * node_modules are passed over, an unreadable folder is skipped, and at most MAX_ENTRIES entries
 * are read (a source tree, not a disk).
 */
import { readdirSync, type Dirent } from 'node:fs';

const MAX_ENTRIES = 50_000;

/**
 * Calls `visit` with each folder under `roots` and its entries (dot names and node_modules left
 * out); `visit` returns the folders to walk into next.
 *
 * @example
 * walkSource(['/p'], (dir, entries) => entries.filter((e) => e.isDirectory()).map((e) => join(dir, e.name)))
 */
export function walkSource(roots: readonly string[], visit: (dir: string, entries: Dirent[]) => Iterable<string>): void {
  const stack = [...roots];
  let seen = 0;
  while (stack.length > 0 && seen < MAX_ENTRIES) {
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // unreadable: not ours to search
    }
    seen += entries.length;
    for (const sub of visit(dir, entries.filter((e) => !e.name.startsWith('.') && e.name !== 'node_modules'))) stack.push(sub);
  }
}
