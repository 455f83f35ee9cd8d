// Misses that explain themselves: when no recording answers a request, say which recordings
// came closest, where they diverge, what changed in the tools, what was already used, and what
// to do about it. Runs only on the miss path, so it may scan every recording.

import { canonicalize } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import type { MatchMode, Recording, RequestDigests, RequestKeys, Signature } from './matcher.ts';

export interface MissContext {
  mode: MatchMode;
  request: RequestKeys;
  recordings: readonly Recording[];
  /** Digests of every recording (ranking needs only these). */
  keys: readonly RequestDigests[];
  /** Full keys of recording i, with its normalized view (for the excerpts of the closest). */
  full(i: number): RequestKeys;
  used: Uint8Array;
  allowRepeats: boolean;
  source?: string;
  recordCommand?: string;
  hasKey(key: string): boolean;
  hasSignature(digest: string): boolean;
}

/** One of the closest recordings, as reported in E_MISS details. */
export interface NearMiss {
  index: number;
  source?: string;
  /** Leading messages the recording shares with the request (equal path hashes). */
  sharedMessages: number;
  /** First message index where the two differ (or where one of them ends). */
  divergesAt: number;
  signatureDistance: number;
  toolsAdded: string[];
  toolsRemoved: string[];
  messageCount: number;
  contextKeys: string[];
  used: boolean;
  /** Canonical JSON excerpts of both sides at divergesAt ('' where that side has no message). */
  requestExcerpt: string;
  recordingExcerpt: string;
  /** Top-level request arguments whose values differ (besides messages). */
  differingArgs: string[];
  /** The member name at the first difference inside the diverging message, if it is one leaf. */
  differingField?: string;
}

const decoder = new TextDecoder();
const canonicalText = (v: unknown) => decoder.decode(canonicalize(v));

function setDiff(a: readonly string[], b: readonly string[]): string[] {
  const s = new Set(b);
  return a.filter((x) => !s.has(x));
}

function signatureDistance(a: Signature, b: Signature): number {
  return (
    setDiff(a.toolNames, b.toolNames).length +
    setDiff(b.toolNames, a.toolNames).length +
    Math.abs(a.messageCount - b.messageCount) +
    setDiff(a.contextKeys, b.contextKeys).length +
    setDiff(b.contextKeys, a.contextKeys).length
  );
}

function sharedPrefix(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Excerpts of two texts around their first difference, so long prompts show what changed. */
function excerpts(a: string, b: string, width = 110): [string, string] {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 40);
  const cut = (s: string) => (from > 0 ? '…' : '') + s.slice(from, from + width) + (s.length > from + width ? '…' : '');
  return [a ? cut(a) : '(no message)', b ? cut(b) : '(no message)'];
}

/** Path of the first differing leaf between two JSON values, e.g. ['content', 0, 'text']. */
function firstDifference(a: unknown, b: unknown, path: (string | number)[] = []): (string | number)[] | undefined {
  if (a === b) return undefined;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], [...path, i]);
      if (d) return d;
    }
    return undefined;
  }
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], [...path, k]);
      if (d) return d;
    }
    return undefined;
  }
  return canonicalText(a ?? null) === canonicalText(b ?? null) ? undefined : path;
}

// Member names that carry what a message says; a difference there is a real change, not a
// volatile field worth ignoring.
const CONTENT_FIELDS = new Set(['content', 'text', 'role', 'name', 'arguments', 'input', 'output', 'type', 'url', 'sha256', 'data']);

function nearMiss(ctx: MissContext, i: number): NearMiss {
  const req = ctx.request;
  const rec = ctx.full(i);
  const shared = sharedPrefix(req.pathHashes, rec.pathHashes);
  const reqMsg = req.messages[shared];
  const recMsg = rec.messages[shared];
  const [requestExcerpt, recordingExcerpt] = excerpts(
    reqMsg === undefined ? '' : canonicalText(reqMsg),
    recMsg === undefined ? '' : canonicalText(recMsg),
  );
  // Request arguments live in view.options; model, system and tools beside it.
  const opts = (v: Record<string, unknown>) => (v.options && typeof v.options === 'object' ? (v.options as Record<string, unknown>) : {});
  const differs = (a: Record<string, unknown>, b: Record<string, unknown>, k: string) =>
    canonicalText(a[k] ?? null) !== canonicalText(b[k] ?? null);
  const args = [
    ...['model', 'system', 'tools'].filter((k) => differs(req.view, rec.view, k)),
    ...[...new Set([...Object.keys(opts(req.view)), ...Object.keys(opts(rec.view))])].sort().filter((k) => differs(opts(req.view), opts(rec.view), k)),
  ];
  let differingField: string | undefined;
  if (reqMsg !== undefined && recMsg !== undefined) {
    const path = firstDifference(reqMsg, recMsg);
    const leaf = path?.filter((p): p is string => typeof p === 'string').pop();
    if (leaf && !CONTENT_FIELDS.has(leaf)) differingField = leaf;
  }
  return {
    index: i,
    source: ctx.recordings[i]!.source,
    sharedMessages: shared,
    divergesAt: shared,
    signatureDistance: signatureDistance(req.signature, rec.signature),
    toolsAdded: setDiff(req.signature.toolNames, rec.signature.toolNames),
    toolsRemoved: setDiff(rec.signature.toolNames, req.signature.toolNames),
    messageCount: rec.signature.messageCount,
    contextKeys: rec.signature.contextKeys,
    used: ctx.used[i] === 1,
    requestExcerpt,
    recordingExcerpt,
    differingArgs: args,
    differingField,
  };
}

/** The three recordings closest to the request: longest shared prefix, then signature. */
export function closestRecordings(ctx: MissContext, limit = 3): NearMiss[] {
  const scored = ctx.keys.map((k, i) => ({
    i,
    shared: sharedPrefix(ctx.request.pathHashes, k.pathHashes),
    dist: signatureDistance(ctx.request.signature, k.signature),
  }));
  scored.sort((a, b) => b.shared - a.shared || a.dist - b.dist || a.i - b.i);
  return scored.slice(0, limit).map((s) => nearMiss(ctx, s.i));
}

const list = (xs: readonly string[]) => `[${xs.join(', ')}]`;

/** Builds the E_MISS error for a request no recording answers. */
export function explainMiss(ctx: MissContext): TapedeckError {
  const req = ctx.request;
  const total = ctx.recordings.length;
  const usedIdx: number[] = [];
  ctx.used.forEach((u, i) => u && usedIdx.push(i));
  const near = closestRecordings(ctx);
  const where = ctx.source ? ` from ${ctx.source}` : '';
  const lines: string[] = [
    `No recording matches this request (mode ${ctx.mode}; ${total} recording${total === 1 ? '' : 's'}${where}, ${total - usedIdx.length} unused).`,
    `Request: key ${req.key.slice(0, 16)}…, ${req.signature.messageCount} message${req.signature.messageCount === 1 ? '' : 's'}, ` +
      `tools ${list(req.signature.toolNames)}, context keys ${list(req.signature.contextKeys)}, signature ${req.signatureDigest.slice(0, 16)}….`,
  ];
  if (near.length) {
    lines.push('Closest recordings:');
    const plural = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
    for (const n of near) {
      const name = `#${n.index}${n.source ? ` (${n.source})` : ''}${n.used ? ' [already used]' : ''}`;
      const sameMessages = n.sharedMessages === n.messageCount && n.sharedMessages === req.signature.messageCount;
      lines.push(
        `  ${name}: ` +
          (sameMessages
            ? `the same ${plural(n.messageCount, 'message')}`
            : `shares ${plural(n.sharedMessages, 'leading message')}, diverges at message ${n.divergesAt}; ${plural(n.messageCount, 'message')}`) +
          `, context keys ${list(n.contextKeys)}`,
      );
      if (n.toolsAdded.length || n.toolsRemoved.length) {
        lines.push(`      tools: added ${list(n.toolsAdded)}, removed ${list(n.toolsRemoved)}`);
      }
      if (!sameMessages) {
        lines.push(`      request   [${n.divergesAt}] ${n.requestExcerpt}`);
        lines.push(`      recording [${n.divergesAt}] ${n.recordingExcerpt}`);
      }
      if (n.differingArgs.length) lines.push(`      differing request arguments: ${list(n.differingArgs)}`);
    }
  } else {
    lines.push('There are no recordings at all.');
  }
  lines.push(`Already used: ${usedIdx.length ? list(usedIdx.slice(0, 20).map((i) => `#${i}`)) + (usedIdx.length > 20 ? ` and ${usedIdx.length - 20} more` : '') : 'none'}.`);

  const fixes: string[] = [];
  const best = near[0];
  const exactUsed = ctx.hasKey(req.key);
  const sigUsed = ctx.hasSignature(req.signatureDigest);
  if (exactUsed && !ctx.allowRepeats) {
    fixes.push('A recording of exactly this request exists but was already used: the code now makes this call more often than when it was recorded. Re-record, or pass allowRepeats: true to replay it again.');
  } else if (sigUsed && ctx.mode === 'exact') {
    fixes.push("A recording with the same signature (tools, message count, context keys) exists: mode 'hybrid' or 'signature' would use it.");
  } else if (sigUsed && !ctx.allowRepeats) {
    fixes.push('A recording with the same signature exists but was already used; pass allowRepeats: true to reuse it, or re-record.');
  }
  if (best && (best.toolsAdded.length || best.toolsRemoved.length)) {
    fixes.push(`The tools changed since recording (${[...best.toolsRemoved.map((t) => `-${t}`), ...best.toolsAdded.map((t) => `+${t}`)].join(' ')}): the recordings are stale; re-record them.`);
  }
  // Only options can be volatile; a different model, system prompt or tool set is a real change.
  const options = best?.differingArgs.filter((a) => !['model', 'system', 'tools'].includes(a)) ?? [];
  if (best && options.length && options.length === best.differingArgs.length && best.sharedMessages === best.messageCount && best.messageCount === req.signature.messageCount) {
    fixes.push(`Only request arguments differ (${options.join(', ')}): if they do not change the answer, ignore them with ignoreArgs: ${JSON.stringify(options)}.`);
  }
  if (best?.differingField) {
    fixes.push(`Message ${best.divergesAt} differs in the field "${best.differingField}": if it is volatile (an id or timestamp), ignore it with volatileKeys: ["${best.differingField}"].`);
  }
  fixes.push(`Re-record: ${ctx.recordCommand ?? 'run the test again with TAPEDECK_MODE=record'}${ctx.source ? ` (recordings in ${ctx.source})` : ''}.`);
  lines.push('How to fix:', ...fixes.map((f) => `  - ${f}`));

  return new TapedeckError('E_MISS', lines.join('\n'), {
    key: req.key,
    signature: req.signature,
    signatureDigest: req.signatureDigest,
    closest: near,
    used: usedIdx,
    fixes,
  });
}
