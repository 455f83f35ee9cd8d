// The chat family's walk (OpenAI chat, Responses and embeddings, Anthropic, the generic
// shapes; src/providers/normalize.ts is the reference): detection, messages, parts, tool calls
// and tools written from the body's bytes, the top level through the reference itself.

import {
  ANTHROPIC_ARGS,
  ANTHROPIC_BLOCKS,
  MESSAGE_NOISE,
  normalizeRequest,
  OPENAI_ARGS,
  OPENAI_PARTS,
  OPENAI_ROLES,
  splitToolResults,
} from '../../providers/normalize.ts';
import { allFinite } from '../../core/value.ts';
import { ollamaAsOpenAI } from '../../providers/ollama.ts';
import type { BuiltinProvider, NormalizeOptions } from '../../providers/types.ts';
import type { RequestDigests } from '../matcher.ts';
import type { OllamaMode } from './ollama.ts';
import { COMMA, decoder, L, lit, quotedId } from './out.ts';
import { type FoundTools, keepTools, toolsTail, usedTools } from './tools-cache.ts';
import { finish, keptTop, type Normalized, sortedTools } from './view.ts';
import { decline, F_KEY_ESCAPED, isResult, type Members, NO_MEMBERS, NO_SKIP, NONE, PART, RESULT, set, T_ARRAY, T_NULL, T_NUMBER, T_OBJECT, T_STRING, Walk } from './walk.ts';

const JSON_SCHEMA = lit('jsonSchema');
const isJsonWs = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const TEXT_TYPES = new Set(['text', 'input_text', 'output_text']);
// Parts the reference normalizer does (one part at a time): attachments, whose rules decode and
// hash data, and the Vercel AI SDK's tool-call / tool-result parts.
const REFERENCE_PARTS = new Set(['input_image', 'image', 'input_audio', 'audio', 'file', 'input_file', 'document', 'tool-call', 'tool-result']);
const OTHER_ID_KEYS = ['tool_use_id', 'tool_call_id', 'call_id'] as const;
const CALL_TYPE = /(tool_use|_call)$/;
const URL_LIKE = /^(data:|[a-z][a-z0-9+.-]*:\/\/)/i;

const SKIP_TYPE = new Set(['type']);
const SKIP_TOOL_USE = new Set(['type', 'input']);
const SKIP_RESULT = new Set(['type', 'tool_use_id', 'is_error']);
const SKIP_THINKING = new Set(['type', 'signature']);
const SKIP_CALL = new Set(['type', 'index']);
const SKIP_IMAGE_URL = new Set(['url']);
const SKIP_IMAGE_PART = new Set(['type', 'image_url']);
const SKIP_TOOL = new Set(['type', 'function']);
const SKIP_TOOL_DEF = new Set(['type', 'input_schema', 'inputSchema']);
let skipMessage: Set<string> | undefined;

/** The message members the reference drops (their content is written as parts, or is noise). */
export function messageSkip(): Set<string> {
  skipMessage ??= new Set(['type', 'tool_calls', 'function_call', 'tool_call_id', ...MESSAGE_NOISE]);
  return skipMessage;
}

/** The walk with the chat family's rules for messages, parts, tool calls and tools. */
export class ChatWalk extends Walk {
  /** An Ollama /api/chat body: the chat rules with Ollama's for calls and tool messages (ollama.ts). */
  ollama: OllamaMode | undefined;

  /** One part through the reference (see part()'s return value). */
  private referencePart(p: number): number {
    const parts = this.n.content(this.value(p), '$');
    if (parts.length === 0) return NONE;
    this.emit(parts[0]);
    return isResult(parts[0]) ? RESULT : PART;
  }

  // --- content

  /**
   * Writes the parts of `v` (comma-separated, and after a comma when `after`: parts were
   * written before them); returns how many. With `ranges`, records each part as
   * [start, end, kind] (kind RESULT for tool results, which split user messages).
   */
  content(v: number | undefined, ranges?: number[], after = false): number {
    if (v === undefined || this.kind(v) === T_NULL) return 0;
    let n = 0;
    const parts = this.kind(v) === T_ARRAY ? this.children(v) : [v];
    for (const p of parts) {
      const mark = this.out.at;
      if (n > 0 || after) this.out.byte(COMMA);
      const start = this.out.at;
      const kind = this.part(p);
      if (kind === NONE) {
        this.out.at = mark;
        continue;
      }
      n++;
      ranges?.push(start, this.out.at, kind);
    }
    return n;
  }

  /** One part: NONE if it is no part (no text), PART, or RESULT for a tool result. */
  private part(p: number): number {
    const k = this.kind(p);
    if (k === T_STRING) {
      if (this.end(p) - this.start(p) === 2) return NONE;
      this.out.bytes(L.textOpen);
      this.raw(p);
      this.out.bytes(L.textClose);
      this.out.bytes(L.close);
      return PART;
    }
    if (k !== T_OBJECT) {
      this.raw(p);
      return PART;
    }
    const m = this.members(p);
    const type = this.strOf(m.get('type'));
    if (type !== undefined && TEXT_TYPES.has(type)) {
      // No text (absent, null or "") is no part.
      const text = m.get('text');
      if (text === undefined || this.kind(text) === T_NULL || (this.kind(text) === T_STRING && this.end(text) - this.start(text) === 2)) return NONE;
      this.out.bytes(L.textOpen);
      this.raw(text);
      this.out.bytes(L.textClose);
      this.rest(m, ['type', 'text'], SKIP_TYPE);
      this.out.bytes(L.close);
      return PART;
    }
    if (type !== undefined && REFERENCE_PARTS.has(type)) return this.referencePart(p);
    if (type === 'image_url' && !this.plainImageUrl(m)) return this.referencePart(p);
    this.out.bytes(L.open);
    let kind = PART;
    switch (type) {
      case 'image_url':
        this.imageUrl(m);
        break;
      case 'tool_use':
      case 'tool_call': {
        const have = ['type'];
        this.out.bytes(L.type);
        this.out.bytes(L.tool_call);
        this.putId(have, 'id', L.idKey, this.id(m.get('id')));
        this.keep(have, 'name', L.nameKey, m.get('name'));
        if (type === 'tool_use') {
          const input = m.get('input');
          this.setArguments(have, input === undefined || this.kind(input) === T_NULL ? undefined : input);
        } else {
          // Arguments are data: [] is a value here, only null is no arguments.
          this.putNotNull(have, 'arguments', L.argumentsKey, m.get('arguments'));
          this.putNotNull(have, 'argumentsText', L.argumentsTextKey, m.get('argumentsText'));
        }
        this.rest(m, have, SKIP_TOOL_USE);
        break;
      }
      case 'tool_result': {
        const have = ['type', 'content'];
        this.out.bytes(L.type);
        this.out.bytes(L.tool_result);
        const tu = m.get('tool_use_id');
        this.putId(have, 'id', L.idKey, this.ref(tu === undefined || this.kind(tu) === T_NULL ? m.get('id') : tu));
        this.out.byte(COMMA);
        this.out.bytes(L.contentKey);
        this.out.bytes(L.openArr);
        this.content(m.get('content'));
        this.out.bytes(L.closeArr);
        const err = m.get('is_error');
        if (err !== undefined && this.src[this.start(err)] === 0x74 /* true */) {
          this.out.byte(COMMA);
          this.out.bytes(L.isErrorTrue);
          have.push('is_error');
        }
        this.rest(m, have, SKIP_RESULT);
        kind = RESULT;
        break;
      }
      case 'thinking': {
        const have = ['type'];
        this.out.bytes(L.type);
        this.out.bytes(L.thinking);
        this.keep(have, 'thinking', L.thinkingKey, m.get('thinking'));
        this.rest(m, have, SKIP_THINKING);
        break;
      }
      case 'function_call': {
        const have = ['type'];
        this.out.bytes(L.type);
        this.out.bytes(L.function_call);
        this.keep(have, 'name', L.nameKey, m.get('name'));
        this.putNotNull(have, 'arguments', L.argumentsKey, m.get('arguments'));
        this.rest(m, have, SKIP_TYPE);
        break;
      }
      default:
        this.other(m, type ?? '');
    }
    this.out.bytes(L.close);
    return kind;
  }

  /** Writes `,"key":value` for a member the reference puts with put(out, k, copy(v)). */
  putRaw(have: string[], name: string, key: Uint8Array, v: number | undefined): void {
    if (v === undefined) return;
    this.sep();
    this.out.bytes(key);
    this.raw(v);
    have.push(name);
  }

  /** The reference's keep(): null and [] are absent. */
  keep(have: string[], name: string, key: Uint8Array, v: number | undefined): void {
    if (!this.empty(v)) this.putRaw(have, name, key, v);
  }

  /** `if (v !== null) put(out, k, copy(v))`. */
  putNotNull(have: string[], name: string, key: Uint8Array, v: number | undefined): void {
    if (v !== undefined && this.kind(v) !== T_NULL) this.putRaw(have, name, key, v);
  }

  putId(have: string[], name: string, key: Uint8Array, id: string | undefined): void {
    if (id === undefined) return;
    this.sep();
    this.out.bytes(key);
    this.out.bytes(quotedId(id));
    have.push(name);
  }

  /** Whether imageUrl() handles the part: no data: URL, no image_url object without a url. */
  private plainImageUrl(m: Members): boolean {
    let url = m.get('image_url');
    if (this.isObj(url)) {
      url = this.members(url).get('url');
      if (url === undefined || this.kind(url) !== T_STRING) return false;
    }
    return url === undefined || this.kind(url) !== T_STRING || !/^data:/i.test(this.str(url));
  }

  /** OpenAI chat image_url parts with a URL or path (plainImageUrl()). */
  private imageUrl(m: Members): void {
    const iu = m.get('image_url');
    const have = ['type', 'image'];
    this.out.bytes(L.type);
    this.out.bytes(L.image);
    let url: number | undefined = iu;
    let inner: Members | undefined;
    if (this.isObj(iu)) {
      inner = this.members(iu);
      url = inner.get('url');
    }
    if (url !== undefined && !this.empty(url)) {
      this.out.byte(COMMA);
      this.out.bytes(L.imageKey);
      if (this.kind(url) === T_STRING) {
        this.out.bytes(URL_LIKE.test(this.str(url)) ? L.urlKey : L.pathKey);
        this.raw(url);
        this.out.bytes(L.close);
      } else {
        this.raw(url);
      }
    }
    if (inner) this.rest(inner, have, SKIP_IMAGE_URL);
    this.rest(m, have, SKIP_IMAGE_PART);
  }

  /** A part or item of another type: the reference's other(). */
  private other(m: Members, type: string, skip: ReadonlySet<string> = NO_SKIP): void {
    const have: string[] = [];
    const put = (name: string, id: string | undefined) => {
      if (id === undefined) return;
      this.sep();
      this.out.text(`"${name}":"${id}"`);
      have.push(name);
    };
    // The reference's other(): results' references (Ids.ref) but a call's own call_id.
    for (const k of OTHER_ID_KEYS) put(k, k === 'call_id' && !type.endsWith('_output') ? this.id(m.get(k)) : this.ref(m.get(k)));
    if (CALL_TYPE.test(type) && !skip.has('id')) put('id', this.id(m.get('id')));
    this.rest(m, have, skip);
  }

  /** The reference's setArguments() for the arguments record v (absent or null: nothing). */
  setArguments(have: string[], v: number | undefined): void {
    if (v === undefined || this.kind(v) === T_NULL) return;
    if (this.kind(v) !== T_STRING) {
      this.putRaw(have, 'arguments', L.argumentsKey, v);
      return;
    }
    if (this.argumentsBytes(have, v)) return;
    const text = this.str(v);
    if (!text.isWellFormed()) decline(); // no UTF-8 form to copy; the reference decides
    // Text that opens an object or array (what SDKs send) is written as the value without
    // parsing it here: the core parses it with the rest of the view, and if it is not I-JSON
    // (the reference then keys it as argumentsText) the core's error makes the whole body
    // decline to the reference. Parsing every call's arguments here cost ~1 us each.
    let i = 0;
    while (i < text.length && isJsonWs(text.charCodeAt(i))) i++;
    const c0 = text.charCodeAt(i);
    if (c0 === 0x7b || c0 === 0x5b) {
      this.sep();
      this.out.bytes(L.argumentsKey);
      this.out.text(text);
      have.push('arguments');
      return;
    }
    let value: unknown;
    let ok = true;
    try {
      value = JSON.parse(text);
    } catch {
      ok = false;
    }
    if (ok && value === null) return; // "null" is no arguments, as null is
    this.sep();
    if (ok) {
      // The JSON text itself is the value: the core parses and canonicalizes it. Text that is
      // JSON but not I-JSON (duplicate names, lone surrogates, 1e400), which the reference keys
      // as argumentsText, fails there, and the body goes to the reference.
      this.out.bytes(L.argumentsKey);
      this.out.text(text);
      have.push('arguments');
    } else {
      this.out.bytes(L.argumentsTextKey);
      this.raw(v);
      have.push('argumentsText');
    }
  }

  /**
   * setArguments() for arguments text that opens an object or array, unescaped from the body's
   * bytes straight into the view (see setArguments for why it need not be parsed here). False,
   * with nothing written, for any other text and for text with \u escapes.
   */
  private argumentsBytes(have: string[], v: number): boolean {
    const src = this.src;
    const s = this.start(v) + 1;
    const e = this.end(v) - 1;
    // JSON whitespace before the value; inside the string literal it can only be escaped.
    let i = s;
    while (i < e) {
      if (src[i] === 0x20) i++;
      else if (src[i] === 0x5c && (src[i + 1] === 0x6e || src[i + 1] === 0x74 || src[i + 1] === 0x72)) i += 2;
      else break;
    }
    if (i >= e || (src[i] !== 0x7b && src[i] !== 0x5b)) return false;
    const mark = this.out.at;
    this.sep();
    this.out.bytes(L.argumentsKey);
    if (!this.out.unescaped(src, s, e)) {
      this.out.at = mark;
      return false;
    }
    have.push('arguments');
    return true;
  }

  private toolCall(c: number): void {
    if (this.kind(c) !== T_OBJECT) {
      this.raw(c);
      return;
    }
    const m = this.members(c);
    const have = ['type'];
    this.out.bytes(L.open);
    this.out.bytes(L.type);
    this.out.bytes(L.tool_call);
    const type = m.get('type');
    if (this.ollama) {
      this.ollama.toolCall(this, m, have);
      this.out.bytes(L.close);
      return;
    }
    this.putId(have, 'id', L.idKey, this.id(m.get('id')));
    if (type === undefined || this.kind(type) === T_NULL || this.strOf(type) === 'function') {
      const f = m.get('function');
      const fm = this.isObj(f) ? this.members(f) : NO_MEMBERS;
      this.keep(have, 'name', L.nameKey, fm.get('name'));
      this.setArguments(have, fm.get('arguments'));
    } else {
      this.putRaw(have, 'kind', L.kindKey, type);
      this.rest(m, have, SKIP_CALL);
    }
    this.out.bytes(L.close);
  }

  /** What the last message written was, for joinCalls() (Responses function_call items). */
  private last: { assistant: boolean; joinable: boolean; empty: boolean } | undefined;

  /** Messages the reference made (LangChain messages, server items), split as it splits them. */
  private emitMessages(list: unknown[], comma: boolean): number {
    const split = splitToolResults(list);
    split.forEach((m, k) => {
      if (comma || k > 0) this.out.byte(COMMA);
      this.emit(m);
    });
    const m = split[split.length - 1] as Record<string, unknown> | undefined;
    this.last = { assistant: m !== undefined && m.role === 'assistant' && Array.isArray(m.content), joinable: false, empty: false };
    return split.length;
  }

  /**
   * One message (or Responses item) of the conversation; returns how many messages it became
   * (a user message carrying tool results is split: normalize.ts splitToolResults()), or 0 if
   * it joined the assistant message before it (normalize.ts joinCalls()). Every message this
   * writes has `content` last, so a joining call goes in before its closing `]}`. `comma`:
   * whether a message was written before (a separator is due unless this one joins it).
   */
  message(i: number, responses: boolean, comma: boolean): number {
    if (this.kind(i) !== T_OBJECT) decline(); // the reference throws E_REQUEST
    const m = this.members(i);
    if (m.has('lc') || m.has('lc_namespace')) return this.emitMessages([this.n.message(this.value(i), '$')], comma);
    const type = m.get('type');
    if (!m.has('role') && type !== undefined && this.kind(type) === T_STRING && this.str(type) !== 'message') {
      const t = this.str(type);
      if (t === 'function_call') return this.call(m, responses, comma);
      if (comma) this.out.byte(COMMA);
      if (t === 'function_call_output') return this.callOutput(m);
      return this.emitMessages([this.n.message(this.value(i), '$')], false); // item_reference, server items
    }
    const out = this.out;
    const ollamaResult = this.ollama?.message(this, m);
    if (!responses && ollamaResult === undefined && this.plainMessage(m, comma)) return 1;
    if (comma) out.byte(COMMA);
    const start = out.at;
    // Written as `{members,"content":[parts]}` (the members need no call ids, so they can come
    // first); only a user message with tool results is then reassembled, split.
    out.byte(0x7b);
    const have = ['content'];
    const role = m.get('role');
    let roleName: string | undefined;
    if (!this.empty(role)) {
      out.bytes(L.roleKey);
      this.raw(role!);
      have.push('role');
      roleName = this.strOf(role);
    }
    this.rest(m, have, this.ollama ? this.ollama.skip() : messageSkip());
    const membersEnd = out.at;
    if (membersEnd > start + 1) out.byte(COMMA);
    out.bytes(L.contentKey);
    out.bytes(L.openArr);
    const partsStart = out.at;
    const ranges: number[] = [];
    const tc = m.get('tool_call_id');
    const resultId = ollamaResult ? this.n.ids.of(ollamaResult.id) : tc === undefined || this.kind(tc) === T_NULL ? undefined : this.ref(tc);
    if (resultId !== undefined) {
      out.bytes(L.resultOpen);
      out.text(`"${resultId}"`);
      out.byte(COMMA);
      out.bytes(L.contentKey);
      out.bytes(L.openArr);
    }
    let n = this.ollama ? this.ollama.thinking(this, m, ranges) : 0;
    n += this.content(m.get('content'), ranges, n > 0);
    const calls = m.get('tool_calls');
    if (calls !== undefined && this.kind(calls) === T_ARRAY) {
      if (this.ollama) this.ollama.open = [];
      for (const c of this.children(calls)) {
        if (n++ > 0) out.byte(COMMA);
        const s = out.at;
        this.toolCall(c);
        ranges.push(s, out.at, PART);
      }
    }
    const fc = m.get('function_call');
    if (this.isObj(fc)) {
      const fm = this.members(fc);
      if (n++ > 0) out.byte(COMMA);
      const s = out.at;
      out.bytes(L.open);
      out.bytes(L.type);
      out.bytes(L.function_call);
      const have2 = ['type'];
      this.keep(have2, 'name', L.nameKey, fm.get('name'));
      this.setArguments(have2, fm.get('arguments'));
      out.bytes(L.close);
      ranges.push(s, out.at, PART);
    }
    if (resultId !== undefined) {
      out.bytes(L.closeArr);
      out.bytes(L.close);
      ranges.length = 0;
      ranges.push(partsStart, out.at, RESULT);
    }
    const partsEnd = out.at;
    out.bytes(L.closeArr);
    out.bytes(L.close);

    const members = (): void => {
      out.byte(0x7b);
      out.own(start + 1, membersEnd);
      if (membersEnd > start + 1) out.byte(COMMA);
      out.bytes(L.contentKey);
      out.bytes(L.openArr);
    };
    const asm = out.at;
    let count = 1;
    let split = false;
    if (roleName === 'user') for (let r = 2; r < ranges.length; r += 3) if (ranges[r] === RESULT) split = true;
    if (!split) {
      this.last = { assistant: roleName === 'assistant', joinable: true, empty: ranges.length === 0 };
      return 1;
    }
    {
      count = 0;
      let run = -1; // first range of the pending run of other parts
      const flush = (upTo: number) => {
        if (run < 0) return;
        if (count++ > 0) out.byte(COMMA);
        members();
        for (let r = run; r < upTo; r += 3) {
          if (r > run) out.byte(COMMA);
          out.own(ranges[r]!, ranges[r + 1]!);
        }
        out.bytes(L.closeArr);
        out.bytes(L.close);
        run = -1;
      };
      for (let r = 0; r < ranges.length; r += 3) {
        if (ranges[r + 2] !== RESULT) {
          if (run < 0) run = r;
          continue;
        }
        flush(r);
        if (count++ > 0) out.byte(COMMA);
        out.bytes(L.toolMessage);
        out.own(ranges[r]!, ranges[r + 1]!);
        out.bytes(L.closeArr);
        out.bytes(L.close);
      }
      flush(ranges.length);
    }
    out.buf.copyWithin(start, asm, out.at);
    out.at = start + (out.at - asm);
    this.last = { assistant: false, joinable: true, empty: false };
    return count;
  }

  /**
   * The commonest message, `{"role": "<string>", "content": "<string>"}` and nothing else, in
   * canonical member order (`{"content":[text part],"role":...}`): what message() would write,
   * without its general machinery. Not for Responses input, whose function_call items join
   * the message before them by reopening its content, which message() writes last.
   */
  private plainMessage(m: Members, comma: boolean): boolean {
    if (m.names.length !== 2) return false;
    const role = m.get('role');
    const content = m.get('content');
    if (role === undefined || content === undefined || this.kind(role) !== T_STRING || this.kind(content) !== T_STRING) return false;
    const out = this.out;
    if (comma) out.byte(COMMA);
    out.bytes(L.contentOpen);
    const empty = this.end(content) - this.start(content) === 2;
    if (!empty) {
      out.bytes(L.textOpen);
      this.raw(content);
      out.bytes(L.textClose);
      out.bytes(L.close);
    }
    out.bytes(L.contentRole);
    this.raw(role);
    out.bytes(L.close);
    // Never joined (see above), but kept as message() would set it.
    this.last = { assistant: this.str(role) === 'assistant', joinable: false, empty };
    return true;
  }

  /** A Responses function_call item: an assistant message, or joined to the one before. */
  private call(m: Members, responses: boolean, comma: boolean): number {
    const out = this.out;
    const join = responses && comma && this.last?.assistant === true;
    if (join && !this.last!.joinable) decline();
    if (join) {
      out.at -= 2; // the previous message's closing `]}`
      if (!this.last!.empty) out.byte(COMMA);
    } else {
      if (comma) out.byte(COMMA);
      out.bytes(L.assistantMessage);
    }
    out.bytes(L.open);
    out.bytes(L.type);
    out.bytes(L.tool_call);
    const have = ['type'];
    this.putId(have, 'id', L.idKey, this.id(m.get('call_id')));
    this.keep(have, 'name', L.nameKey, m.get('name'));
    this.setArguments(have, m.get('arguments'));
    out.bytes(L.close);
    out.bytes(L.closeArr);
    out.bytes(L.close);
    this.last = { assistant: true, joinable: true, empty: false };
    return join ? 0 : 1;
  }

  private callOutput(m: Members): number {
    const out = this.out;
    out.bytes(L.toolMessage);
    out.bytes(L.open);
    out.bytes(L.type);
    out.bytes(L.tool_result);
    this.putId([], 'id', L.idKey, this.ref(m.get('call_id')));
    out.byte(COMMA);
    out.bytes(L.contentKey);
    out.bytes(L.openArr);
    this.content(m.get('output'));
    out.bytes(L.closeArr);
    out.bytes(L.close);
    out.bytes(L.closeArr);
    out.bytes(L.close);
    this.last = { assistant: false, joinable: true, empty: false };
    return 1;
  }

  /** A prompt string (Responses `input`, generic `prompt`) as a user message. */
  userText(i: number): number {
    this.out.bytes(L.userMessage);
    this.content(i);
    this.out.bytes(L.closeArr);
    this.out.bytes(L.close);
    this.last = { assistant: false, joinable: true, empty: false };
    return 1;
  }

  /** One tool definition; returns its name as the reference sorts it (undefined: none). */
  tool(i: number, legacy: boolean): string | undefined {
    if (this.kind(i) !== T_OBJECT) {
      this.raw(i);
      return undefined;
    }
    const m = this.members(i);
    const type = m.get('type');
    const typeStr = this.strOf(type);
    const f = m.get('function');
    const fnTool = typeStr === 'function' && this.isObj(f);
    const defTool = !fnTool && (type === undefined || this.kind(type) === T_NULL || typeStr === 'function' || (typeStr === 'custom' && m.has('input_schema')));
    if ((fnTool && this.wrappedSchema(this.members(f!))) || (defTool && this.wrappedSchema(m))) {
      // The Vercel AI SDK's jsonSchema() wrapper: the reference unwraps it.
      const t = this.n.tool(this.value(i), legacy) as Record<string, unknown>;
      this.emit(t);
      return typeof t.name === 'string' ? t.name : undefined;
    }
    const have: string[] = [];
    if (legacy) have.push('legacy'); // `out.legacy = true` wins over a copied member
    this.out.bytes(L.open);
    let name: number | undefined;
    if (fnTool) {
      name = this.toolDef(this.members(f!), have);
      if (!have.includes('name') && !this.empty(m.get('name'))) name = m.get('name'); // copied by rest() below
      this.rest(m, have, SKIP_TOOL);
    } else if (defTool) {
      name = this.toolDef(m, have);
    } else {
      this.rest(m, have, NO_SKIP);
      name = have.includes('name') ? m.get('name') : undefined;
    }
    if (legacy) {
      this.sep();
      this.out.bytes(L.legacyTrue);
    }
    this.out.bytes(L.close);
    return name !== undefined && this.kind(name) === T_STRING ? this.str(name) : undefined;
  }

  /** The schema toolDef() picks: parameters ?? input_schema ?? inputSchema. */
  private params(f: Members): number | undefined {
    for (const k of ['parameters', 'input_schema', 'inputSchema']) {
      const v = f.get(k);
      if (v !== undefined && this.kind(v) !== T_NULL) return v;
    }
    return undefined;
  }

  private wrappedSchema(f: Members): boolean {
    const p = this.params(f);
    if (!this.isObj(p)) return false;
    // A plain schema (the common case) is looked at for one member only: its key bytes are
    // compared rather than every key decoded into members(). A schema that has the member goes
    // through members() after all: it declines on a duplicate name, which the unwrapping
    // (JSON.parse, last one wins) would otherwise hide from the core.
    const stop = this.t[p * 8 + 3]!;
    for (let c = p + 1; c < stop; c = this.t[c * 8 + 3]!) {
      const ks = this.t[c * 8 + 4]!;
      const escaped = (this.t[c * 8]! & F_KEY_ESCAPED) !== 0;
      const named = escaped ? this.key(c) === 'jsonSchema' : this.t[c * 8 + 5]! - ks === JSON_SCHEMA.length + 2 && JSON_SCHEMA.every((b, k) => this.src[ks + 1 + k] === b);
      if (named) return this.isObj(this.members(p).get('jsonSchema'));
    }
    return false;
  }

  /** The reference's toolDef(); returns the record of the name it kept. */
  private toolDef(f: Members, have: string[]): number | undefined {
    const name = f.get('name');
    this.keep(have, 'name', L.nameKey, name);
    this.keep(have, 'description', L.descriptionKey, f.get('description'));
    this.keep(have, 'parameters', L.parametersKey, this.params(f));
    this.rest(f, have, SKIP_TOOL_DEF);
    return have.includes('name') ? name : undefined;
  }
}

export const PROVIDERS: readonly string[] = ['openai-chat', 'openai-responses', 'openai-embeddings', 'anthropic', 'generic'];
// Members that hold the conversation and tools, per shape (normalize.ts LAYOUT); the rest of
// the top level is model, options and context, normalized by the reference itself.
export const CONVERSATION: Record<BuiltinProvider, readonly string[]> = {
  'openai-chat': ['messages', 'system', 'tools', 'functions'],
  anthropic: ['messages', 'system', 'tools', 'functions'],
  generic: ['messages', 'prompt', 'system', 'tools', 'functions'],
  'openai-responses': ['input', 'instructions', 'tools', 'functions'],
  'openai-embeddings': ['input'],
};

/** Whether an array record holds only numbers (normalize.ts isTokens(): a token list). */
function isTokens(w: ChatWalk, i: number): boolean {
  return w.kind(i) === T_ARRAY && w.children(i).every((c) => w.kind(c) === T_NUMBER);
}

/**
 * detectProvider() of normalize.ts on the index (same rules, same order; the differential tests
 * hold the two together). Materializing what it reads as objects cost more than the rest of
 * the walk.
 */
function detect(w: ChatWalk, root: Members): BuiltinProvider {
  const messages = root.get('messages');
  if (messages === undefined) {
    if (root.has('instructions') || root.has('previous_response_id')) return 'openai-responses';
    const input = root.get('input');
    if (input !== undefined) {
      // looksEmbeddings()
      if (root.has('encoding_format') || root.has('dimensions') || w.isObj(root.get('options'))) return 'openai-embeddings';
      if (w.kind(input) === T_ARRAY) {
        const items = w.children(input);
        if (items.length > 0 && items.every((x) => w.kind(x) === T_STRING || w.kind(x) === T_NUMBER || isTokens(w, x))) return 'openai-embeddings';
      }
      const model = root.get('model');
      if (model !== undefined && w.kind(model) === T_STRING && /embed/i.test(w.str(model))) return 'openai-embeddings';
      return 'openai-responses';
    }
    if (root.has('prompt')) return 'generic';
    decline();
  }
  if (w.kind(messages) !== T_ARRAY) decline();
  if (w.isObj(root.get('context')) || w.isObj(root.get('options'))) return 'generic';
  const toolList = root.get('tools');
  const tools = toolList !== undefined && w.kind(toolList) === T_ARRAY ? w.children(toolList).filter((t) => w.isObj(t)).map((t) => w.members(t)) : [];
  const msgs = w.children(messages);
  const objs = msgs.filter((m) => w.isObj(m)).map((m) => w.members(m));
  const blocks = objs.flatMap((m) => {
    const c = m.get('content');
    return c !== undefined && w.kind(c) === T_ARRAY ? w.children(c).filter((b) => w.isObj(b)).map((b) => w.members(b)) : [];
  });
  const typeOf = (b: Members): string | undefined => w.strOf(b.get('type'));
  // looksAnthropic
  if (ANTHROPIC_ARGS.some((k) => root.has(k))) return 'anthropic';
  if (tools.some((t) => t.has('input_schema'))) return 'anthropic';
  if (
    blocks.some((b) => {
      const type = typeOf(b);
      return (type !== undefined && ANTHROPIC_BLOCKS.has(type)) || ((type === 'image' || type === 'document') && w.isObj(b.get('source')));
    })
  ) {
    return 'anthropic';
  }
  // looksOpenAI
  if (OPENAI_ARGS.some((k) => root.has(k))) return 'openai-chat';
  if (tools.some((t) => typeOf(t) === 'function' && w.isObj(t.get('function')))) return 'openai-chat';
  if (objs.some((m) => m.has('tool_calls') || m.has('tool_call_id') || m.has('function_call'))) return 'openai-chat';
  if (blocks.some((b) => OPENAI_PARTS.has(typeOf(b) as string))) return 'openai-chat';
  if (objs.length === msgs.length && objs.every((m) => OPENAI_ROLES.has(w.strOf(m.get('role')) as string))) return 'openai-chat';
  return 'generic';
}

/**
 * Model, options and context: the reference on the top level without the conversation (its
 * members are small), given as `top`.
 */
export function topLevel(provider: BuiltinProvider, top: Record<string, unknown>, ignoreArgs: readonly string[]): Normalized {
  const ignore = new Set(ignoreArgs);
  if (CONVERSATION[provider].some((k) => ignore.has(k))) decline();
  if (provider !== 'openai-responses' && provider !== 'openai-embeddings') top.messages = [];
  const small = normalizeRequest(top, { provider, ignoreArgs });
  if (!allFinite(small.view.options, NO_SKIP) || !allFinite(small.view.model, NO_SKIP)) decline();
  return small;
}

/**
 * The root members the top level is made of (those `inTop` takes), as their exact bytes: what a
 * kept top level is found by.
 */
function topText(w: Walk, root: Members, inTop: (k: string) => boolean): string {
  let text = '';
  for (let i = 0; i < root.names.length; i++) {
    const k = root.names[i]!;
    if (!inTop(k)) continue;
    const rec = root.recs[i]!;
    text += `${decoder.decode(w.src.subarray(w.t[rec * 8 + 4]!, w.end(rec)))},`;
  }
  return text;
}

/**
 * The digests of a chat-family body by the walk. `known`: a root tool list kept from an earlier
 * Ollama request (tools-cache.ts), which the index may have skipped (Ollama mode only).
 */
export function digests(w: ChatWalk, opts: NormalizeOptions, ignoreArgs: readonly string[], known?: FoundTools): RequestDigests {
  const root = w.members(0);
  const provider = (opts.provider as BuiltinProvider | undefined) ?? detect(w, root);
  // Ollama: `system` and `functions` are options the rewrite moves under `ollama`.
  const inTop = (k: string): boolean => !CONVERSATION[provider].includes(k) || (w.ollama !== undefined && k !== 'messages' && k !== 'tools');
  const makeTop = (): Normalized => {
    let top: Record<string, unknown> = {};
    for (let i = 0; i < root.names.length; i++) if (inTop(root.names[i]!)) set(top, root.names[i]!, w.value(root.recs[i]!));
    if (w.ollama) top = ollamaAsOpenAI('chat', top) as Record<string, unknown>;
    return topLevel(provider, top, ignoreArgs);
  };
  // The top level is kept by its bytes (as the core's view keeps the chat family's, core.ts),
  // written where the model and options go.
  const text = topText(w, root, inTop);
  const topKey = `${w.ollama ? 'ollama' : provider}${JSON.stringify(ignoreArgs)}`;
  const writeTop = (): Normalized => keptTop(out, topKey, text, makeTop)!;

  const out = w.out;
  let small: Normalized;
  let count = 0;
  const names: (string | undefined)[] = [];
  if (provider === 'openai-embeddings') {
    // One input (a string or one token list) is a batch of one.
    out.bytes(L.embeddings);
    const input = root.get('input');
    if (input !== undefined && w.kind(input) !== T_NULL) {
      const items = w.kind(input) === T_ARRAY && !isTokens(w, input) ? w.children(input) : [input];
      for (const x of items) {
        if (count++ > 0) out.byte(COMMA);
        w.raw(x);
      }
    }
    out.bytes(L.closeArr);
    small = writeTop();
  } else {
    out.bytes(L.view);
    const responses = provider === 'openai-responses';
    const system = w.ollama ? undefined : root.get(responses ? 'instructions' : 'system');
    if (system !== undefined) {
      const mark = out.at;
      out.bytes(L.systemMessage);
      if (w.content(system) > 0) {
        out.bytes(L.closeArr);
        out.bytes(L.close);
        count++;
      } else {
        out.at = mark;
      }
    }
    const list = root.get(responses ? 'input' : 'messages');
    const add = (n: number) => {
      count += n;
    };
    const next = () => {
      if (count > 0) out.byte(COMMA);
    };
    // joinCalls() never joins onto the system prompt: `last` is only set by messages.
    const message = (m: number) => add(w.message(m, responses, count > 0));
    if (list === undefined) {
      if (!responses && provider !== 'generic') decline(); // the reference throws E_REQUEST
    } else if (w.kind(list) === T_NULL) {
      if (!responses) decline();
    } else if (w.kind(list) === T_ARRAY) {
      for (const m of w.children(list)) message(m);
    } else if (responses && w.kind(list) === T_STRING) {
      next();
      add(w.userText(list));
    } else {
      decline();
    }
    if (provider === 'generic') {
      // Vercel AI SDK call options: `prompt` (a string or messages) follows `messages`.
      const prompt = root.get('prompt');
      if (prompt !== undefined && w.kind(prompt) !== T_NULL) {
        if (w.kind(prompt) === T_STRING) {
          next();
          add(w.userText(prompt));
        } else if (w.kind(prompt) === T_ARRAY) {
          for (const m of w.children(prompt)) message(m);
        } else {
          decline();
        }
      }
    }

    out.bytes(L.closeArr);
    w.noDangling();
    small = writeTop();
    if (w.ollama) return ollamaTools(w, root, small, count, known);

    // Tools: each written as a chunk, then the chunks in the reference's order (by name).
    const chunks: { name: string | undefined; start: number; end: number }[] = [];
    for (const [name, legacy] of [['tools', false], ['functions', true]] as const) {
      const t = root.get(name);
      if (t === undefined || w.kind(t) === T_NULL) continue;
      if (w.kind(t) !== T_ARRAY) decline(); // the AI SDK's tools map, or an error
      for (const c of w.children(t)) {
        const start = out.at;
        const toolName = w.tool(c, legacy);
        chunks.push({ name: toolName, start, end: out.at });
      }
    }
    sortedTools(out, chunks);
    for (const c of chunks) names.push(c.name);
  }
  out.bytes(L.close);
  return finish(out, provider, count, names, small);
}

/** The tool-list tag of Ollama's kept root tools (tools-cache.ts KeptTools.provider): no core provider number. */
export const OLLAMA_KEPT = 100;

/**
 * Ends an Ollama body's view with its tools (the root `tools`; `functions` is an option there)
 * and finishes: a list kept from an earlier request is not walked again (the index skipped it
 * where it sat as far from the end), a list whose canonical form is kept is not written into
 * the view, and a list written whole is kept for the next request of the conversation.
 */
function ollamaTools(w: ChatWalk, root: Members, small: Normalized, count: number, known: FoundTools | undefined): RequestDigests {
  const out = w.out;
  const t = root.get('tools');
  if (t !== undefined && known !== undefined && w.start(t) === known.skip.start && w.end(t) === known.skip.end && w.t[t * 8 + 3] === t + 1) {
    usedTools(known.tools);
    out.bytes(L.close);
    return finish(out, 'openai-chat', count, known.tools.names, small, known.tools.tail);
  }
  const chunks: { name: string | undefined; start: number; end: number }[] = [];
  if (t !== undefined && w.kind(t) !== T_NULL) {
    if (w.kind(t) !== T_ARRAY) decline();
    for (const c of w.children(t)) {
      const start = out.at;
      const toolName = w.tool(c, false);
      chunks.push({ name: toolName, start, end: out.at });
    }
  }
  const at = out.at;
  sortedTools(out, chunks);
  const names = chunks.map((c) => c.name);
  const tail = toolsTail(out.buf.subarray(chunks.length > 0 ? chunks[0]!.start : at, out.at));
  if (tail === undefined) {
    out.bytes(L.close);
    return finish(out, 'openai-chat', count, names, small);
  }
  out.at = chunks.length > 0 ? chunks[0]!.start : at;
  out.bytes(L.close);
  const d = finish(out, 'openai-chat', count, names, small, tail);
  if (t !== undefined && w.kind(t) === T_ARRAY) keepTools(w.src, w.start(t), w.end(t), OLLAMA_KEPT, 0, names, tail);
  return d;
}
