// A directory of JSON recordings: one JSON file per request, v1 (no signature) or v2 (with
// one), used in alphabetical order by sequential matching. Imported as-is: nothing to convert.

import type * as NodeFs from 'node:fs';
import { canonicalizeJSON } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { describeArgument } from '../option-names.ts';
import type { Recording } from './matcher.ts';
import { normalizeRequest } from '../providers/index.ts';
import type { NormalizeOptions } from '../providers/types.ts';

/** Options of loadRecordingsDir: the normalization of the recordings, and where warnings go. */
export interface LoadOptions extends NormalizeOptions {
  /** Called for every file that was skipped or needed attention; default process.emitWarning. */
  onWarning?: (message: string) => void;
}

function sameList(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return Array.isArray(a) && a.length === b.length && [...a].sort().every((x, i) => x === b[i]);
}

/** Whether a request is a hand-written recording's (docs/hand-written.md): a URL, and the body apart. */
function isHandWritten(request: unknown): boolean {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) return false;
  const q = request as Record<string, unknown>;
  return typeof q.url === 'string' && !('messages' in q) && !('input' in q) && !('prompt' in q);
}

/**
 * Reads every `*.json` recording in a directory, in file-name order. A UTF-8 byte order mark
 * before a file's JSON is skipped. A file that is not valid
 * JSON or has no `request`/`response` is skipped with a warning naming it (and the byte offset
 * of a syntax error): one bad file never costs the good ones. v1 files get their signature
 * computed; a v2 file whose stored signature disagrees with its request is reported, and the
 * computed one is used (the stored one may come from a recorder that stored the real context keys instead of the request's).
 *
 * @example
 * const m = createMatcher({ recordings: loadRecordingsDir('test/recordings'), mode: 'signature' })
 */
export function loadRecordingsDir(dir: string, opts: LoadOptions = {}): Recording[] {
  // Without it, "Cannot read recordings directory undefined ... record first".
  if (typeof dir !== 'string' || dir === '') throw new TapedeckError('E_ARG', `loadRecordingsDir takes the path of a directory of recordings; got ${describeArgument(dir)}.`, { hint: "loadRecordingsDir('test/recordings')" });
  // Looked up on call, not imported: the main entry point must load where there is no file
  // system (browsers, workers, edge runtimes); only this function needs one.
  const fs = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:fs') as typeof NodeFs | undefined;
  if (!fs) {
    throw new TapedeckError('E_RECORDINGS_DIR', `Cannot read recordings directory ${dir}: this runtime has no node:fs.`, {
      hint: 'Load recordings yourself and pass them to createMatcher({ recordings }).',
      file: dir,
    });
  }
  const { readdirSync, readFileSync } = fs;
  const join = (a: string, b: string) => (a.endsWith('/') || a.endsWith('\\') ? a + b : `${a}/${b}`);
  const warn = opts.onWarning ?? ((m: string) => process.emitWarning(m, 'TapedeckWarning'));
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
  } catch (e) {
    throw new TapedeckError('E_RECORDINGS_DIR', `Cannot read recordings directory ${dir}: ${(e as Error).message}.`, {
      hint: 'Check the path; record first (TAPEDECK_MODE=record) if it does not exist yet.',
      file: dir,
    });
  }
  const out: Recording[] = [];
  for (const name of names) {
    const file = join(dir, name);
    const bytes = readFileSync(file);
    // A UTF-8 byte order mark first (Notepad and other Windows editors write one) is no part of
    // the JSON: read as three spaces, as every command that reads JSON reads it, so a syntax
    // error's byte offset is still the file's own. Skipping the file instead shifted a repeated
    // request's later recordings onto its earlier calls.
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes.fill(0x20, 0, 3);
    let data: unknown;
    try {
      data = JSON.parse(bytes.toString('utf8'));
    } catch {
      // Re-read with the strict parser for a byte offset and a readable reason.
      let why = 'invalid JSON';
      try {
        canonicalizeJSON(bytes);
      } catch (e) {
        if (e instanceof TapedeckError) why = e.message;
      }
      warn(`Skipped recording ${file}: ${why}`);
      continue;
    }
    if (data === null || typeof data !== 'object' || !('request' in data) || !('response' in data)) {
      warn(`Skipped recording ${file}: expected an object with "request" and "response".`);
      continue;
    }
    const rec = { ...(data as Recording), source: name };
    try {
      const n = normalizeRequest(rec.request, opts);
      const stored = rec.signature;
      if (
        stored &&
        (!sameList(stored.toolNames, n.toolNames) || stored.messageCount !== n.messages.length || !sameList(stored.contextKeys, n.contextKeys))
      ) {
        warn(
          `Recording ${file}: stored signature ${JSON.stringify(stored)} disagrees with its request ` +
            `(tools ${JSON.stringify(n.toolNames)}, ${n.messages.length} messages, context keys ${JSON.stringify(n.contextKeys)}); using the request's.`,
        );
      }
    } catch (e) {
      if (!(e instanceof TapedeckError)) throw e;
      // A hand-written recording's request holds the URL and the body (`tapedeck add` reads it):
      // said as such, not as a request body without messages.
      warn(`Skipped recording ${file}: ${isHandWritten(rec.request) ? `this is a hand-written recording ({ "request": { "url", "body" }, "response" }, docs/hand-written.md), whose "request" is not a request body: use tapedeck add <tape> ${file}.` : e.message}`);
      continue;
    }
    out.push(rec);
  }
  return out;
}
