// The readable form of a conversation tree (`tapedeck tree <tape>`). An unbranched run of
// messages is printed as a column at one indentation, one line per message (a turn); only branch
// points indent, so a 10,000-message conversation stays readable and the deepest indentation is
// the number of branch points on a path, not its length.

import { checkOptionsObject } from '../option-names.ts';
import { answerHosts, hostNamer } from './hosts.ts';
import type { Alternative, ConversationTree, TreeNode } from './tree.ts';

/** Options of formatTree: the width, hashes, how long runs are collapsed. */
export interface FormatOptions {
  /** Longest excerpt of a message, in characters (default 72). */
  width?: number;
  /** Show the first 12 hex digits of each node's path hash (default false). */
  hashes?: boolean;
  /**
   * Unbranched runs longer than this print their first and last few messages and a line saying
   * how many were left out (default: print everything).
   */
  collapse?: number;
  /** Leave out the summary lines at the top (default false). */
  noSummary?: boolean;
}

type Part = { type?: unknown; text?: unknown; name?: unknown; arguments?: unknown; argumentsText?: unknown; id?: unknown; content?: unknown } & Record<string, unknown>;

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function clip(s: string, width: number): string {
  const chars = Array.from(s);
  return chars.length > width ? `${chars.slice(0, Math.max(1, width - 1)).join('')}…` : s;
}

function attachmentText(a: unknown): string {
  if (a === null || typeof a !== 'object') return '';
  const o = a as Record<string, unknown>;
  if (typeof o.sha256 === 'string') return `sha256:${o.sha256.slice(0, 12)}${typeof o.mediaType === 'string' ? ` ${o.mediaType}` : ''}`;
  if (typeof o.url === 'string') return o.url;
  if (typeof o.path === 'string') return o.path;
  if (typeof o.fileId === 'string') return `file ${o.fileId}`;
  if (typeof o.textSha256 === 'string') return `text sha256:${o.textSha256.slice(0, 12)}`;
  return '';
}

function json(v: unknown): string {
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return String(v);
  }
}

function partText(p: unknown): string {
  if (typeof p === 'string') return p;
  if (p === null || typeof p !== 'object') return json(p);
  const part = p as Part;
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' ? part.text : '';
    case 'image':
    case 'audio':
    case 'file':
      return `[${part.type} ${attachmentText(part[part.type])}]`;
    case 'tool_call':
    case 'function_call':
      return `${String(part.name ?? '?')}(${part.arguments !== undefined ? json(part.arguments) : String(part.argumentsText ?? '')})`;
    case 'tool_result':
      return `→ ${contentText(part.content)}`;
    case 'json':
      // An AI SDK tool result's JSON output, as the normalizer holds it.
      return 'json' in part ? json(part.json) : '[json]';
    case 'reasoning':
      // The model's reasoning (AI SDK parts, Responses items) is not its answer: its kind only.
      return '[reasoning]';
    default:
      // A part of a kind not listed shows its kind; a value with none (a generic endpoint's JSON
      // answer, `{"output": ...}`) shows itself, which says more than `[part]` did.
      return typeof part.text === 'string' ? part.text : part.type !== undefined ? `[${String(part.type)}]` : json(p);
  }
}

function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map(partText).filter(Boolean).join(' ');
  return c === undefined || c === null ? '' : json(c);
}

/**
 * One line of text for a message: its text parts, attachments as `[image sha256:…]`, tool calls
 * as `name({...})`, tool results as `→ …`, whitespace collapsed, clipped to `width`.
 *
 * @example
 * messageExcerpt({ role: 'user', content: [{ type: 'text', text: 'Hi\n  there' }] }, 20) // 'Hi there'
 */
export function messageExcerpt(message: unknown, width = 72): string {
  if (message === null || typeof message !== 'object') return message === undefined ? '' : clip(oneLine(json(message)), width);
  const m = message as Record<string, unknown>;
  const text = 'content' in m ? contentText(m.content) : json(m);
  return clip(oneLine(text), width);
}

/** The id of the tree's marker for a response on no recording (PreviousResponseMarker), else undefined. */
function unknownResponse(message: unknown): string | undefined {
  if (message === null || typeof message !== 'object') return undefined;
  const m = message as Record<string, unknown>;
  return m.type === 'previous_response' && m.role === undefined && typeof m.id === 'string' ? m.id : undefined;
}

function describe(node: TreeNode, width: number): string {
  if (node.message === undefined) return `(message not kept, digest ${node.promptHash.slice(0, 12)})`;
  // Not clipped: what it says is why the conversation starts here.
  const unknown = unknownResponse(node.message);
  if (unknown !== undefined) return `previous response ${unknown}: on no recording of this tape`;
  const text = messageExcerpt(node.message, width);
  return text === '' ? '(empty)' : JSON.stringify(text).slice(1, -1).replace(/\\"/g, '"');
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Prints a conversation tree: one line per message with its turn number, role and an excerpt;
 * branches drawn with ├─ / └─; each recorded answer marked `← answer k/N` with its model, when it
 * was recorded, the host(s) it came from when the tree's answers came from several hosts, and how
 * often it was served; requests with no recorded answer marked as such.
 *
 * @example
 * console.log(formatTree(tree, { width: 60, hashes: true, collapse: 20 }))
 */
export function formatTree(tree: ConversationTree, opts: FormatOptions = {}): string {
  checkOptionsObject(tree, 'formatTree', "formatTree((await loadTree('chat.tape')).tree)", 'a ConversationTree');
  checkOptionsObject(opts, 'formatTree', 'formatTree(tree, { width: 60 })', 'options as its second argument');
  let out = '';
  for (const line of treeLines(tree, opts)) out += `${line}\n`;
  // An empty tree without its summary has always printed one empty line.
  return out === '' ? '\n' : out;
}

/**
 * formatTree()'s lines one at a time, without the newlines: `tapedeck tree` writes a large
 * tree's text as it is made instead of holding all of it (a 100,000-recording tape's text is
 * ~17 million characters). Internal to src/tree.
 *
 * @example
 * for (const line of treeLines(tree, { collapse: 40 })) process.stdout.write(`${line}\n`);
 */
export function* treeLines(tree: ConversationTree, opts: FormatOptions = {}): Generator<string> {
  for (const line of rawLines(tree, opts)) yield shown(line);
}

// Recorded text (a pasted web page, a RAG chunk, a model name) is data, never a command to the
// reader's terminal: C0 controls but tab, DEL, C1 controls (0x9b is a one-byte CSI on some
// terminals) and the bidirectional overrides and isolates that reorder the rest of a line on
// screen are shown as escapes, as tapedeck diff shows them.
const TERMINAL_CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
const shown = (line: string): string => line.replace(TERMINAL_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

function* rawLines(tree: ConversationTree, opts: FormatOptions): Generator<string> {
  const width = opts.width ?? 72;
  const collapse = opts.collapse ?? Infinity;
  // Several answers of one prompt can be the same message (a call and its stream, recorded
  // apart): they share one node, which lists them all (else `answer 1/2` with no 2/2).
  const answersOf = new Map<TreeNode, Alternative[]>();
  for (const n of tree.nodes()) {
    for (const a of n.alternatives) {
      const same = answersOf.get(a.node);
      if (!same) answersOf.set(a.node, [a]);
      else if (same[0]!.prompt === a.prompt) same.push(a);
    }
  }

  // Hosts are named only on a tape recorded for several of them: one host's tape reads as before.
  const hostName = hostNamer(tree.origins);

  if (!opts.noSummary) {
    const s = tree.stats();
    yield (
      `${plural(s.roots, 'conversation root')} · ${plural(s.nodes, 'message')} · ${plural(s.exchanges, 'recorded answer')} · ` +
        `${plural(s.branchPoints, 'branch point')} · ${plural(s.alternativeSets, 'prompt')} with alternatives · longest ${plural(s.maxLength, 'message')}`
    );
    if (s.hits + s.misses > 0) yield `served: ${s.hits} hits, ${s.misses} misses`;
    if (tree.warnings.length > 0) yield `${plural(tree.warnings.length, 'record')} not placed (see warnings)`;
    yield '';
  }

  const line = (node: TreeNode, prefix: string): string => {
    const role = (node.role ?? '?').padEnd(9);
    let s = `${prefix}#${node.depth + 1} ${role} ${describe(node, width)}`;
    const alts = answersOf.get(node);
    const alt = alts?.[0];
    if (alts && alt) {
      const total = alt.prompt.alternatives.length;
      const bits = [total <= 1 ? 'answer' : alts.length === 1 ? `answer ${alt.index + 1}/${total}` : `answers ${alts.map((a) => a.index + 1).join(', ')}/${total} (the same)`];
      const models = [...new Set(alts.map((a) => a.model).filter((m) => m))];
      if (models.length > 0) bits.push(models.join(', '));
      const times = alts.map((a) => a.recordedAt).filter((t) => t);
      if (times.length > 0) bits.push(times.join(', '));
      const hosts = hostName && answerHosts(alts, hostName);
      if (hosts) bits.push(hosts.text);
      // Several hosts' counts are each in their part: one total would read as one host's.
      const recordings = alts.reduce((n, a) => n + a.recordings, 0);
      if (!hosts?.several && (recordings > alts.length || (alts.length === 1 && recordings > 1))) bits.push(`recorded ${recordings}×`);
      const uses = alts.reduce((n, a) => n + a.uses, 0);
      if (uses > 0) bits.push(`reused ${uses}×`);
      s += `  ← ${bits.join(' · ')}`;
    }
    if (node.children.length === 0 && node.alternatives.length === 0 && !alt) s += '  (no recorded answer)';
    if (opts.hashes) s += `  [${node.pathHash.slice(0, 12)}]`;
    return s;
  };

  // Each stack entry starts a run: the node, the prefix for its first line (with its branch
  // connector) and the prefix for the lines under it.
  type Run = { node: TreeNode; first: string; rest: string };
  const stack: Run[] = [];
  const pushChildren = (children: readonly TreeNode[], rest: string): void => {
    for (let i = children.length - 1; i >= 0; i--) {
      const lastChild = i === children.length - 1;
      stack.push({ node: children[i]!, first: `${rest}${lastChild ? '└─ ' : '├─ '}`, rest: `${rest}${lastChild ? '   ' : '│  '}` });
    }
  };
  pushChildren(tree.roots, '');
  // A single root needs no connector.
  if (tree.roots.length === 1) stack[0] = { node: tree.roots[0]!, first: '', rest: '' };

  while (stack.length > 0) {
    const run = stack.pop()!;
    const chainNodes: TreeNode[] = [run.node];
    let n = run.node;
    while (n.children.length === 1) {
      n = n.children[0]!;
      chainNodes.push(n);
    }
    const keep = Number.isFinite(collapse) && chainNodes.length > collapse ? Math.max(1, Math.floor(collapse / 2)) : Infinity;
    for (let i = 0; i < chainNodes.length; i++) {
      if (keep !== Infinity && i >= keep && i < chainNodes.length - keep) {
        if (i === keep) yield `${run.rest}… ${plural(chainNodes.length - 2 * keep, 'message')} left out …`;
        continue;
      }
      yield line(chainNodes[i]!, i === 0 ? run.first : run.rest);
    }
    pushChildren(n.children, run.rest);
  }
}
