// The words a miss uses for a difference inside an object: the member of an option object
// (Gemini's generationConfig, Bedrock's inferenceConfig, OpenAI's response_format) or of a tool
// definition that changed, and the call a tool result answers; and the tie-break by characters
// of the closest recording. Kept apart from diagnose.ts so that a page's bundle, which has a
// 100 KB budget (bench/size.mjs), gets member-difference.browser.ts (package.json "browser"):
// there a miss keeps diagnose.ts's shorter words, and ranks by words alone.

import { canonicalize } from '../core/index.ts';
import type { MissDifference } from './diagnose.ts';
import type { RequestKeys } from './matcher.ts';
import { firstDifference } from './json-difference.ts';

const decoder = new TextDecoder();
const canonicalText = (v: unknown) => decoder.decode(canonicalize(v));
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const isObject = (v: unknown): v is object => v !== null && typeof v === 'object';

/**
 * Where two objects first differ, as a member path (`a.b[0]`) and both values when short; a
 * `temperature` one side lacks is a sampling one (the key holds temperature only at 0).
 */
function memberDifference(a: unknown, b: unknown): { name: string; values?: string } | undefined {
  if (!isObject(a) || !isObject(b)) return undefined;
  const d = firstDifference(a, b);
  if (d === undefined) return undefined;
  const value = (v: unknown): string | undefined => {
    if (v === undefined) return /(^|\.)temperature$/.test(d.path) ? 'sampling (not 0)' : '(absent)';
    const t = typeof v === 'string' ? v : canonicalText(v);
    return t.length <= 32 ? t : undefined;
  };
  const x = value(d.got);
  const y = value(d.recorded);
  return { name: clip(d.path, 60), values: x && y ? `${x} vs ${y}` : undefined };
}

/**
 * The miss for one option that is an object (generationConfig, inferenceConfig,
 * response_format), naming the member in it that changed: an SDK or a schema library builds
 * these out of the caller's sight. Undefined for other values, and for a list short enough to
 * read whole (`stop`).
 *
 * @example
 * optionMember('generationConfig', { maxOutputTokens: 100 }, { maxOutputTokens: 200 })
 * // 'argument generationConfig.maxOutputTokens differs: 100 vs 200 in the closest recording'
 */
function optionMember(option: string, sent: unknown, recorded: unknown): string | undefined {
  if (Array.isArray(sent) && Array.isArray(recorded) && canonicalText(sent).length <= 32 && canonicalText(recorded).length <= 32) return undefined;
  const m = memberDifference(sent, recorded);
  if (m === undefined) return undefined;
  return `argument ${clip(option, 40)}${m.name.startsWith('[') ? '' : '.'}${m.name} differs${m.values ? `: ${m.values} in` : ' from'} the closest recording`;
}

/**
 * Where the first changed tool definition differs from the recorded one at its place, said
 * after "differs" (` at strict: (absent) vs true in`); undefined when that cannot be told. A
 * hand-written request must reproduce what the SDK sends, a `strict` it adds included.
 *
 * @example
 * toolMember([{ name: 'w', strict: true }], [{ name: 'w' }]) // ' at strict: true vs (absent) in'
 */
function toolMember(sent: unknown, recorded: unknown): string | undefined {
  const a = Array.isArray(sent) ? sent : [];
  const b = Array.isArray(recorded) ? recorded : [];
  const k = a.findIndex((t, k) => canonicalText(t) !== canonicalText(b[k] ?? null));
  const m = k < 0 ? undefined : memberDifference(a[k], b[k]);
  return m && ` at ${m.name}${m.values ? `: ${m.values} in` : ' from'}`;
}

/**
 * The characters two conversations share (from message `from` on, as canonical JSON) at their
 * start and end, as a fraction below 1 (a count over 2^32): added to a count of shared words,
 * it only breaks their ties.
 *
 * @example
 * const sent = [{ content: 'Summarize this text!' }];
 * sharedChars(sent, [{ content: 'Summarize this text' }], 0) > sharedChars(sent, [{ content: 'Summarize this' }], 0) // true
 */
export function sharedChars(a: readonly unknown[], b: readonly unknown[], from: number): number {
  const text = (ms: readonly unknown[]) => ms.slice(from).map((m) => canonicalText(m ?? null)).join(' ');
  const x = text(a);
  const y = text(b);
  const n = Math.min(x.length, y.length);
  let p = 0;
  while (p < n && x.charCodeAt(p) === y.charCodeAt(p)) p++;
  let s = 0;
  while (s < n - p && x.charCodeAt(x.length - 1 - s) === y.charCodeAt(y.length - 1 - s)) s++;
  return (p + s) / 2 ** 32;
}

/** The tool call a message of `messages` (normalized views) made with this id, as `name {arguments}`. */
function toolCallOf(messages: readonly unknown[], id: unknown): string | undefined {
  for (const m of messages) {
    const parts = isObject(m) ? (m as { content?: unknown }).content : undefined;
    for (const p of Array.isArray(parts) ? (parts as Record<string, unknown>[]) : []) {
      if (p?.type === 'tool_call' && p.id === id) return clip(`${String(p.name)} ${canonicalText(p.arguments ?? null)}`, 100);
    }
  }
  return undefined;
}

/**
 * The miss for a tool result whose id differs from the recorded one's (`where`: `message 2
 * (tool)`): the key numbers the ids that link results to calls (call_0, ...), which the caller
 * never sent, so each result's call is named by its tool and arguments. Undefined when either
 * call is not in its conversation.
 *
 * @example
 * otherCall('message 2 (tool)', reqMessages, recMessages, 'call_0', 'call_1')
 * // { kind: 'message', text: 'message 2 (tool) tool result differs: it answers another call ...', lines: ['  request:   w {"city":"Paris"}', ...] }
 */
function otherCall(where: string, sent: readonly unknown[], recorded: readonly unknown[], sentId: unknown, recordedId: unknown): MissDifference | undefined {
  const mine = toolCallOf(sent, sentId);
  const theirs = toolCallOf(recorded, recordedId);
  if (!mine || !theirs) return undefined;
  return { kind: 'message', text: `${where} tool result differs: it answers another call than in the closest recording`, lines: [`  request:   ${mine}`, `  recording: ${theirs}`] };
}

const options = (v: Record<string, unknown>) => (isObject(v.options) ? (v.options as Record<string, unknown>) : {});
const TAIL = ' differs from the closest recording';

/**
 * Looks inside the differences diagnose.ts found between a request and its closest recording
 * (`out`, changed in place; `d`: the index of the first differing message) and names what
 * changed within each: the member of a changed tool definition, of the one option that differs
 * when it is an object, and the calls of a tool result whose numbered id differs.
 *
 * @example
 * closerLook(out, requestKeys(sent), requestKeys(recorded), 1)
 * // 'arguments differ from the closest recording: generationConfig' becomes
 * // 'argument generationConfig.maxOutputTokens differs: 100 vs 200 in the closest recording'
 */
export function closerLook(out: MissDifference[], req: RequestKeys, rec: RequestKeys, d: number): void {
  // Each difference is told by its kind and the words diagnose.ts gave it (the ones a page keeps).
  out.forEach((x, i) => {
    let better: MissDifference | undefined;
    if (x.kind === 'tools' && x.text.endsWith(TAIL)) {
      const at = toolMember(req.view.tools, rec.view.tools);
      if (at) better = { ...x, text: `${x.text.slice(0, -TAIL.length)} differs${at} the closest recording` };
    } else if (x.kind === 'arguments') {
      const a = options(req.view);
      const b = options(rec.view);
      const changed = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => canonicalText(a[k] ?? null) !== canonicalText(b[k] ?? null));
      const text = changed.length === 1 ? optionMember(changed[0]!, a[changed[0]!], b[changed[0]!]) : undefined;
      if (text) better = { ...x, text };
    } else if (x.kind === 'message' && x.text.endsWith(` tool result${TAIL}`)) {
      const diff = firstDifference(req.messages[d], rec.messages[d]);
      if (diff && /\.id$/.test(diff.path)) better = otherCall(x.text.slice(0, -` tool result${TAIL}`.length), req.messages, rec.messages, diff.got, diff.recorded);
    }
    if (better) out[i] = better;
  });
}
