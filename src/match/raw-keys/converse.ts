// Bedrock Converse bodies on their route (docs/hash-spec.md, "AWS Bedrock Runtime"): text,
// toolUse and toolResult blocks written from the body's bytes in the shared form; every other
// block and every tool through the Bedrock module's translation and the reference normalizer,
// one at a time (with the walk's own call ids, so numbering stays in order); anything unusual
// (ignoreArgs, extra message members, roles other than user and assistant) to the parse path.

import { allFinite } from '../../core/value.ts';
import { converseBlock, converseTool } from '../../providers/bedrock.ts';
import { normalizeRequest as normalizeModule } from '../../providers/index.ts';
import type { BuiltinProvider, NormalizeOptions } from '../../providers/types.ts';
import type { RequestDigests } from '../matcher.ts';
import type { ModuleShape } from './core.ts';
import { COMMA, L, lit, quotedId } from './out.ts';
import { finish, MessageList, modelAndOptions, sortedTools } from './view.ts';
import { DECLINE, decline, INHERITED, isResult, NO_SKIP, NONE, PART, RESULT, set, T_ARRAY, T_NULL, T_STRING, type Walk } from './walk.ts';

/** Converse for the core's own view (core.ts): toolConfig's tools are the core's; holes are blocks. */
export const CONVERSE_CORE: ModuleShape = {
  code: 6,
  provider: 'bedrock-converse',
  conversation: ['messages', 'system'],
  first: '{"messages":[]',
  toolsIn: 'toolConfig',
  top: (top) => {
    const tc = top.toolConfig;
    if (tc !== null && typeof tc === 'object' && !Array.isArray(tc)) delete (tc as Record<string, unknown>).tools;
  },
  part: (value, n) => n.content([converseBlock(value)], '$'),
};

export function converseDigests(w: Walk, opts: NormalizeOptions, ignoreArgs: readonly string[]): RequestDigests {
  if (!Array.isArray(ignoreArgs) || ignoreArgs.length > 0) decline();
  const root = w.members(0);
  const messages = root.get('messages');
  if (messages === undefined || w.kind(messages) !== T_ARRAY) decline();
  // Model and options: the module on the body without its conversation, system and tools.
  const top: Record<string, unknown> = { messages: [] };
  let tools: number | undefined;
  for (let i = 0; i < root.names.length; i++) {
    const k = root.names[i]!;
    const rec = root.recs[i]!;
    // A root member named like one of Object.prototype's (`__proto__`): the reference's objects
    // do not keep it as JSON.parse does (its members are read through the prototype), so the
    // reference keys it.
    if (INHERITED(k)) decline();
    if (k === 'messages' || k === 'system') continue;
    if (k === 'toolConfig' && w.isObj(rec)) {
      const tc: Record<string, unknown> = {};
      const tm = w.members(rec);
      for (let j = 0; j < tm.names.length; j++) {
        // The reference spreads toolConfig's members over the body: these would replace its
        // conversation or system prompt, which this walk reads from the root.
        if (tm.names[j] === 'messages' || tm.names[j] === 'system') decline();
        if (tm.names[j] === 'tools') tools = tm.recs[j];
        else set(tc, tm.names[j]!, w.value(tm.recs[j]!));
      }
      set(top, k, tc);
    } else set(top, k, w.value(rec));
  }
  if (tools !== undefined && w.kind(tools) !== T_ARRAY) decline();
  const small = normalizeModule(top, opts);
  if (small.provider !== 'bedrock-converse' || !allFinite(small.view.options, NO_SKIP) || !allFinite(small.view.model, NO_SKIP)) decline();
  const out = w.out;
  const list = new MessageList(out);
  const next = () => list.next();
  const close = () => list.close();
  const blocksOf = (v: number): number[] => {
    if (w.kind(v) !== T_ARRAY) decline();
    return w.children(v);
  };
  // One message of all its parts (the system prompt, an assistant turn; the reference splits
  // only user messages); none for no parts when `dropEmpty`.
  const part = (b: number) => conversePart(w, b);
  const whole = (head: Uint8Array, v: number, dropEmpty: boolean) => list.whole(head, blocksOf(v), part, dropEmpty);
  // A user turn: tool results are tool messages of their own, the other parts user messages
  // between them (splitToolResults), written in place.
  const user = (v: number) => {
    let open = false;
    let any = false;
    for (const b of blocksOf(v)) {
      const mark = out.at;
      const count0 = list.count;
      if (open) out.byte(COMMA);
      else {
        next();
        out.bytes(L.userMessage);
      }
      const at = out.at;
      const kind = conversePart(w, b);
      if (kind === NONE) {
        out.at = mark;
        list.count = count0;
        continue;
      }
      any = true;
      if (kind === RESULT) {
        // Rewrite: close the user message before it (if one is open), the result in its own.
        const part = out.buf.slice(at, out.at);
        out.at = mark;
        list.count = count0;
        if (open) close();
        open = false;
        next();
        out.bytes(L.toolMessage);
        out.bytes(part);
        close();
        continue;
      }
      open = true;
    }
    if (open) close();
    else if (!any) {
      next();
      out.bytes(L.userMessage);
      close();
    }
  };
  const system = root.get('system');
  if (system !== undefined && w.kind(system) !== T_NULL) whole(L.systemMessage, system, true);
  for (const m of w.children(messages)) {
    if (!w.isObj(m)) decline();
    const mm = w.members(m);
    for (const k of mm.names) if (k !== 'role' && k !== 'content') decline();
    const content = mm.get('content');
    if (content === undefined) decline();
    const role = w.strOf(mm.get('role'));
    if (role === 'assistant') whole(L.assistantMessage, content, false);
    else if (role === 'user') user(content);
    else decline();
  }
  out.bytes(L.closeArr);
  w.noDangling();
  modelAndOptions(out, small);
  const chunks: { name: string | undefined; start: number; end: number }[] = [];
  for (const t of tools === undefined ? [] : w.children(tools)) {
    const start = out.at;
    const name = converseToolSpec(w, t);
    if (name !== DECLINE) {
      chunks.push({ name, start, end: out.at });
      continue;
    }
    const translated = converseTool(w.value(t));
    if (translated === undefined) continue;
    const norm = w.n.tool(translated, false);
    w.emit(norm);
    chunks.push({ name: norm !== null && typeof norm === 'object' && typeof (norm as { name?: unknown }).name === 'string' ? (norm as { name: string }).name : undefined, start, end: out.at });
  }
  const names = chunks.map((c) => c.name);
  sortedTools(out, chunks);
  out.bytes(L.close);
  return finish(out, 'bedrock-converse' as BuiltinProvider, list.count, names, small);
}

const DESCRIPTION_OPEN = lit('{"description":');
const NAME_AFTER = lit(',"name":');
const NAME_OPEN = lit('{"name":');

/**
 * A plain `{ toolSpec: { name, description?, inputSchema: { json } } }` written as D(f) in
 * canonical member order (description, name, parameters); returns its name, or DECLINE (nothing
 * written) for any other tool, which the reference then normalizes.
 */
function converseToolSpec(w: Walk, t: number): string | typeof DECLINE {
  if (!w.isObj(t)) return DECLINE;
  const tm = w.members(t);
  const spec = tm.names.length === 1 && tm.names[0] === 'toolSpec' ? tm.recs[0] : undefined;
  if (!w.isObj(spec)) return DECLINE;
  const sm = w.members(spec);
  if (!sm.names.every((n) => n === 'name' || n === 'description' || n === 'inputSchema')) return DECLINE;
  const name = sm.get('name');
  const description = sm.get('description');
  const schema = sm.get('inputSchema');
  if (name === undefined || w.kind(name) !== T_STRING || (description !== undefined && w.kind(description) !== T_STRING && w.kind(description) !== T_NULL)) return DECLINE;
  if (!w.isObj(schema)) return DECLINE;
  const im = w.members(schema);
  const json = im.names.length === 1 && im.names[0] === 'json' ? im.recs[0]! : undefined;
  // A schema of null (or []) is no parameters to the reference; objects only here.
  if (!w.isObj(json)) return DECLINE;
  const out = w.out;
  if (description !== undefined && w.kind(description) === T_STRING) {
    out.bytes(DESCRIPTION_OPEN);
    w.raw(description);
    out.bytes(NAME_AFTER);
  } else out.bytes(NAME_OPEN);
  w.raw(name);
  out.byte(COMMA);
  out.bytes(L.parametersKey);
  w.raw(json);
  out.bytes(L.close);
  return w.str(name);
}

/** A text part `{"text":...,"type":"text"}` from a string record; false (nothing written) for "". */
function textPart(w: Walk, i: number): boolean {
  if (w.end(i) - w.start(i) === 2) return false;
  w.out.bytes(L.textOpen);
  w.raw(i);
  w.out.bytes(L.textClose);
  w.out.bytes(L.close);
  return true;
}

/** One Converse block, written in the shared form: NONE, PART, or RESULT for a tool result. */
function conversePart(w: Walk, b: number): number {
  const out = w.out;
  if (!w.isObj(b)) decline();
  const m = w.members(b);
  const k = m.names.length === 1 ? m.names[0]! : '';
  const v = m.recs[0]!;
  if (k === 'cachePoint') return NONE;
  if (k === 'text' && w.kind(v) === T_STRING) return textPart(w, v) ? PART : NONE;
  if (k === 'toolUse' && w.isObj(v)) {
    const tm = w.members(v);
    const id = tm.get('toolUseId');
    const name = tm.get('name');
    const input = tm.get('input');
    const plain = tm.names.every((n) => n === 'toolUseId' || n === 'name' || n === 'input');
    // An input given as a string is JSON text to the reference: left to it.
    if (plain && id !== undefined && w.kind(id) === T_STRING && name !== undefined && w.kind(name) === T_STRING && (input === undefined || w.isObj(input))) {
      out.bytes(L.callOpen);
      out.bytes(quotedId(w.id(id)!));
      out.byte(COMMA);
      out.bytes(L.nameKey);
      w.raw(name);
      if (input !== undefined) {
        out.byte(COMMA);
        out.bytes(L.argumentsKey);
        w.raw(input);
      }
      out.bytes(L.close);
      return PART;
    }
  }
  if (k === 'toolResult' && w.isObj(v)) {
    const rm = w.members(v);
    const id = rm.get('toolUseId');
    const content = rm.get('content');
    const status = rm.get('status');
    const plain = rm.names.every((n) => n === 'toolUseId' || n === 'content' || n === 'status');
    const texts = content !== undefined && w.kind(content) === T_ARRAY ? w.children(content) : undefined;
    const textOnly = texts?.every((c) => w.isObj(c) && w.members(c).names.length === 1 && w.kind(w.members(c).recs[0]!) === T_STRING && w.members(c).names[0] === 'text');
    if (plain && textOnly && id !== undefined && w.kind(id) === T_STRING && (status === undefined || w.kind(status) === T_STRING)) {
      out.bytes(L.resultOpen);
      out.bytes(quotedId(w.ref(id)!));
      out.byte(COMMA);
      out.bytes(L.contentKey);
      out.bytes(L.openArr);
      let n = 0;
      for (const c of texts!) {
        const at = out.at;
        if (n > 0) out.byte(COMMA);
        if (textPart(w, w.members(c).recs[0]!)) n++;
        else out.at = at;
      }
      out.bytes(L.closeArr);
      if (w.strOf(status) === 'error') {
        out.byte(COMMA);
        out.bytes(L.isErrorTrue);
      }
      out.bytes(L.close);
      return RESULT;
    }
  }
  // Anything else: the module's translation and the reference normalizer, this block alone.
  const parts = w.n.content([converseBlock(w.value(b))], '$');
  if (parts.length === 0) return NONE;
  if (parts.length > 1) decline();
  w.emit(parts[0]);
  return isResult(parts[0]) ? RESULT : PART;
}

