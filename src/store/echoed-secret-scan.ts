/**
 * For `tapedeck scan` (./secret-scan.ts): a key a realtime session's client sent in clear where
 * the server's frame repeating it has it masked. Tapes recorded before the connect's own secrets
 * were masked in the client's frames too (src/realtime/session.ts) held such a key there: an
 * Azure key is 32 hex characters, no prefix a credential pattern knows, and it was masked in the
 * server's copy only because the connect carried it. The mask in the server's copy says where the
 * key stands: a client string of the same part that reads as the server's text around the mask,
 * with a token in the mask's place, holds it. Only the frames of one part are compared (a scan
 * reads one record at a time); a server that repeats the text in a later part is not seen.
 */
import { childPath } from './tape-json.ts';

/** A mask as redaction writes it: `[REDACTED]`, or keyed `[REDACTED:<16 hex>]`. */
const MASK = /\[REDACTED(?::[0-9a-f]{16})?\]/g;

/** How much of the text on each side of a mask anchors the search (at least ANCHOR_MIN characters in all). */
const ANCHOR = 24;
const ANCHOR_MIN = 3;

/** What may stand in a mask's place: a token of at least 8 characters with a letter (the shortest value the connect's secrets are looked for by: ./echo-redact.ts). */
const TOKEN = '([A-Za-z0-9._~+/=-]{8,})';

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Every string in a JSON value, with its path below `path`. */
function* strings(v: unknown, path: string): Generator<[string, string]> {
  if (typeof v === 'string') yield [path, v];
  else if (Array.isArray(v)) for (let i = 0; i < v.length; i++) yield* strings(v[i], childPath(path, i));
  else if (isObject(v)) for (const [k, x] of Object.entries(v)) yield* strings(x, childPath(path, k));
}

/**
 * The keys in clear in the client frames of a realtime part record whose server frames repeat
 * them masked: each with the path of the client string and the key; none for any other value.
 *
 * @example
 * echoedSecrets({ kind: 'realtime', role: 'part', frames: [
 *   { c: 1, msg: { instructions: 'Use key 5f4dcc3b5aa765d61d8327deb882cf99 now' } },
 *   { text: '{"instructions":"Use key [REDACTED] now"}' },
 * ] }) // [{ path: '$.frames[0].msg.instructions', found: '5f4dcc3b5aa765d61d8327deb882cf99' }]
 */
export function echoedSecrets(value: unknown): { path: string; found: string }[] {
  if (!isObject(value) || value.kind !== 'realtime' || value.role !== 'part' || !Array.isArray(value.frames)) return [];
  const frames = value.frames as unknown[];
  // The server's masked strings, as patterns: the text each side of a mask, a token between.
  const patterns = new Set<string>();
  for (const f of frames) {
    if (!isObject(f) || typeof f.text !== 'string' || !f.text.includes('[REDACTED')) continue;
    let doc: unknown;
    try {
      doc = JSON.parse(f.text);
    } catch {
      doc = f.text;
    }
    for (const [, s] of strings(doc, '$')) {
      const pieces = s.split(MASK);
      for (let i = 0; i + 1 < pieces.length; i++) {
        const left = pieces[i]!.slice(-ANCHOR);
        const right = pieces[i + 1]!.slice(0, ANCHOR);
        if ((left + right).trim().length < ANCHOR_MIN) continue;
        patterns.add(`${i === 0 && pieces[i]!.length <= ANCHOR ? '^' : ''}${escape(left)}${TOKEN}${escape(right)}${i + 2 === pieces.length && pieces[i + 1]!.length <= ANCHOR ? '$' : ''}`);
      }
    }
  }
  if (patterns.size === 0) return [];
  const res = [...patterns].map((p) => new RegExp(p));
  const out: { path: string; found: string }[] = [];
  frames.forEach((f, i) => {
    if (!isObject(f) || f.c !== 1 || f.msg === undefined) return;
    for (const [path, s] of strings(f.msg, childPath(childPath(childPath('$', 'frames'), i), 'msg'))) {
      for (const re of res) {
        const token = re.exec(s)?.[1];
        if (token !== undefined && /[A-Za-z]/.test(token) && !out.some((o) => o.path === path && o.found === token)) out.push({ path, found: token });
      }
    }
  });
  return out;
}
