// Many objects read from git in one process: `git cat-file --batch`, which takes object names
// (ids, `:path` for the staged version, `REV:path`) one a line and writes each object's content
// after a header giving its size. One git process per tape made a commit of a thousand tapes,
// or a run's drift lines over them, wait for a thousand processes.

import { execFileSync } from 'node:child_process';
import { TapedeckError } from '../errors.ts';

const gitWhy = (e: unknown) => String((e as { stderr?: Buffer }).stderr ?? (e as Error).message).trim().split('\n')[0];

function catFile(cwd: string, name: string): Buffer {
  try {
    return execFileSync('git', ['cat-file', 'blob', name], { cwd, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
  } catch (e) {
    throw new TapedeckError('E_GIT', `git cat-file blob ${name} failed: ${gitWhy(e)}`, { file: name, hint: 'Check the path is staged or committed (git status).' });
  }
}

/**
 * The content of each named blob, in the order asked, read by one `git cat-file --batch` run
 * in `cwd`. A name git cannot resolve is a TapedeckError (E_GIT) naming it.
 *
 * @example
 * const [staged] = catFileBatch(process.cwd(), [':test/__tapes__/chat.tape'])
 */
export function catFileBatch(cwd: string, names: readonly string[]): Buffer[] {
  if (names.length === 0) return [];
  // A name with a line break cannot be a line of the batch: asked for on its own.
  if (names.some((n) => /[\r\n]/.test(n))) {
    const lone = names.map((n) => (/[\r\n]/.test(n) ? catFile(cwd, n) : undefined));
    const rest = catFileBatch(cwd, names.filter((n) => !/[\r\n]/.test(n)));
    return lone.map((b) => b ?? rest.shift()!);
  }
  let buf: Buffer;
  try {
    buf = execFileSync('git', ['cat-file', '--batch'], { cwd, input: names.join('\n') + '\n', stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 30 });
  } catch (e) {
    throw new TapedeckError('E_GIT', `git cat-file --batch failed in ${cwd}: ${gitWhy(e)}`, { file: cwd, hint: 'Run it inside a git repository with git installed.' });
  }
  const out: Buffer[] = [];
  let at = 0;
  for (const name of names) {
    const nl = buf.indexOf(10, at);
    const head = (nl < 0 ? buf.subarray(at) : buf.subarray(at, nl)).toString('utf8').split(' ');
    // "<name> missing" or "<name> ambiguous" instead of "<id> <type> <size>".
    if (nl < 0 || head.length !== 3) throw new TapedeckError('E_GIT', `git has no object ${name}${head[1] ? ` (${head.slice(1).join(' ')})` : ''}.`, { file: name, hint: 'Check the path is staged or committed (git status).' });
    const size = Number(head[2]);
    out.push(buf.subarray(nl + 1, nl + 1 + size));
    at = nl + 1 + size + 1;
  }
  return out;
}
