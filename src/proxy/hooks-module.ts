/**
 * `tapedeck serve --hooks FILE`: the proxy's hooks and custom matcher, from a JavaScript module
 * that exports `beforeRecord`, `beforeReplay` and `match` (each optional; named exports, or
 * the same names on the default export). docs/hooks.md.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TapedeckError } from '../errors.ts';
import { asyncHook, isAsyncFunction, type RecordingHooks } from '../store/hooks.ts';
import type { MatchFunction } from './deck-hooks.ts';
import { closestName } from '../edit-distance.ts';

const HOOK_NAMES = ['beforeRecord', 'beforeReplay', 'match'] as const;

/**
 * Loads a hooks module. E_ARG when it cannot be loaded, exports none of the names, or exports
 * one that is not a function or is an async one (hooks are synchronous).
 *
 * @example
 * const hooks = await loadHooksModule('./hooks.mjs') // { beforeRecord, match }
 */
export async function loadHooksModule(file: string): Promise<RecordingHooks & { match?: MatchFunction }> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
  } catch (e) {
    const syntax = syntaxErrorAt(resolve(file));
    const why = syntax ?? (e instanceof Error ? e.message.split('\n')[0] : String(e));
    throw new TapedeckError('E_ARG', `Could not load the hooks module ${file}: ${why}`, {
      hint: syntax ? `Fix the module there (node --check ${file} shows the line), then start tapedeck serve --hooks ${file} again.` : 'Give a JavaScript module (.mjs, or .js in a "type": "module" package) that exports beforeRecord, beforeReplay or match.',
    });
  }
  const from = mod.default !== null && typeof mod.default === 'object' ? { ...(mod.default as Record<string, unknown>), ...mod } : mod;
  const out: RecordingHooks & { match?: MatchFunction } = {};
  // A module may export helpers of its own, but one spelt like a hook (beforeReplya) is a hook
  // that would never run: the proxy would serve unchanged answers without a word.
  for (const name of Object.keys(from)) {
    if (name === 'default' || (HOOK_NAMES as readonly string[]).includes(name)) continue;
    const near = closestName(name, HOOK_NAMES);
    if (near !== undefined) throw new TapedeckError('E_ARG', `The hooks module ${file} exports ${name}, which is no hook: did you mean ${near}?`, { hint: `Rename it: export function ${near}(...) { ... }` });
  }
  for (const name of HOOK_NAMES) {
    const v = from[name];
    if (v === undefined) continue;
    if (typeof v !== 'function') throw new TapedeckError('E_ARG', `${name} in the hooks module ${file} is a ${typeof v}, not a function.`, { hint: `export function ${name}(...) { ... }` });
    // Refused before the proxy listens: called, it could only fail each request (a stream cut).
    if (isAsyncFunction(v)) throw asyncHook(name, `the hooks module ${file}`);
    (out as Record<string, unknown>)[name] = v;
  }
  if (Object.keys(out).length === 0) {
    throw new TapedeckError('E_ARG', `The hooks module ${file} exports none of beforeRecord, beforeReplay, match.`, { hint: 'export function beforeRecord(recording) { return recording }' });
  }
  return out;
}

/**
 * Where a module that does not parse breaks: `SyntaxError Unexpected token ';' at line 2, column
 * 19: const x = { a: 1,;`, or undefined when it parses (it failed for another reason) or Node
 * cannot say. Node's import error of a module gives the message alone (the line is printed only
 * for an error that ends the process), so the file is checked again with `node --check`, which
 * prints it; only on this failure path, once.
 */
function syntaxErrorAt(path: string): string | undefined {
  let out;
  try {
    out = spawnSync(process.execPath, ['--check', path], { encoding: 'utf8', timeout: 15_000 });
  } catch {
    return undefined;
  }
  if (out.status !== 1 || typeof out.stderr !== 'string') return undefined;
  const lines = out.stderr.split(/\r?\n/);
  const at = /:(\d+)$/.exec(lines[0] ?? '');
  const message = lines.find((l) => /^SyntaxError: /.test(l));
  if (!at || !message) return undefined;
  const source = lines[1] ?? '';
  const caret = (lines[2] ?? '').indexOf('^');
  const where = `line ${at[1]}${caret >= 0 ? `, column ${caret + 1}` : ''}`;
  const text = source.trim();
  return `${message.replace(/^SyntaxError: /, 'SyntaxError ')} at ${where}${text ? `: ${text.length > 120 ? `${text.slice(0, 120)}…` : text}` : ''}`;
}
