/*
 * The conversation tree. Every message of every recorded conversation is a node,
 * addressed by its path hash from the hash spec (docs/hash-spec.md):
 *
 *   prompt_hash = m_i = digest(message i)                  (the input this node adds)
 *   path_hash   = p_i = SHA-256(hex(p_{i-1}) ":" hex(m_i)),  p_0 = m_0
 *   parent      = p_{i-1}, or none for the first message
 *
 * which is the classic path_hash = hash(parent.path_hash + ":" + prompt_hash), one message per
 * step. A recorded exchange (request messages x_0..x_{n-1} and its answer) hangs on the node of
 * its last request message, p_{n-1}, as an alternative; the answer's own messages are child
 * nodes of that node, with response_hash = the digest of the answer message, so the next request
 * of the conversation (which repeats the answer as an assistant message) walks straight through
 * them. An assistant message that differs from the recorded answer has a different path hash,
 * so it starts a branch; nothing is ever overwritten.
 *
 * Because p_i identifies the whole prefix up to i, "p_i is in the tree" holds for a prefix of
 * the conversation and fails after it. findOrCreate therefore finds the longest recorded prefix
 * with a binary search over the path hashes: O(log n) Map lookups, after O(1) checks for the two
 * common cases (the whole conversation is known; all but the last message is known). The timing
 * target for a 10,000-message conversation (50 µs) rules out one lookup per message.
 */

import { chainHashes, hashMany, hashValue, pathHashes, sha256Hex } from '../core/index.ts';
import { TapedeckError } from '../errors.ts';
import { requestKey, requestKeys } from '../match/matcher.ts';
import { detectProvider, normalizeRequest, routeOf, routeShapeOf } from '../providers/index.ts';
import type { Endpoint, NormalizeOptions } from '../providers/types.ts';
import { isHttpRecord, isMcpRecord, isRealtimeRecord, REPLAY_RECORD_KIND } from '../store/records.ts';
import { httpRecordExchange } from './proxy-record.ts';
import { continuedMessages, normalizeExchange } from './response.ts';
import { joinSplitAnswers, type RecordedAnswers } from './split-answers.ts';
import { isBytes } from '../bytes.ts';
import { otherKeysNote } from './other-keys-note.ts';

/** One message of a recorded conversation. */
export interface TreeNode {
  /** p_i: identifies this message and everything before it. */
  readonly pathHash: string;
  /** p_{i-1}, or null for the first message of a conversation. */
  readonly parentHash: string | null;
  readonly parent: TreeNode | null;
  /** m_i: digest of this message (the prompt_hash; for an answer, its response_hash). */
  readonly promptHash: string;
  /** Position in the conversation, from 0. */
  readonly depth: number;
  /** The message's role, when the message is known. */
  readonly role: string | undefined;
  /** The message as hashed, when it was given (hash-only input leaves it out). */
  readonly message: unknown;
  /** Whether the node was first made by a request message or by a recorded answer. */
  readonly origin: 'request' | 'response';
  /** Child nodes, in the order they were added. */
  readonly children: readonly TreeNode[];
  /** Recorded answers to the conversation that ends here, in recorded order. */
  readonly alternatives: readonly Alternative[];
}

/** One recorded answer to the conversation ending at `prompt`. */
export interface Alternative {
  /** Position among the prompt's alternatives, from 0. */
  readonly index: number;
  /** The node of the request's last message (the exchange's path_hash is its pathHash). */
  readonly prompt: TreeNode;
  /**
   * digest of the answer message; for an answer of several messages (Responses output items),
   * the chain of their digests, p over the answer alone (so a one-message answer's
   * responseHash is that message's digest either way).
   */
  readonly responseHash: string;
  /** The node of the answer's last message: where the conversation continues. */
  readonly node: TreeNode;
  /** What is served for a hit (the recorded response value). */
  readonly value: unknown;
  /** Request key it was recorded under (model, tools and options included), if known. */
  readonly key: string | undefined;
  readonly model: string | undefined;
  /** When it was recorded (shown, never hashed). */
  readonly recordedAt: string | undefined;
  /** How many times this same answer was recorded for the same request key. */
  readonly recordings: number;
  /**
   * The hosts the recordings of this answer were sent to (a proxy or createFetch record's
   * `origin`), each with how many of `recordings` it made, in first-recorded order; `origin` is
   * undefined for recordings that name none. Empty when no recording names a host (ReplayCache
   * records, tapes written before origins were stored). The origin is not in the request key, so
   * the same answer from two hosts is one alternative: this says which hosts gave it.
   */
  readonly origins: readonly AnswerOrigin[];
  /** How many times it was served from the tree. */
  readonly uses: number;
  /** Timestamp (ms) of the last time it was served; never part of any hash. */
  readonly lastUsedAt: number | undefined;
  /** Extra data given at recording (e.g. the tape offset). */
  readonly meta: Record<string, unknown> | undefined;
}

/** A host an answer was recorded from, and how many of the answer's recordings it made. */
export interface AnswerOrigin {
  /** `scheme://host[:port]`, as the record stores it; undefined for recordings that name no host. */
  readonly origin: string | undefined;
  readonly recordings: number;
}

/** Hashes of a conversation, as pathHashes() and requestKeys() return them. */
export interface ConversationHashes {
  messageHashes: readonly string[];
  pathHashes: readonly string[];
  /** The messages themselves, kept on new nodes for printing. */
  messages?: readonly unknown[];
  /** The request key, used to pick the alternative recorded for the same request. */
  key?: string;
}

/**
 * What findOrCreate takes: a message list (hashed as given), JSON text or bytes of one (hashed
 * without parsing), precomputed hashes (requestKeys() output works as is), or an LLM request body
 * (normalized first, exactly as the matcher does).
 */
export type TreeInput = readonly unknown[] | Uint8Array | string | ConversationHashes | Record<string, unknown>;

/** An answer to attach. Give `messages` (hashed here) or `messageHashes`. */
export interface ResponseInput {
  /** The answer as message(s) in the conversation's own form. */
  messages?: readonly unknown[];
  messageHashes?: readonly string[];
  /** What a hit serves; default the messages. */
  value?: unknown;
  /**
   * Request key to record under. Default: the request's key (findOrCreate's, or for
   * addResponse(node, …) the key of the request that missed at that node): an answer is only
   * served to requests of its key, never to another model's or other options'.
   */
  key?: string;
  model?: string;
  recordedAt?: string;
  /** The host the answer came from (`scheme://host[:port]`): counted in the alternative's `origins`. */
  origin?: string;
  meta?: Record<string, unknown>;
}

/**
 * Options of findOrCreate and find: an answer to record, the member or messages to walk, the key
 * and normalization.
 */
export interface FindOptions {
  /** Record this answer at the conversation's end (a new alternative unless it is already there). */
  response?: ResponseInput;
  /** For JSON text or bytes: hash the array held by this member of a root object. */
  member?: string;
  /** Messages to keep on new nodes when the input carries only hashes or bytes. */
  messages?: readonly unknown[];
  /** Request key to pick alternatives by (taken from a request body or requestKeys() output). */
  key?: string;
  /**
   * Normalization options for request bodies. The tree's own (`new ConversationTree({ normalize })`,
   * `loadTree(path, { normalize })`) apply by default; members given here replace those members.
   */
  normalize?: NormalizeOptions;
}

/** Where a conversation leaves the recorded tree. */
export interface Divergence {
  /** Index of the first message that was not in the tree. */
  index: number;
  /** The node it now hangs under (null: a new first message, a new root). */
  parent: TreeNode | null;
  /** Other continuations already recorded there, before this one was added. */
  siblings: readonly TreeNode[];
}

/**
 * What findOrCreate returns: whether a recorded answer was served, where the conversation left the
 * tree, and the answers there.
 */
export interface FindResult {
  /** A recorded answer was served (and marked as reused). */
  hit: boolean;
  /** The node of the conversation's last message. */
  node: TreeNode;
  /** Messages of the conversation that were already in the tree. */
  matched: number;
  /** Where the conversation left the tree; null when all of it was already there. */
  divergence: Divergence | null;
  /** Nodes this call created. */
  created: number;
  /** The served answer (hit), or the one recorded by this call. */
  alternative: Alternative | undefined;
  /** All answers recorded at this node. */
  alternatives: readonly Alternative[];
  /** A hit's own timestamp (ms): each use is stamped, the recording is not touched. */
  servedAt: number | undefined;
  /** With `response`: whether it became a new alternative or matched a recorded one. */
  recorded: 'new' | 'existing' | undefined;
  /**
   * The request key alternatives were picked by (`opts.key`, else the key of the request body or
   * of the requestKeys() output given); undefined for a plain message list. `addResponse(result,
   * …)` records the answer under it.
   */
  key: string | undefined;
  /**
   * A miss of a request body looked up without `normalize.endpoint` in a tree holding recordings
   * of APIs whose endpoint decides how a body is keyed (Gemini and Bedrock name the model and the
   * operation in the URL, Ollama and Azure deployments the shape): why it may have missed, and
   * what to pass. Also a miss whose whole conversation is recorded, with answers at its end for
   * other requests only: what those were recorded for (another model; other tools or options).
   * Absent on hits, and where neither applies.
   */
  note?: string;
  /**
   * With `note`: the recorded endpoint under which this very body has an answer, to look it up
   * again with `{ normalize: { endpoint: r.endpoint } }`.
   */
  endpoint?: Endpoint;
}

/**
 * Counts of a ConversationTree (stats()): hits and misses served, recorded answers, branch points,
 * nodes.
 */
export interface TreeStats {
  /** findOrCreate calls served from the tree. */
  hits: number;
  /** findOrCreate calls without a response that found no recorded answer. */
  misses: number;
  /** Answers recorded through findOrCreate / addResponse (existing ones included). */
  recorded: number;
  /** Nodes with more than one child: where conversations branch. */
  branchPoints: number;
  /** Nodes with more than one recorded answer. */
  alternativeSets: number;
  nodes: number;
  /** Conversations' first messages. */
  roots: number;
  /** Recorded answers (alternatives) in the tree. */
  exchanges: number;
  /** Deepest node's depth + 1: the longest conversation, in messages. */
  maxLength: number;
}

/**
 * Options of ConversationTree: the clock, whether messages and answer values are kept, and the
 * normalization of request bodies.
 */
export interface TreeOptions {
  /** Clock for use timestamps (ms); default Date.now. */
  now?: () => number;
  /** Keep message objects on nodes for printing (default true). */
  keepMessages?: boolean;
  /**
   * Keep each recorded answer's value, what a hit serves (default true). false: `value` is
   * undefined on every alternative, for a tree that is only looked at (`tapedeck tree`, which
   * prints no value: ~10% of a large tape's tree).
   *
   * @example
   * const { tree } = await loadTree('big.tape', { keepValues: false }) // formatTree(tree) as before
   */
  keepValues?: boolean;
  /**
   * How request bodies are normalized: for the records the tree is built from (fromRecords,
   * loadTree) and, by default, for the bodies findOrCreate() and find() look up, so a tape
   * recorded with `ignoredArgs` is looked up with the same list. A per-call `normalize` replaces
   * the members it gives.
   *
   * @example
   * const { tree } = await loadTree('cache.tape', { normalize: { ignoreArgs: ['max_tokens'] } })
   * tree.findOrCreate({ ...body, max_tokens: 99 }).hit // true: keyed without max_tokens, as recorded
   */
  normalize?: NormalizeOptions;
}

/**
 * A tape record as the tree reads it (ReplayCache's `{ request, value, key, recordedAt }`; proxy
 * records are turned into one by httpRecordExchange).
 */
export interface TreeRecord {
  request: unknown;
  value: unknown;
  key?: unknown;
  recordedAt?: unknown;
  /** Where the request was sent (proxy records): APIs that route by URL (Ollama, Gemini, Azure deployments) are read with it. */
  endpoint?: { method?: string; url: string };
  /** The host the request was sent to (`scheme://host[:port]`, proxy records that name one). */
  origin?: unknown;
  [extra: string]: unknown;
}

/** A record the tree could not place, and why. */
export interface TreeWarning {
  /** Position of the record in the list given (the tape order). */
  index: number;
  /** Byte offset on the tape, when known. */
  offset: number | undefined;
  code: string;
  message: string;
}

const HEX64 = /^[0-9a-f]{64}$/;

// How many endpoint-keyed endpoints a tree keeps to explain a miss with: each is tried on a
// miss (one normalization each), and a tape has a handful of models and operations.
const MAX_ENDPOINTS = 16;

// Kept strings of their own. The hashes and record fields the tree keeps arrive as slices of
// larger strings (one hex string per digest list, msgpack's one string for all of a record's
// short ASCII texts), and each slice keeps its whole larger string alive as long as the tree
// keeps the slice: on the 100,000-record bench tape ~76 MB of the tree's ~296 MB heap. A copy
// through a scratch buffer is a string of its own; a string the copy would not give back (not
// Latin-1) stays as it is. Without Buffer (a browser's small trees), strings stay as given.
const scratch = typeof Buffer === 'function' ? (Buffer.allocUnsafe(256) as Buffer & { latin1Write(s: string, at: number): number; latin1Slice(from: number, to: number): string }) : undefined;
function own<T>(s: T): T {
  if (scratch === undefined || typeof s !== 'string' || s.length > 256) return s;
  const t = scratch.latin1Slice(0, scratch.latin1Write(s, 0));
  return (t === s ? t : s) as T;
}

class Node implements TreeNode {
  // Made with their first element (an array grown by push from empty reserves 16 slots, and most
  // nodes have one child or one answer: ~250 bytes a record of a large tape).
  children: Node[] = [];
  alternatives: Alt[] = [];
  // Children by prompt hash, made once a node has enough children for a scan to cost more.
  index: Map<string, Node> | undefined;

  constructor(
    readonly pathHash: string,
    readonly parent: Node | null,
    readonly promptHash: string,
    readonly depth: number,
    readonly message: unknown,
    readonly origin: 'request' | 'response',
  ) {}

  get parentHash(): string | null {
    return this.parent ? this.parent.pathHash : null;
  }

  get role(): string | undefined {
    const m = this.message as { role?: unknown } | undefined;
    return m !== null && typeof m === 'object' && typeof m.role === 'string' ? m.role : undefined;
  }

  child(promptHash: string): Node | undefined {
    if (this.index) return this.index.get(promptHash);
    for (const c of this.children) if (c.promptHash === promptHash) return c;
    return undefined;
  }

  addChild(n: Node): void {
    if (this.children.length === 0) this.children = [n];
    else this.children.push(n);
    if (this.index) this.index.set(n.promptHash, n);
    else if (this.children.length > 8) this.index = new Map(this.children.map((c) => [c.promptHash, c]));
  }
}

const NO_ORIGINS: readonly AnswerOrigin[] = Object.freeze([]);

class Alt implements Alternative {
  recordings = 1;
  uses = 0;
  lastUsedAt: number | undefined;
  // Where the recordings came from: one origin (or none) for all of them, as nearly every answer
  // has, in one field; a list only once a second host (or a recording naming none) gave it.
  private from: string | undefined | { origin: string | undefined; recordings: number }[];

  constructor(
    readonly index: number,
    readonly prompt: Node,
    readonly responseHash: string,
    readonly node: Node,
    readonly value: unknown,
    readonly key: string | undefined,
    readonly model: string | undefined,
    readonly recordedAt: string | undefined,
    readonly meta: Record<string, unknown> | undefined,
    origin: string | undefined,
  ) {
    this.from = origin;
  }

  get origins(): readonly AnswerOrigin[] {
    const f = this.from;
    if (f === undefined) return NO_ORIGINS;
    return typeof f === 'string' ? [{ origin: f, recordings: this.recordings }] : f;
  }

  /** Counts one more recording of this answer, from `origin`. */
  recordedFrom(origin: string | undefined): void {
    let f = this.from;
    if (f !== origin) {
      // A second host: the recordings so far were all the first one's (or named none).
      if (!Array.isArray(f)) f = this.from = [{ origin: f, recordings: this.recordings }];
      const same = f.find((e) => e.origin === origin);
      if (same) same.recordings++;
      else f.push({ origin, recordings: 1 });
    }
    this.recordings++;
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What findOrCreate keeps of a request body for addResponse(result, …): the body (its item references resolved) and how it was normalized. */
interface BodyLookup {
  request: Record<string, unknown>;
  normalize: NormalizeOptions;
  /** The request's own part, for a follow-up that names its answer by previous_response_id. */
  own?: OwnPart;
}

/**
 * A recorded Responses answer as a follow-up sent with `previous_response_id` continues it: the
 * request's own part and the answer's output items. The conversation the API kept is the chain of
 * these parts, each link's `prev` the one its request named (made before it, so never a cycle).
 */
interface ResponseLink extends OwnPart {
  readonly output: readonly unknown[];
}

/** What a Responses request adds to the conversation it continues. */
interface OwnPart {
  /** The answer the request named by previous_response_id, when the tree has it. */
  readonly prev: ResponseLink | undefined;
  /** A previous_response_id no recorded answer gave (of this request, or of the chain's first). */
  readonly unknown: string | undefined;
  readonly instructions: unknown;
  /** The request's input items as sent (a string input as its user message), item references resolved. */
  readonly input: readonly unknown[];
}

/** A request as the tree places it (see resolveRequest). */
interface Resolved {
  /** The request as the tree reads it; undefined: as sent. */
  request: Record<string, unknown> | undefined;
  /** A Responses request's own part (undefined for other shapes). */
  own: OwnPart | undefined;
}

/**
 * The message the tree puts where a conversation continues a response no recording gave
 * (`previous_response_id` naming an id that is on no record before it): the request's input
 * hangs under it, so follow-ups of the same unknown answer stay together and apart from others.
 */
export interface PreviousResponseMarker {
  readonly type: 'previous_response';
  readonly id: string;
}

/** A conversation's hashes, and the request body they came from when the input was one. */
interface Hashed {
  h: ConversationHashes;
  body?: BodyLookup;
}

/**
 * A Responses input item that stands for a stored item: `{ type: 'item_reference', id }`, or
 * `{ id }` alone (the API takes the type as optional).
 */
function referenceId(item: unknown): string | undefined {
  if (!isObj(item) || typeof item.id !== 'string') return undefined;
  if (item.type === 'item_reference') return item.id;
  const bare = (item.type === undefined || item.type === null) && item.role === undefined && item.content === undefined;
  return bare ? item.id : undefined;
}

// Request shapes of embeddings calls, whatever the provider (the route decides Gemini's and Ollama's).
const EMBEDDINGS = new Set(['openai-embeddings', 'azure-embeddings', 'gemini-embeddings', 'ollama-embed', 'ollama-embeddings']);

/**
 * What a keyed LLM call with no conversation answer is ('an embeddings call', 'a token count'),
 * or undefined for a call the tree places. Token counts (Gemini `countTokens`, Anthropic
 * `/v1/messages/count_tokens`) have a conversation's body, so only the route they were sent to
 * tells them apart: a ReplayCache record of one (no route) is read as the conversation it is.
 */
function notConversation(request: unknown, endpoint: TreeRecord['endpoint']): string | undefined {
  if (!isObj(request)) return undefined;
  const sentTo = isObj(endpoint) && typeof endpoint.url === 'string' ? endpoint : undefined;
  if (sentTo !== undefined && /count_?tokens$/i.test(routeOf(sentTo)?.route.operation ?? '')) return 'a token count';
  if ('messages' in request) return undefined;
  let shape: string;
  try {
    shape = detectProvider(request, sentTo);
  } catch {
    // No known shape: record() says why, in the warnings.
    return undefined;
  }
  return EMBEDDINGS.has(shape) ? 'an embeddings call' : undefined;
}

function isHashes(v: unknown): v is ConversationHashes {
  return isObj(v) && Array.isArray(v.messageHashes) && Array.isArray(v.pathHashes);
}

function chain(parent: string, m: string): string {
  return sha256Hex(`${parent}:${m}`);
}

/**
 * A divergence whose `siblings` are computed when read: copying a node's children on every miss
 * would cost O(children) (a system prompt with 100,000 first questions). Children are only ever
 * appended, so the first `before` of them are exactly the siblings at the time of the call.
 */
function divergenceAt(index: number, parent: Node | null, roots: readonly Node[]): Divergence {
  const list = parent ? parent.children : roots;
  const before = list.length;
  let siblings: readonly TreeNode[] | undefined;
  return {
    index,
    parent,
    get siblings() {
      return (siblings ??= list.slice(0, before));
    },
  };
}

function treeError(message: string, hint: string, extra: Record<string, unknown> = {}): TapedeckError {
  return new TapedeckError('E_TREE', message, { hint, ...extra });
}

function checkHash(h: unknown, what: string): string {
  if (typeof h !== 'string' || !HEX64.test(h)) {
    throw treeError(`${what} must be 64 lowercase hex characters; got ${typeof h === 'string' ? JSON.stringify(h.slice(0, 80)) : typeof h}.`, 'Pass hashes as pathHashes() or requestKeys() return them.', { path: what });
  }
  return h;
}

/**
 * A tree of recorded conversations with O(1) indexes by path hash, by prompt hash and by
 * (parent, prompt hash). Pure (no I/O): build it from records you have, or load one from a tape
 * with `loadTree` from `llm-tapedeck/store`.
 *
 * @example
 * const tree = new ConversationTree()
 * const sys = { role: 'system', content: 'Be brief.' }, q = { role: 'user', content: 'Capital of France?' }
 * tree.findOrCreate([sys, q], { response: { messages: [{ role: 'assistant', content: 'Paris' }] } })
 * tree.findOrCreate([sys, q]).hit                               // true: served, marked as reused
 * tree.findOrCreate([sys, q, { role: 'assistant', content: 'Lyon' }]).divergence?.index // 2: a branch
 */
export class ConversationTree {
  private readonly byPath = new Map<string, Node>();
  private readonly byPrompt = new Map<string, Node | Node[]>();
  private readonly rootList: Node[] = [];
  private readonly rootIndex = new Map<string, Node>();
  private readonly now: () => number;
  private readonly keepMessages: boolean;
  private readonly keepValues: boolean;
  private counts = { hits: 0, misses: 0, recorded: 0, branchPoints: 0, alternativeSets: 0, exchanges: 0, maxLength: 0 };
  // The hosts answers were recorded from, each kept once: every answer from a host points at this
  // one string (a tape has a handful of hosts and up to millions of answers).
  private readonly originNames = new Map<string, string>();
  private readonly normalize: NormalizeOptions | undefined;
  // Request keys of findOrCreate misses at a node that no answer was recorded for yet: what
  // addResponse(node, …) records under when it is given a node alone (a miss's result carries
  // its key; a node does not). One key, or the set of them when requests of different keys
  // missed at the same node (then a node alone does not say which request the answer is for).
  private readonly pending = new Map<Node, string | Set<string>>();
  // Responses output items by id, from the recorded answers (the last answer giving an id wins):
  // a follow-up that sends an answer back as `{ type: 'item_reference', id }` (the API stored it)
  // walks through that answer's node with the item in its place. Only answers the API stored
  // (request `store` not false) can be referenced, so only those are kept.
  private readonly items = new Map<string, unknown>();
  // Recorded Responses answers by response id (the answer body's `id`; streamed, the
  // response.completed event's), for follow-ups that continue one by `previous_response_id`
  // instead of sending the conversation again (the OpenAI Agents SDK's previousResponseId, every
  // step of its tool loop). Only answers the API stored (request `store` not false) can be
  // continued, so only those are kept; the last answer giving an id wins.
  private readonly responses = new Map<string, ResponseLink>();
  // The request bodies of findOrCreate results, for addResponse(result, …). Weak: a result let
  // go of takes its body with it.
  private readonly bodies = new WeakMap<object, BodyLookup>();
  // Endpoints of recorded calls whose route decides how a body is keyed (the model or the shape:
  // Gemini, Bedrock, Ollama, Azure deployments), first seen first, at most MAX_ENDPOINTS: a body
  // looked up without its endpoint misses them, and findOrCreate says which one would hit.
  private readonly keyedEndpoints = new Map<string, Endpoint>();
  /** Records fromRecords could not place. */
  readonly warnings: TreeWarning[] = [];
  /** Records fromRecords left out because they are calls but not conversations (embeddings, token counts). */
  readonly skipped: TreeWarning[] = [];

  constructor(opts: TreeOptions = {}) {
    if (opts.now !== undefined && typeof opts.now !== 'function') {
      throw new TapedeckError('E_ARG', 'ConversationTree: `now` must be a function returning milliseconds.', { hint: 'e.g. { now: () => fakeClock.ms }' });
    }
    this.now = opts.now ?? Date.now;
    this.keepMessages = opts.keepMessages !== false;
    this.keepValues = opts.keepValues !== false;
    this.normalize = opts.normalize;
  }

  /** The tree's normalize options with a call's own members in their place. */
  private normalizeFor(given: NormalizeOptions | undefined): NormalizeOptions {
    if (given === undefined) return this.normalize ?? {};
    return this.normalize === undefined ? given : { ...this.normalize, ...given };
  }

  /**
   * Builds a tree from tape records: ReplayCache records (`{ request, value, key, recordedAt }`),
   * proxy / createFetch records with `match: 'llm'` (request body and 2xx answer; a streamed
   * answer is assembled first, see httpRecordExchange), bare or as the `{ offset, value }`
   * entries readTape returns. Each request is normalized with its answer (see
   * normalizeExchange), so provider bodies of every shape land in one tree. Records that are not
   * request/answer pairs (other proxy records, error answers included) are skipped silently,
   * calls that are not conversations (embeddings, token counts) and records of MCP exchanges and realtime sessions are listed in `tree.skipped`;
   * ones that fail to normalize or whose answer cannot be read are listed in `tree.warnings`.
   *
   * @example
   * const tree = ConversationTree.fromRecords((await readTape('chat.tape')).records)
   */
  static fromRecords(records: Iterable<unknown>, opts: TreeOptions = {}): ConversationTree {
    const tree = new ConversationTree(opts);
    let i = 0;
    for (const entry of records) tree.placeEntry(entry, i++);
    return tree;
  }

  /**
   * {@link fromRecords} of records that arrive one at a time (an async iterable, such as a tape
   * read a window at a time): each is placed as it comes and can be let go of, so memory
   * follows the tree, not the records.
   *
   * @example
   * async function* fromQueue() { for (const r of await fetchRecords()) yield r; }
   * const tree = await ConversationTree.fromRecordStream(fromQueue())
   */
  static async fromRecordStream(records: AsyncIterable<unknown> | Iterable<unknown>, opts: TreeOptions = {}): Promise<ConversationTree> {
    const tree = new ConversationTree(opts);
    let i = 0;
    for await (const entry of records) tree.placeEntry(entry, i++);
    return tree;
  }

  /** Places record number `index` (see fromRecords): skipped, listed in skipped or warnings, or recorded. */
  private placeEntry(entry: unknown, index: number): void {
    const wrapped = isObj(entry) && 'offset' in entry && 'value' in entry && !('request' in entry);
    const rec = wrapped ? entry.value : entry;
    const offset = wrapped && typeof entry.offset === 'number' ? entry.offset : undefined;
    const http = isHttpRecord(rec);
    if (!http && (!isObj(rec) || !('request' in rec) || !('value' in rec))) {
      // An agent's tool tape (MCP exchanges) or a voice session is no LLM conversation: counted
      // as not shown, so that such a tape does not read as an empty one. A realtime session is
      // one `session` record and its parts; the session is counted.
      const kind = isMcpRecord(rec)
        ? 'an MCP exchange'
        : isRealtimeRecord(rec) && rec.role === 'session'
          ? 'a realtime session'
          : // A byte-exact replay store's entry: an answer kept by trace token (docs/replay.md).
            isObj(rec) && rec.kind === REPLAY_RECORD_KIND
            ? 'a byte-exact replay entry'
            : undefined;
      if (kind !== undefined) this.skipped.push({ index, offset, code: 'E_TREE', message: `${kind}, not a conversation` });
      return;
    }
    try {
      const x = http ? httpRecordExchange(rec) : (rec as TreeRecord);
      if (x === undefined) return;
      // An embeddings call or a token count is an LLM call with no conversation answer: nothing
      // to place, nothing wrong.
      const call = notConversation(x.request, x.endpoint);
      if (call !== undefined) {
        this.skipped.push({ index, offset, code: 'E_TREE', message: `${call}, not a conversation` });
        return;
      }
      this.record(x, { ...(offset === undefined ? {} : { offset }), record: index });
    } catch (e) {
      if (!(e instanceof TapedeckError)) throw e;
      this.warnings.push({ index, offset, code: e.code, message: e.message });
    }
  }

  /**
   * Records one request/answer pair given as provider bodies (a ReplayCache record): the request
   * is normalized together with the answer so that the follow-up request walks through it. An
   * OpenAI body with several choices records each as an alternative. A Responses request that
   * sends an earlier answer back by `item_reference` is placed with the recorded item in its
   * place, so it walks through that answer (its key is still the one of the request as sent);
   * one sent with `previous_response_id` continues the recorded answer of that id: its input is
   * placed after the conversation that answer ended, as the API reads it (an id no recorded
   * answer gave: under a `{ type: 'previous_response', id }` marker after the system prompt).
   * `normalize` defaults to the tree's own. Returns the alternatives.
   *
   * @example
   * tree.record({ request: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
   *               value: { choices: [{ message: { role: 'assistant', content: 'hello' } }] } })
   */
  record(rec: TreeRecord, meta?: Record<string, unknown>, normalize?: NormalizeOptions): Alternative[] {
    const given = this.normalizeFor(normalize);
    // A proxy record knows where it was sent (httpRecordExchange): the route names the shape.
    const endpoint = isObj(rec.endpoint) && typeof rec.endpoint.url === 'string' && given.endpoint === undefined ? (rec.endpoint as { method?: string; url: string }) : undefined;
    const opts = endpoint ? { ...given, endpoint } : given;
    if (endpoint) this.keepEndpoint(endpoint);
    const { request: resolved, own } = this.resolveRequest(rec.request);
    const x = normalizeExchange(resolved ?? rec.request, rec.value, opts);
    if (x.messages.length === 0) {
      throw treeError('The recorded request has no messages, so it has no place in a conversation tree.', 'Only conversations are placed in the tree.');
    }
    // A streamed answer sent back one message per chunk (Gemini's chat) walks through the answer.
    const joined = joinSplitAnswers(x.messages, this.recordedAnswers) ?? x.messages;
    const messages = own?.unknown === undefined ? joined : this.markUnknown(joined, resolved ?? rec.request, own.unknown, opts);
    // The key of the request as it was sent (the hash spec's), never of the resolved view.
    const key = typeof rec.key === 'string' ? rec.key : hashValue(resolved ? normalizeRequest(rec.request, opts).view : x.view);
    const recordedAt = typeof rec.recordedAt === 'string' ? rec.recordedAt : undefined;
    const origin = typeof rec.origin === 'string' ? rec.origin : undefined;
    const out: Alternative[] = [];
    if (x.responses.length === 0) {
      // A request without an answer: its path is recorded, nothing is served or counted.
      this.place(chainHashes(messages), messages);
      return out;
    }
    for (const resp of x.responses) {
      // One core call hashes the request and the answer together: the answer's path hashes too,
      // which attach() would otherwise compute again, one SHA-256 a message.
      const all = chainHashes([...messages, ...resp]);
      const n = messages.length;
      const h = { messageHashes: all.messageHashes.slice(0, n), pathHashes: all.pathHashes.slice(0, n), messages, key };
      const response: ResponseInput = {
        messageHashes: all.messageHashes.slice(n),
        messages: resp,
        value: rec.value,
        key,
        model: x.model,
        ...(recordedAt === undefined ? {} : { recordedAt }),
        ...(origin === undefined ? {} : { origin }),
        ...(meta ? { meta } : {}),
      };
      // findOrCreate(h, { response }) as it goes with a response: placed, then answered.
      const { node } = this.place(h, messages);
      out.push(this.attach(node, response, key, all.pathHashes.slice(n)).alt);
    }
    if (isObj(rec.value) && Array.isArray(rec.value.output)) {
      this.learnItems(rec.request, rec.value.output);
      if (own !== undefined && x.provider === 'openai-responses') this.learnResponse(rec.request, own, rec.value);
    }
    return out;
  }

  /** Keeps a recorded call's endpoint when its route decides the key (see `keyedEndpoints`). */
  private keepEndpoint(endpoint: Endpoint): void {
    if (this.keyedEndpoints.size >= MAX_ENDPOINTS) return;
    const id = `${(endpoint.method ?? 'POST').toUpperCase()} ${endpoint.url}`;
    if (this.keyedEndpoints.has(id) || routeShapeOf(endpoint) === undefined) return;
    this.keyedEndpoints.set(id, { method: endpoint.method ?? 'POST', url: endpoint.url });
  }

  /**
   * Why a request body looked up without an endpoint missed in a tree of endpoint-keyed
   * recordings: the recorded endpoint under which the same body has an answer (the caller left
   * out what the SDK put in the URL), else a note that the endpoint decides these recordings'
   * keys, when it would change this body's. Undefined when no recorded endpoint matters to it.
   */
  private endpointHint(body: Record<string, unknown>, normalize: NormalizeOptions, alone: string | undefined): { note: string; endpoint?: Endpoint } | undefined {
    let differs: Endpoint | undefined;
    for (const endpoint of this.keyedEndpoints.values()) {
      let k: ReturnType<typeof requestKeys>;
      try {
        k = requestKeys(body, { ...normalize, endpoint });
      } catch {
        continue; // Not a body that endpoint takes (an OpenAI body and a Gemini route).
      }
      const last = k.pathHashes.length - 1;
      const node = last >= 0 ? this.byPath.get(k.pathHashes[last]!) : undefined;
      if (node !== undefined && node.depth === last && node.alternatives.some((a) => a.key === k.key)) {
        const where = `${endpoint.method ?? 'POST'} ${endpoint.url}`;
        return {
          endpoint,
          note: `This body has a recorded answer when keyed as sent to ${where}: the endpoint decides its model or shape, and the body alone does not name it. Look it up with { normalize: { endpoint: { method: ${JSON.stringify(endpoint.method ?? 'POST')}, url: ${JSON.stringify(endpoint.url)} } } } (r.endpoint).`,
        };
      }
      if (k.key !== alone) differs ??= endpoint;
    }
    if (differs === undefined) return undefined;
    return {
      note: `The tree holds recordings keyed by the endpoint they were sent to (e.g. ${differs.method ?? 'POST'} ${differs.url}), and this body is keyed differently without one. If it was sent to such an endpoint (Gemini, Bedrock, Ollama, an Azure deployment), look it up with { normalize: { endpoint: { method, url } } }.`,
    };
  }

  /** Keeps the output items of a Responses answer to `request` by id, for item references (see `items`). */
  private learnItems(request: unknown, output: readonly unknown[]): void {
    if (!isObj(request) || request.store === false || !('input' in request)) return;
    for (const item of output) if (isObj(item) && typeof item.id === 'string' && typeof item.type === 'string') this.items.set(own(item.id), item);
  }

  /**
   * A Responses request with each `item_reference` to a recorded output item replaced by that
   * item, as the API itself reads the reference; undefined when nothing is replaced (not a
   * Responses input, no references, or ids no recorded answer gave: those stay as they are).
   * Only where the request sits in the tree changes: docs/hash-spec.md keys the reference as
   * sent, so the request key is computed from the request as sent.
   */
  private resolveReferences(request: unknown): Record<string, unknown> | undefined {
    if (this.items.size === 0 || !isObj(request) || !Array.isArray(request.input)) return undefined;
    const input = request.input;
    let out: unknown[] | undefined;
    for (let i = 0; i < input.length; i++) {
      const id = referenceId(input[i]);
      const item = id === undefined ? undefined : this.items.get(id);
      if (item === undefined) continue;
      out ??= input.slice();
      out[i] = item;
    }
    return out === undefined ? undefined : { ...request, input: out };
  }

  /**
   * A request as the tree places it: item references resolved (resolveReferences) and, for a
   * Responses request sent with `previous_response_id` naming a recorded answer, the conversation
   * the API kept for that answer put before its input, as the API itself reads it. The earlier
   * requests' instructions are not carried over by the API, but a conversation's path starts
   * with its first request's: new instructions (present and different from the previous
   * request's) are placed as a system message where they took over, before the new input. An
   * id no recorded answer gave leaves the request as sent, and `own.unknown` names it.
   */
  private resolveRequest(request: unknown): Resolved {
    if (!isObj(request)) return { request: undefined, own: undefined };
    const refs = this.resolveReferences(request);
    const sent = refs ?? request;
    if (!('input' in request) && !('previous_response_id' in request) && !('instructions' in request)) return { request: refs, own: undefined };
    const input = sent.input;
    const items: readonly unknown[] = typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input : [];
    const prevId = request.previous_response_id;
    const named = typeof prevId === 'string' && prevId !== '' ? prevId : undefined;
    const prev = named === undefined ? undefined : this.responses.get(named);
    if (prev === undefined) return { request: refs, own: { prev: undefined, unknown: named, instructions: sent.instructions, input: items } };
    const chain: ResponseLink[] = [];
    for (let l: ResponseLink | undefined = prev; l !== undefined; l = l.prev) chain.push(l);
    chain.reverse();
    const conversation: unknown[] = [];
    let instructions: unknown = chain[0]!.instructions;
    const takeOver = (next: unknown): void => {
      if (next === undefined || next === null) return;
      if (instructions !== undefined && instructions !== null && hashValue(next) === hashValue(instructions)) return;
      conversation.push({ role: 'system', content: next });
      instructions = next;
    };
    for (const [i, link] of chain.entries()) {
      if (i > 0) takeOver(link.instructions);
      for (const item of link.input) conversation.push(item);
      for (const item of link.output) conversation.push(item);
    }
    takeOver(sent.instructions);
    for (const item of items) conversation.push(item);
    const { previous_response_id: _named, instructions: _own, ...rest } = sent;
    const first = chain[0]!.instructions;
    const out: Record<string, unknown> = { ...rest, input: conversation };
    if (first !== undefined && first !== null) out.instructions = first;
    return { request: out, own: { prev, unknown: chain[0]!.unknown, instructions: sent.instructions, input: items } };
  }

  /** Keeps a Responses answer for follow-ups that name it by previous_response_id (see `responses`). */
  private learnResponse(request: unknown, part: OwnPart, value: unknown): void {
    if (!isObj(request) || request.store === false || !isObj(value) || typeof value.id !== 'string' || !Array.isArray(value.output)) return;
    this.responses.set(own(value.id), { ...part, output: value.output });
  }

  /**
   * The normalized messages of a request continuing a response no recording gave, with the
   * marker of that response after the system prompt: the conversation the API kept sits there.
   */
  private markUnknown(messages: readonly unknown[], request: unknown, id: string, normalize: NormalizeOptions): unknown[] {
    // How many of the messages the shape's system prompt made: those of the request without input.
    const head = isObj(request) ? normalizeRequest({ ...request, input: [] }, normalize).messages.length : 0;
    const marker: PreviousResponseMarker = { type: 'previous_response', id };
    return [...messages.slice(0, head), marker, ...messages.slice(head)];
  }

  /** Hashes and messages of an input, by its kind. */
  private hashesOf(input: TreeInput, opts: FindOptions): ConversationHashes {
    return this.lookupOf(input, opts).h;
  }

  /** hashesOf, and for a request body the body and options its answer is normalized with. */
  private lookupOf(input: TreeInput, opts: FindOptions): Hashed {
    // Bytes are objects too: only a plain object that is not hashes is a request body.
    if (isObj(input) && !isBytes(input) && !isHashes(input)) {
      const normalize = this.normalizeFor(opts.normalize);
      const { request: resolved, own } = this.resolveRequest(input);
      const body: BodyLookup = { request: resolved ?? input, normalize, ...(own === undefined ? {} : { own }) };
      // Walked with the referenced items and the conversation continued in place; keyed as sent
      // (the key the recording has).
      const keys = resolved === undefined ? requestKeys(input, normalize) : { ...requestKeys(resolved, normalize), key: requestKey(input, normalize).key };
      let h = this.walked(keys);
      if (own?.unknown !== undefined && h.messages !== undefined) {
        const messages = this.markUnknown(h.messages, body.request, own.unknown, normalize);
        h = { ...h, ...chainHashes(messages), messages };
      }
      return { h, body };
    }
    return { h: this.listHashes(input, opts) };
  }

  /**
   * A request body's hashes as the tree walks them: a streamed answer sent back one message per
   * chunk joined into the recorded answer (see joinSplitAnswers); the key stays the body's.
   */
  private walked(h: ConversationHashes & { messages: readonly unknown[] }): ConversationHashes {
    const joined = joinSplitAnswers(h.messages, this.recordedAnswers);
    if (joined === undefined) return h;
    const c = chainHashes(joined);
    return { ...h, messageHashes: c.messageHashes, pathHashes: c.pathHashes, messages: joined };
  }

  /** The tree's recorded answers as joinSplitAnswers asks about them. */
  private readonly recordedAnswers: RecordedAnswers = {
    hasMessage: (digest) => this.byPrompt.has(digest),
    answerAt: (pathHash, digest) => {
      const node = this.byPath.get(pathHash);
      const child = node?.child(digest);
      if (node === undefined || child === undefined || !node.alternatives.some((a) => a.node === child)) return undefined;
      return child.message ?? null;
    },
  };

  /** Hashes of a message list, of its JSON text or bytes, or precomputed. */
  private listHashes(input: TreeInput, opts: FindOptions): ConversationHashes {
    if (Array.isArray(input)) {
      const h = chainHashes(input as unknown[]);
      return { messageHashes: h.messageHashes, pathHashes: h.pathHashes, messages: input as unknown[] };
    }
    if (typeof input === 'string' || isBytes(input)) {
      const h = pathHashes(input, opts.member === undefined ? undefined : { member: opts.member });
      return opts.messages ? { messageHashes: h.messageHashes, pathHashes: h.pathHashes, messages: opts.messages } : h;
    }
    if (isHashes(input)) {
      if (input.messageHashes.length !== input.pathHashes.length) {
        throw treeError(
          `messageHashes has ${input.messageHashes.length} entries but pathHashes has ${input.pathHashes.length}.`,
          'Pass both lists from the same pathHashes() or requestKeys() call.',
        );
      }
      return input;
    }
    throw new TapedeckError('E_ARG', `findOrCreate expects messages, JSON bytes, hashes or a request body; got ${input === null ? 'null' : typeof input}.`, {
      hint: 'e.g. tree.findOrCreate([{ role: "user", content: "hi" }]) or tree.findOrCreate(requestBody).',
    });
  }

  /** Index of the last path hash already in the tree, or -1. */
  private longestPrefix(p: readonly string[]): number {
    const n = p.length;
    const has = (i: number): boolean => {
      const node = this.byPath.get(p[i]!);
      return node !== undefined && node.depth === i;
    };
    // The two cases that matter most: a known conversation, and one that adds a message.
    if (has(n - 1)) return n - 1;
    if (n === 1) return -1;
    if (has(n - 2)) return n - 2;
    // Invariant: prefix up to lo is in the tree (lo = -1: none), hi is not.
    let lo = -1;
    let hi = n - 2;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (has(mid)) lo = mid;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Walks the longest recorded prefix of a conversation, says where the conversation leaves the
   * tree, and adds the rest there as a branch. Without `response`, a recorded answer at the end
   * is a hit: it is served, and marked as reused with its own timestamp; otherwise a miss (the
   * path is still added, so `addResponse(result, ...)` can record the live answer under the
   * request's key, `result.key`). With `response`, the answer is recorded under that key: a new
   * alternative, or the matching recorded one. A request body's answer messages are normalized
   * together with the request, as the follow-up request will carry them.
   *
   * @example
   * const r = tree.findOrCreate(requestBody)                   // normalized like the matcher
   * if (r.hit) return r.alternative!.value
   * tree.addResponse(r, { messages: [answer.choices[0].message], value: answer }) // under r.key
   */
  findOrCreate(input: TreeInput, opts: FindOptions = {}): FindResult {
    const { h, body } = this.lookupOf(input, opts);
    if (h.pathHashes.length === 0) {
      throw treeError('findOrCreate got an empty conversation.', 'A conversation has at least one message.');
    }
    const { last, node: end, divergence, created } = this.place(h, h.messages ?? opts.messages);
    const key = opts.key ?? h.key;
    let result: FindResult;
    if (opts.response !== undefined) {
      const { alt, fresh } = this.attach(end, this.answerOf(opts.response, body), key);
      result = { hit: false, node: end, matched: last + 1, divergence, created, alternative: alt, alternatives: end.alternatives, servedAt: undefined, recorded: fresh ? 'new' : 'existing', key };
    } else {
      const alt = this.pick(end, key);
      if (alt === undefined) {
        this.counts.misses++;
        // Until an answer is recorded here, a node alone stands for this request (addResponse).
        if (key !== undefined) this.addPending(end, key);
        result = { hit: false, node: end, matched: last + 1, divergence, created, alternative: undefined, alternatives: end.alternatives, servedAt: undefined, recorded: undefined, key };
        // A body of an API that names the model or shape in the URL misses without its endpoint:
        // say so, and which recorded endpoint would hit, rather than miss silently.
        if (body !== undefined && this.keyedEndpoints.size > 0 && body.normalize.endpoint == null && opts.key === undefined) {
          const hint = this.endpointHint(input as Record<string, unknown>, body.normalize, h.key);
          if (hint !== undefined) Object.assign(result, hint);
        }
        // The conversation is recorded to its end, answered for other requests only: say so.
        if (result.note === undefined && end.alternatives.length > 0) result.note = otherKeysNote(end.alternatives, (h as { view?: { model?: unknown } }).view?.model);
      } else {
        const servedAt = this.now();
        alt.uses++;
        alt.lastUsedAt = servedAt;
        this.counts.hits++;
        result = { hit: true, node: end, matched: last + 1, divergence, created, alternative: alt, alternatives: end.alternatives, servedAt, recorded: undefined, key };
      }
    }
    if (body !== undefined) this.bodies.set(result, body);
    return result;
  }

  private addPending(node: Node, key: string): void {
    const p = this.pending.get(node);
    if (p === undefined) this.pending.set(node, key);
    else if (typeof p === 'string') {
      if (p !== key) this.pending.set(node, new Set([p, key]));
    } else p.add(key);
  }

  /** An answer was recorded under `key` at `node`: that request no longer waits there. */
  private settlePending(node: Node, key: string): void {
    const p = this.pending.get(node);
    if (p === undefined) return;
    if (typeof p === 'string') {
      if (p === key) this.pending.delete(node);
      return;
    }
    p.delete(key);
    if (p.size === 1) this.pending.set(node, p.values().next().value!);
  }

  /** Finds the longest recorded prefix and adds the rest of the conversation below it. */
  private place(h: ConversationHashes, given: readonly unknown[] | undefined): { last: number; node: Node; divergence: Divergence | null; created: number } {
    const p = h.pathHashes;
    const m = h.messageHashes;
    const n = p.length;
    const last = this.longestPrefix(p);
    const messages = this.keepMessages ? given : undefined;
    let node: Node | null = last >= 0 ? this.byPath.get(p[last]!)! : null;
    let divergence: Divergence | null = null;
    let created = 0;
    if (last < n - 1) {
      const at = last + 1;
      divergence = divergenceAt(at, node, this.rootList);
      for (let i = at; i < n; i++) {
        node = this.add(node, checkHash(m[i], `messageHashes[${i}]`), checkHash(p[i], `pathHashes[${i}]`), i, messages?.[i], 'request');
        created++;
      }
    }
    return { last, node: node!, divergence, created };
  }

  /**
   * Read-only lookup: the node of the longest recorded prefix and where the conversation leaves
   * the tree. Changes nothing, counts nothing. A request body is normalized as findOrCreate does
   * it, so give the body itself: its raw `messages` are not the tree's (content becomes blocks).
   *
   * @example
   * const { node, matched } = tree.find(requestBody)  // matched === its message count: all known
   */
  find(input: TreeInput, opts: FindOptions = {}): { node: TreeNode | null; matched: number; divergence: Divergence | null; alternatives: readonly Alternative[] } {
    const h = this.hashesOf(input, opts);
    const n = h.pathHashes.length;
    if (n === 0) throw treeError('find got an empty conversation.', 'A conversation has at least one message.');
    const last = this.longestPrefix(h.pathHashes);
    const node = last >= 0 ? this.byPath.get(h.pathHashes[last]!)! : null;
    const divergence = last < n - 1 ? divergenceAt(last + 1, node, this.rootList) : null;
    return { node, matched: last + 1, divergence, alternatives: last === n - 1 && node ? node.alternatives : [] };
  }

  /** The first alternative recorded for `key` (any, when no key is known or recorded). */
  private pick(node: Node, key: string | undefined): Alt | undefined {
    const alts = node.alternatives;
    if (alts.length === 0) return undefined;
    if (key === undefined) return alts[0];
    let keyless: Alt | undefined;
    for (const a of alts) {
      if (a.key === key) return a;
      if (a.key === undefined) keyless ??= a;
    }
    // An answer recorded under another key (another model, other options) would be a wrong
    // replay; one recorded without any key was not bound to a request shape.
    return keyless;
  }

  /**
   * Records an answer to the conversation a findOrCreate() of this tree reached. The same answer
   * under the same request key counts as one more recording of it; a different one becomes the
   * next alternative.
   *
   * Give the findOrCreate result: the answer is recorded under the request's key (`result.key`),
   * so it is never served to a request of another model, tools or options, and for a request
   * body its messages (as the API returned them) are normalized together with the request, as
   * the follow-up request will carry them. Given the result's node alone, the messages are hashed
   * as given and the key is the one of the request that missed at that node; when requests of
   * different keys missed there and wait for answers, which one this answer is for is unknown:
   * `E_TREE` (pass the result, or `response.key`). An explicit `response.key` always wins.
   *
   * @example
   * const r = tree.findOrCreate(requestBody)
   * if (!r.hit) tree.addResponse(r, { messages: [answer.choices[0].message], value: answer })
   */
  addResponse(at: TreeNode | FindResult, response: ResponseInput): Alternative {
    const given = at instanceof Node ? undefined : isObj(at) && at.node instanceof Node && typeof at.hit === 'boolean' ? (at as unknown as FindResult) : undefined;
    const node = given ? (given.node as Node) : at;
    if (!(node instanceof Node) || this.byPath.get(node.pathHash) !== node) {
      throw new TapedeckError('E_ARG', 'addResponse: expected a node or a findOrCreate() result of this tree.', { hint: 'Pass what a findOrCreate() of this tree returned: tree.addResponse(r, { messages, value }).' });
    }
    const explicit = isObj(response) && typeof response.key === 'string';
    if (given !== undefined || explicit) return this.attach(node, this.answerOf(response, given && this.bodies.get(given)), given?.key).alt;
    return this.attach(node, response, this.pendingKey(node)).alt;
  }

  /** The key of the request waiting at `node` for an answer (see `pending`). */
  private pendingKey(node: Node): string | undefined {
    const p = this.pending.get(node);
    if (p === undefined || typeof p === 'string') return p;
    throw treeError(
      `addResponse: ${p.size} requests with different request keys (other models, tools or options) missed at this node, so the node alone does not say which of them this answer is for.`,
      'Pass the findOrCreate() result instead of its node, tree.addResponse(r, { messages, value }), or give response.key.',
    );
  }

  /**
   * A request body's answer as the tree records it: its messages (as the API returned them)
   * normalized together with the request, so the follow-up request walks through them. Answers
   * given as hashes, and answers to other inputs, are taken as given.
   */
  private answerOf(r: ResponseInput, body: BodyLookup | undefined): ResponseInput {
    if (body === undefined || !isObj(r) || r.messageHashes !== undefined || !Array.isArray(r.messages) || r.messages.length === 0) return r;
    const { request, normalize } = body;
    const n = normalizeRequest(request, normalize);
    const messages = continuedMessages(request, n.provider, n.messages.length, r.messages, normalize);
    // A Responses answer's output items, for follow-ups that send them back by reference.
    this.learnItems(request, isObj(r.value) && Array.isArray(r.value.output) ? r.value.output : r.messages);
    if (body.own !== undefined && n.provider === 'openai-responses') this.learnResponse(request, body.own, r.value);
    // What a hit serves stays what was given.
    return { ...r, messages, value: 'value' in r ? r.value : r.messages };
  }

  /**
   * `paths`: the path hashes of the answer's messages below `prompt`, when the caller has them
   * from hashing the request and answer together (else each is chained here).
   */
  private attach(prompt: Node, r: ResponseInput, key: string | undefined, paths?: readonly string[]): { alt: Alt; fresh: boolean } {
    if (r === null || typeof r !== 'object' || Array.isArray(r)) throw new TapedeckError('E_ARG', 'A response must be an object { messages | messageHashes, value? }.', { hint: '{ messages: [{ role: "assistant", content: "…" }], value }' });
    let hashes: readonly string[];
    if (r.messageHashes !== undefined) {
      if (!Array.isArray(r.messageHashes)) throw treeError('response.messageHashes must be an array.', 'Pass hashMany(messages) or give `messages`.');
      hashes = r.messageHashes.map((x, i) => checkHash(x, `response.messageHashes[${i}]`));
    } else if (Array.isArray(r.messages)) {
      hashes = r.messages.length > 0 ? hashMany(r.messages as unknown[]) : [];
    } else {
      throw treeError('A response needs `messages` (or `messageHashes`).', 'e.g. { messages: [{ role: "assistant", content: "Paris" }] }');
    }
    if (hashes.length === 0) throw treeError('A response needs at least one message.', 'The answer is the assistant message the next request will repeat.');
    if (r.messages !== undefined && r.messages.length !== hashes.length) {
      throw treeError(`response has ${r.messages.length} messages but ${hashes.length} hashes.`, 'Give hashes of exactly those messages.');
    }
    let node = prompt;
    let responseHash = hashes[0]!;
    for (let i = 0; i < hashes.length; i++) {
      if (i > 0) responseHash = chain(responseHash, hashes[i]!);
      const path = paths?.[i] ?? chain(node.pathHash, hashes[i]!);
      node = node.child(hashes[i]!) ?? this.add(node, hashes[i]!, path, node.depth + 1, this.keepMessages ? r.messages?.[i] : undefined, 'response');
    }
    key = r.key ?? key;
    if (key !== undefined && this.pending.size > 0) this.settlePending(prompt, key);
    const origin = typeof r.origin === 'string' ? this.originName(r.origin) : undefined;
    this.counts.recorded++;
    for (const a of prompt.alternatives) {
      // The same answer from another host is the same alternative (the origin is not part of
      // the request key), counted under that host.
      if (a.responseHash === responseHash && a.key === key) {
        a.recordedFrom(origin);
        return { alt: a, fresh: false };
      }
    }
    const alt = new Alt(
      prompt.alternatives.length,
      prompt,
      // One message: its digest, which the answer's node already keeps as its own string.
      hashes.length === 1 ? node.promptHash : own(responseHash),
      node,
      !this.keepValues ? undefined : 'value' in r ? r.value : r.messages,
      own(key),
      own(r.model),
      own(r.recordedAt),
      r.meta,
      origin,
    );
    if (prompt.alternatives.length === 0) prompt.alternatives = [alt];
    else prompt.alternatives.push(alt);
    if (prompt.alternatives.length === 2) this.counts.alternativeSets++;
    this.counts.exchanges++;
    return { alt, fresh: true };
  }

  /** The tree's one copy of an origin's string (see originNames). */
  private originName(origin: string): string {
    let name = this.originNames.get(origin);
    if (name === undefined) {
      name = own(origin);
      this.originNames.set(name, name);
    }
    return name;
  }

  private add(parent: Node | null, promptHash: string, pathHash: string, depth: number, message: unknown, origin: 'request' | 'response'): Node {
    // The indexes' keys too: the node's own strings.
    promptHash = own(promptHash);
    pathHash = own(pathHash);
    const node = new Node(pathHash, parent, promptHash, depth, message, origin);
    if (parent) {
      parent.addChild(node);
      if (parent.children.length === 2) this.counts.branchPoints++;
    } else {
      this.rootList.push(node);
      this.rootIndex.set(promptHash, node);
    }
    this.byPath.set(pathHash, node);
    const same = this.byPrompt.get(promptHash);
    if (same === undefined) this.byPrompt.set(promptHash, node);
    else if (Array.isArray(same)) same.push(node);
    else this.byPrompt.set(promptHash, [same, node]);
    if (depth + 1 > this.counts.maxLength) this.counts.maxLength = depth + 1;
    return node;
  }

  /**
   * The node with this path hash (O(1)). A tree of request bodies (loadTree, fromRecords) is
   * addressed by the normalized messages: requestKeys(body) gives their hashes.
   *
   * @example
   * tree.byPathHash(requestKeys(requestBody).pathHashes.at(-1)!)?.alternatives // the recorded answers
   */
  byPathHash(pathHash: string): TreeNode | undefined {
    return this.byPath.get(pathHash);
  }

  /**
   * Every node whose message has this digest, wherever it sits (O(1) per node returned):
   * "all the places this prompt was asked". In a tree of request bodies the digest is that of
   * the normalized message (requestKeys(body).messageHashes), not hashValue of the message as
   * written; hashValue(message) is it for message lists given as they are.
   *
   * @example
   * tree.byPromptHash(requestKeys(requestBody).messageHashes[0]!).length // 1: where it was asked
   */
  byPromptHash(promptHash: string): readonly TreeNode[] {
    const v = this.byPrompt.get(promptHash);
    return v === undefined ? [] : Array.isArray(v) ? v.slice() : [v];
  }

  /**
   * The child of `parentHash` (null: a first message) whose message has digest `promptHash`: the
   * (parent, prompt_hash) index, O(1). Digests as for {@link byPromptHash}.
   *
   * @example
   * tree.child(null, requestKeys(requestBody).messageHashes[0]!) // the conversation's root, if recorded
   */
  child(parentHash: string | null, promptHash: string): TreeNode | undefined {
    if (parentHash === null) return this.rootIndex.get(promptHash);
    return this.byPath.get(parentHash)?.child(promptHash);
  }

  /**
   * First messages of the recorded conversations, in the order they were added.
   *
   * @example
   * tree.roots.map((r) => r.children.length) // how many ways each conversation went on
   */
  get roots(): readonly TreeNode[] {
    return this.rootList;
  }

  /**
   * The hosts the tree's answers were recorded from (`scheme://host[:port]`, as the records store
   * them), in first-recorded order; empty for a tree of records that name none.
   *
   * @example
   * tree.origins // ['https://api.openai.com', 'https://gw.example.com']: a tape of two hosts
   */
  get origins(): readonly string[] {
    return [...this.originNames.keys()];
  }

  /**
   * Number of nodes (messages) in the tree.
   *
   * @example
   * tree.size
   */
  get size(): number {
    return this.byPath.size;
  }

  /**
   * Cache and shape statistics: hits, misses, branch points, alternatives and sizes.
   *
   * @example
   * const { hits, misses, branchPoints } = tree.stats()
   */
  stats(): TreeStats {
    const c = this.counts;
    return {
      hits: c.hits,
      misses: c.misses,
      recorded: c.recorded,
      branchPoints: c.branchPoints,
      alternativeSets: c.alternativeSets,
      nodes: this.byPath.size,
      roots: this.rootList.length,
      exchanges: c.exchanges,
      maxLength: c.maxLength,
    };
  }

  /**
   * The recorded exchanges (prompt/response rows), in tree order: for each recorded answer, the exchange's path_hash (the
   * request's last message), its parent (the path before that message), prompt_hash and
   * response_hash, and the alternative itself.
   *
   * @example
   * for (const x of tree.exchanges()) console.log(x.pathHash, x.promptHash, x.responseHash)
   */
  *exchanges(): Generator<{ pathHash: string; parentHash: string | null; promptHash: string; responseHash: string; alternative: Alternative }> {
    for (const node of this.nodes()) {
      for (const alt of node.alternatives) {
        yield { pathHash: node.pathHash, parentHash: node.parentHash, promptHash: node.promptHash, responseHash: alt.responseHash, alternative: alt };
      }
    }
  }

  /**
   * Every node, depth first, children in insertion order (iterative: 10,000-message
   * conversations would overflow a recursive walk).
   *
   * @example
   * for (const n of tree.nodes()) if (n.children.length > 1) console.log('branch at', n.depth)
   */
  *nodes(): Generator<TreeNode> {
    const stack: Node[] = [...this.rootList].reverse();
    while (stack.length > 0) {
      const n = stack.pop()!;
      yield n;
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
    }
  }
}
