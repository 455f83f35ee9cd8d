/**
 * The tape files under a path, for the commands and reports that take a folder of tapes
 * (`tapedeck scan tapes/`, the run summary's search for tapes no test opened).
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The tapes a path names: the file itself, or every `*.tape` below a folder, in path order.
 * Names starting with a dot (tapedeck's temporary files) and `node_modules` are passed over. A
 * folder that cannot be read throws, unless `unreadable` is `'skip'` (a report that only
 * judges what it can see).
 *
 * @example
 * tapesUnder('tapes') // ['tapes/a.tape', 'tapes/chat/b.tape']
 */
export function tapesUnder(path: string, unreadable: 'throw' | 'skip' = 'throw'): string[] {
  if (!statSync(path).isDirectory()) return [path];
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch (e) {
    if (unreadable === 'skip') return out;
    throw e;
  }
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const p = join(path, e.name);
    if (e.isDirectory()) out.push(...tapesUnder(p, unreadable));
    else if (e.name.endsWith('.tape')) out.push(p);
  }
  return out;
}
