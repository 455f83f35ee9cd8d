// Gemini bodies (src/providers/gemini.ts is the reference): the walk over the index for what
// Gemini SDKs send (camelCase names; text, thought, functionCall, functionResponse, fileData and
// inlineData parts; function declarations), the rest declined to the parse path.

import { Calls, kindOfMedia } from '../../providers/gemini.ts';
import { normalizeRequest as normalizeModule } from '../../providers/index.ts';
import { attachmentOf } from '../../providers/normalize.ts';
import type { BuiltinProvider, NormalizeOptions } from '../../providers/types.ts';
import { allFinite } from '../../core/value.ts';
import type { RequestDigests } from '../matcher.ts';
import type { ChatWalk } from './chat.ts';
import type { ModuleShape } from './core.ts';
import { COMMA, L, lit, quotedId } from './out.ts';
import { finish, MessageList, modelAndOptions, sortedTools } from './view.ts';
import { decline, type Members, NO_SKIP, NONE, PART, RESULT, set, T_ARRAY, T_NULL, T_OBJECT, T_STRING, T_TRUE, type Walk } from './walk.ts';

const GEMINI_LAYOUT = new Set(['contents', 'systemInstruction', 'tools']);
const GEMINI_PART_KNOWN = new Set(['text', 'thought', 'thoughtSignature', 'inlineData', 'fileData', 'functionCall', 'functionResponse']);
const G = {
  thinkingOpen: lit('{"type":"thinking"'),
  jsonOpen: lit('{"type":"json","json":'),
  jsonEmpty: lit('{"type":"json"}'),
};

/** An inlineData / fileData part (`given`: its media object) as the view holds it: by kind, the attachment. */
function mediaPart(given: Record<string, unknown>, inline: boolean): Record<string, unknown> {
  const kind = kindOfMedia(given.mimeType);
  return { type: kind, [kind]: inline ? attachmentOf(given) : typeof given.fileUri === 'string' ? attachmentOf(given.fileUri) : attachmentOf(given) };
}

/** Gemini for the core's own view (core.ts): its holes are media parts, checked there. */
export const GEMINI_CORE: ModuleShape = {
  code: 7,
  provider: 'gemini',
  conversation: [...GEMINI_LAYOUT],
  first: '{"contents":[]',
  toolsIn: 'root',
  top: () => {},
  part: (value) => {
    const p = value as Record<string, unknown>;
    const inline = Object.hasOwn(p, 'inlineData');
    return [mediaPart((inline ? p.inlineData : p.fileData) as Record<string, unknown>, inline)];
  },
};

/** Every member name of an object, or decline when one is snake_case (the reference camelCases it). */
function camelOnly(w: Walk, i: number): Members {
  const m = w.members(i);
  for (const k of m.names) if (k.includes('_')) decline();
  return m;
}

export function geminiDigests(w: ChatWalk, opts: NormalizeOptions, ignoreArgs: readonly string[]): RequestDigests {
  if (!Array.isArray(ignoreArgs) || ignoreArgs.some((k) => typeof k !== 'string')) decline();
  const root = camelOnly(w, 0);
  if (root.has('generateContentRequest') || ignoreArgs.some((k) => GEMINI_LAYOUT.has(k) || k.includes('_'))) decline();
  const top: Record<string, unknown> = { contents: [] };
  for (let i = 0; i < root.names.length; i++) {
    const k = root.names[i]!;
    if (!GEMINI_LAYOUT.has(k)) set(top, k, w.value(root.recs[i]!));
  }
  const small = normalizeModule(top, opts);
  if (small.provider !== 'gemini' || !allFinite(small.view.options, NO_SKIP) || !allFinite(small.view.model, NO_SKIP)) decline();
  const out = w.out;
  const calls = new Calls(w.n);
  const list = new MessageList(out);
  const next = () => list.next();
  const close = () => list.close();
  // One message of all the parts (the system prompt, a model turn); none for no parts when
  // `dropEmpty` (an empty system prompt is no message).
  const part = (p: number) => geminiPart(w, p, calls);
  const whole = (head: Uint8Array, v: number | undefined, dropEmpty: boolean) => list.whole(head, partsOf(v), part, dropEmpty);
  // A user turn: function results are tool messages of their own, the other parts user
  // messages between them (splitToolResults), written in place.
  const user = (v: number | undefined) => {
    let open = false;
    let n = 0;
    let any = false;
    for (const p of partsOf(v)) {
      if (w.isObj(p) && w.members(p).has('functionResponse')) {
        if (open) close();
        open = false;
        any = true;
        next();
        out.bytes(L.toolMessage);
        if (geminiPart(w, p, calls) !== RESULT) decline();
        close();
        continue;
      }
      const mark = out.at;
      if (open) out.byte(COMMA);
      else {
        next();
        out.bytes(L.userMessage);
      }
      if (geminiPart(w, p, calls) === NONE) {
        out.at = mark;
        if (!open) list.count--;
        continue;
      }
      open = true;
      n++;
      any = true;
    }
    if (open) close();
    else if (!any) {
      next();
      out.bytes(L.userMessage);
      close();
    }
    return n;
  };
  const partsOf = (v: number | undefined): number[] => (v === undefined || w.kind(v) === T_NULL ? [] : w.kind(v) === T_ARRAY ? w.children(v) : [v]);
  const system = root.get('systemInstruction');
  if (system !== undefined && w.kind(system) !== T_NULL) {
    if (!w.isObj(system)) decline();
    whole(L.systemMessage, camelOnly(w, system).get('parts'), true);
  }
  const contents = root.get('contents');
  if (contents !== undefined && w.kind(contents) !== T_NULL) {
    if (w.kind(contents) !== T_ARRAY) decline();
    for (const c of w.children(contents)) {
      if (!w.isObj(c)) decline();
      const cm = camelOnly(w, c);
      for (const k of cm.names) if (k !== 'role' && k !== 'parts') decline();
      const role = cm.get('role');
      const r = role === undefined || w.kind(role) === T_NULL ? 'user' : w.strOf(role);
      if (r === 'model') whole(L.assistantMessage, cm.get('parts'), false);
      else if (r === 'user') user(cm.get('parts'));
      else decline();
    }
  }
  out.bytes(L.closeArr);
  modelAndOptions(out, small);
  // Tools: function declarations through the chat walk's tool writer (D(f)); built-in tools
  // and anything unusual to the parse path.
  const chunks: { name: string | undefined; start: number; end: number }[] = [];
  const tools = root.get('tools');
  if (tools !== undefined && w.kind(tools) !== T_NULL) {
    if (w.kind(tools) !== T_ARRAY) decline();
    for (const t of w.children(tools)) {
      if (!w.isObj(t)) decline();
      const tm = camelOnly(w, t);
      if (tm.names.length !== 1 || tm.names[0] !== 'functionDeclarations') decline();
      const fns = tm.get('functionDeclarations')!;
      if (w.kind(fns) !== T_ARRAY) decline();
      for (const f of w.children(fns)) {
        if (!w.isObj(f)) decline();
        const fm = camelOnly(w, f);
        if (fm.has('parametersJsonSchema') || fm.has('type')) decline();
        const start = out.at;
        const name = w.tool(f, false);
        chunks.push({ name, start, end: out.at });
      }
    }
  }
  const names = chunks.map((c) => c.name);
  sortedTools(out, chunks);
  out.bytes(L.close);
  return finish(out, 'gemini' as BuiltinProvider, list.count, names, small);
}

/** One Gemini part, written in the shared form: NONE, PART, or RESULT for a function result. */
function geminiPart(w: Walk, p: number, calls: Calls): number {
  const out = w.out;
  const kind = w.kind(p);
  if (kind === T_STRING) {
    if (w.end(p) - w.start(p) === 2) return NONE;
    out.bytes(L.textOpen);
    w.raw(p);
    out.bytes(L.textClose);
    out.bytes(L.close);
    return PART;
  }
  if (kind !== T_OBJECT) {
    w.raw(p);
    return PART;
  }
  const m = camelOnly(w, p);
  // One of text, inlineData, fileData, functionCall, functionResponse (the reference copies any
  // second one as a member), beside thought (with text) and thoughtSignature.
  let held = 0;
  for (const k of m.names) {
    if (!GEMINI_PART_KNOWN.has(k)) decline();
    if (k !== 'thought' && k !== 'thoughtSignature') held++;
  }
  if (held !== 1) decline();
  const text = m.get('text');
  if (text !== undefined) {
    if (w.kind(text) !== T_STRING) decline();
    const thought = m.get('thought');
    const empty = w.end(text) - w.start(text) === 2;
    if (thought !== undefined && w.kind(thought) === T_TRUE) {
      out.bytes(G.thinkingOpen);
      if (!empty) {
        out.byte(COMMA);
        out.bytes(L.thinkingKey);
        w.raw(text);
      }
      out.bytes(L.close);
      return PART;
    }
    if (empty) return NONE;
    out.bytes(L.textOpen);
    w.raw(text);
    out.bytes(L.textClose);
    out.bytes(L.close);
    return PART;
  }
  if (m.has('thought')) decline();
  const call = m.get('functionCall');
  if (call !== undefined && w.isObj(call)) {
    const cm = camelOnly(w, call);
    for (const k of cm.names) if (k !== 'name' && k !== 'args' && k !== 'id') decline();
    const name = cm.get('name');
    const id = cm.get('id');
    if (name === undefined || w.kind(name) !== T_STRING || (id !== undefined && w.kind(id) !== T_STRING)) decline();
    out.bytes(L.callOpen);
    out.bytes(quotedId(calls.call(w.str(name), id === undefined ? undefined : w.str(id))!));
    out.byte(COMMA);
    out.bytes(L.nameKey);
    w.raw(name);
    const args = cm.get('args');
    if (args !== undefined && w.kind(args) !== T_NULL) {
      out.byte(COMMA);
      out.bytes(L.argumentsKey);
      w.raw(args);
    }
    out.bytes(L.close);
    return PART;
  }
  const result = m.get('functionResponse');
  if (result !== undefined && w.isObj(result)) {
    const rm = camelOnly(w, result);
    for (const k of rm.names) if (k !== 'name' && k !== 'response' && k !== 'id') decline();
    const name = rm.get('name');
    const id = rm.get('id');
    if (name === undefined || w.kind(name) !== T_STRING || (id !== undefined && w.kind(id) !== T_STRING)) decline();
    const paired = calls.response(w.str(name), id === undefined ? undefined : w.str(id));
    out.bytes(L.resultOpen);
    out.bytes(quotedId(paired.id!));
    if (!paired.paired) {
      out.byte(COMMA);
      out.bytes(L.nameKey);
      w.raw(name);
    }
    out.byte(COMMA);
    out.bytes(L.contentKey);
    out.bytes(L.openArr);
    // resultValue(): `{ output }`, `{ result }` or `{ content }` alone (beside a `name`) is that value.
    let value = rm.get('response');
    if (value !== undefined && w.isObj(value)) {
      const vm = w.members(value);
      const own = vm.names.filter((k) => k !== 'name');
      if (own.length === 1 && (own[0] === 'output' || own[0] === 'result' || own[0] === 'content')) value = vm.get(own[0]!);
    }
    if (value !== undefined && w.kind(value) !== T_NULL) {
      if (w.kind(value) === T_STRING) {
        if (w.end(value) - w.start(value) > 2) {
          out.bytes(L.textOpen);
          w.raw(value);
          out.bytes(L.textClose);
          out.bytes(L.close);
        }
      } else if (w.empty(value)) {
        out.bytes(G.jsonEmpty);
      } else {
        out.bytes(G.jsonOpen);
        w.raw(value);
        out.bytes(L.close);
      }
    }
    out.bytes(L.closeArr);
    out.bytes(L.close);
    return RESULT;
  }
  const media = m.get('inlineData') ?? m.get('fileData');
  if (media !== undefined && w.isObj(media)) {
    const inline = m.has('inlineData');
    const dm = camelOnly(w, media);
    for (const k of dm.names) if (k !== 'mimeType' && k !== (inline ? 'data' : 'fileUri')) decline();
    const given: Record<string, unknown> = {};
    for (let j = 0; j < dm.names.length; j++) set(given, dm.names[j]!, w.value(dm.recs[j]!));
    w.emit(mediaPart(given, inline));
    return PART;
  }
  decline();
}
