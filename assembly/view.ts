// The normalized request view of a request body, written from the structural index (tape.ts)
// inside the core: the messages as `{"messages":[...]` and the tools as `,"tools":[...]` (an
// embeddings body's inputs as `{"input":[...]`), in the form src/match/raw-keys/chat.ts writes
// them. The messages come out as canonical text where this can vouch for it (see `canon` below;
// values the body spelled otherwise are made canonical where they land) with each message's
// start recorded, so the caller hashes them where they lie; anything else goes through the
// canonical writer (json.ts) whole.
//
// Why here and not in TypeScript: on a 36 KB, 50-message body the TypeScript walk over the
// index cost ~70-80 us of the ~180 us a new body took (a few hundred small calls, member
// tables and strings per body), while hashing alone is ~65 us on node:crypto's SHA-NI. The same
// walk over the index records in linear memory writes the view in ~12 us.
//
// This is a third copy of the message, part and tool rules, so it handles only the common
// constructs and declines the rest (status V_DECLINED): the TypeScript walk of raw-keys/chat.ts,
// itself held to the reference normalizer (normalize.ts) by differential tests, then takes the
// body. Declined, among others: LangChain messages, Responses server items, the Vercel AI SDK's
// tool-call / tool-result parts and jsonSchema() wrappers, escaped member names where a name is
// looked at, escaped strings that must be compared (roles, types, call ids, tool names), tool
// names outside ASCII (sorted by UTF-16 code units in the reference), non-string call ids,
// results whose call id no call of the body has (dangling: the reference keeps those as given),
// arguments text that is not an object or array, and, in the Gemini and Converse shapes, member
// names inherited from Object.prototype. Attachment parts (images, audio, files), whose rules
// decode and hash their data, are left as holes: a 0x00 byte in the output (never in JSON text)
// and the part's byte range, for the caller to fill with the reference's part.

import { canonicalAt, compareKeys, ensureMemory, RESULT } from "./json";
import { writeCanonicalNumber } from "./number";
import { hashBytes } from "./tape";

const NODE: usize = 32;
const T_NULL: u32 = 1;
const T_TRUE: u32 = 3;
const T_NUMBER: u32 = 4;
const T_STRING: u32 = 5;
const T_ARRAY: u32 = 6;
const T_OBJECT: u32 = 7;
const F_ESCAPED: u32 = 0x100;
const F_KEY_ESCAPED: u32 = 0x200;
const F_CHECK_KEYS: u32 = 0x400;
const F_ODD_ESCAPE: u32 = 0x800; // an escape RFC 8785 spells otherwise (tape.ts)
const NONE: u32 = 0xffffffff;

// Providers, as src/match/raw-keys/core.ts numbers them (0 = detect).
const P_CHAT: i32 = 1;
const P_RESPONSES: i32 = 2;
const P_EMBEDDINGS: i32 = 3;
const P_ANTHROPIC: i32 = 4;
const P_GENERIC: i32 = 5;
// Shapes of provider modules on their routes (raw-keys/converse.ts, raw-keys/gemini.ts).
const P_CONVERSE: i32 = 6;
const P_GEMINI: i32 = 7;
// An Ollama /api/chat body (raw-keys/ollama.ts): the chat rules with Ollama's for calls, tool
// messages and thinking text; `system` and `functions` are options there, not the conversation.
const P_OLLAMA: i32 = 8;

// Status of view().
const V_OK: i32 = 0;
const V_DECLINED: i32 = 1;
const V_MEMORY: i32 = 2;

// Part kinds (raw-keys/chat.ts part()).
const K_NONE: i32 = 0;
const K_PART: i32 = 1;
const K_RESULT: i32 = 2;

// Skip sets of rest().
const S_NONE: i32 = 0;
const S_TYPE: i32 = 1;
const S_TOOL_USE: i32 = 2;
const S_RESULT: i32 = 3;
const S_THINKING: i32 = 4;
const S_CALL: i32 = 5;
const S_IMAGE_URL: i32 = 6;
const S_IMAGE_PART: i32 = 7;
const S_TOOL: i32 = 8;
const S_TOOL_DEF: i32 = 9;
const S_MESSAGE: i32 = 10;

// The body and its records (set by view()).
let A: usize = 0; // body
let B: usize = 0; // records
let o: usize = 0; // output cursor
let outLimit: usize = 0;
let bad = false; // declined: every function returns as soon as it sees it
let ollama = false; // writing an Ollama body's view (P_OLLAMA)

// Whether the messages written so far are RFC 8785 text as they stand (chat family and Ollama):
// then the caller hashes them where they are (the message starts below) without the canonical
// writer's second pass over the view. Anything this cannot vouch for cheaply clears it.
let canon = true;
let keyP: usize = 0; // the last member name rest() wrote or was told of (its bytes), for the order check
let keyN: usize = 0;
let allCanon = true; // every message so far is canonical as written, or was made so in place
let startsP: usize = 0; // offset of each message's first byte from the output's start
let outStart: usize = 0; // the output's start
let startCount: u32 = 0;
let splitRecorded = false; // message() recorded the starts of the messages it split into
let holed = false; // the message being written has a hole (the caller canonicalizes it once filled)
let holedOdd = false; // a message with a hole is not canonical but for its holes (see RESULT + 120)

// Scratch regions after the records, sized by the record count (see view()).
let haveP: usize = 0; // names already in the object being written: {ptr u32, len u32} entries
let haveTop: u32 = 0;
let idsP: usize = 0; // call ids seen: {ptr u32, len u32, called u32} (ID_STRIDE bytes), numbered by position
const ID_STRIDE: usize = 12;
let idCount: u32 = 0;
let idSlots: usize = 0; // open addressing by a hash of the id's bytes: id number + 1, 0 = free
let idMask: u32 = 0;
let rangesP: usize = 0; // a message's parts: {start u32, end u32, kind u32}
let rangeCount: u32 = 0;
let holesP: usize = 0; // {start u32, end u32} body ranges of hole parts
let holeCount: u32 = 0;
let chunksP: usize = 0; // tools: {start u32, end u32, nameRec u32}
let chunkCount: u32 = 0;
let sortP: usize = 0; // tool chunk order
let openP: usize = 0; // Gemini calls not answered yet: {name record u32, id record u32 (NONE: none), id number u32}
let openCount: u32 = 0;
let cutStart: u32 = 0; // a value of the top level the caller leaves out (Converse: toolConfig.tools), body offsets
let cutEnd: u32 = 0;

// What the last message written was, for call() (raw-keys/chat.ts `last`).
let lastSet = false;
let lastAssistant = false;
let lastJoinable = false;
let lastEmpty = false;
let lastTail: usize = 0; // bytes from the closing `]` of its content to its end (a joining call goes before them)

// Member names as UTF-8 (the `have` list holds byte ranges).
const NAMES: usize = memory.data(256);
let namesTop: usize = NAMES;
function u8name(s: string): u64 {
  const p = namesTop;
  for (let i = 0; i < s.length; i++) store<u8>(p + <usize>i, <u8>s.charCodeAt(i));
  namesTop += <usize>s.length;
  return (<u64>p << 32) | <u64>s.length;
}
const N_CONTENT = u8name("content");
const N_ROLE = u8name("role");
const N_TYPE = u8name("type");
const N_ID = u8name("id");
const N_NAME = u8name("name");
const N_ARGUMENTS = u8name("arguments");
const N_ARGUMENTS_TEXT = u8name("argumentsText");
const N_KIND = u8name("kind");
const N_IMAGE = u8name("image");
const N_THINKING = u8name("thinking");
const N_IS_ERROR = u8name("is_error");
const N_DESCRIPTION = u8name("description");
const N_PARAMETERS = u8name("parameters");
const N_LEGACY = u8name("legacy");
const N_TEXT = u8name("text");
const N_TOOL_USE_ID = u8name("tool_use_id");
const N_TOOL_CALL_ID = u8name("tool_call_id");
const N_CALL_ID = u8name("call_id");

// --- records

@inline function rec(i: u32): usize { return B + <usize>i * NODE; }
@inline function kindOf(i: u32): u32 { return load<u32>(rec(i)) & 0xff; }
@inline function startOf(i: u32): usize { return A + <usize>load<u32>(rec(i) + 4); }
@inline function endOf(i: u32): usize { return A + <usize>load<u32>(rec(i) + 8); }
@inline function nextOf(i: u32): u32 { return load<u32>(rec(i) + 12); }
@inline function isObj(i: u32): bool { return i != NONE && kindOf(i) == T_OBJECT; }

/**
 * Whether the bytes at p (n of them) spell the ASCII string s. Four bytes at a time, widened to
 * the literal's UTF-16 units.
 */
function spells(p: usize, n: usize, s: string): bool {
  if (n != <usize>s.length) return false;
  const q = changetype<usize>(s);
  let j: usize = 0;
  for (; j + 4 <= n; j += 4) {
    const b = <u64>load<u32>(p + j);
    const wide = (b & 0xff) | ((b & 0xff00) << 8) | ((b & 0xff0000) << 16) | ((b & 0xff000000) << 24);
    if (wide != load<u64>(q + (j << 1))) return false;
  }
  for (; j < n; j++) if (<u32>load<u8>(p + j) != <u32>load<u16>(q + (j << 1))) return false;
  return true;
}

// The index's hash of ASCII literals (tape.ts hashBytes(), as it hashes member names), by their
// address: 2048 slots of {address u32, hash u32} (a slot by a multiplicative hash of the
// address: ~60 literals a request; with 64 slots they kept evicting each other, and a
// small body's key spent ~5% of its instructions hashing them again), and room to write a
// literal's bytes.
const HASH_SLOTS: usize = memory.data(2048 * 8, 8);
const HASH_BYTES: usize = memory.data(256, 8);

function literalHash(s: string): u32 {
  const ptr = changetype<usize>(s);
  const slot = HASH_SLOTS + <usize>((<u32>ptr * 0x9e3779b1) >> 21) * 8;
  if (load<u32>(slot) == <u32>ptr) return load<u32>(slot + 4);
  const n = s.length < 256 ? s.length : 256; // names looked up are short; a longer one only hashes less
  for (let i = 0; i < n; i++) store<u8>(HASH_BYTES + <usize>i, <u8>s.charCodeAt(i));
  const h = hashBytes(HASH_BYTES, HASH_BYTES + <usize>n);
  store<u32>(slot, <u32>ptr);
  store<u32>(slot + 4, h);
  return h;
}

/**
 * The member of object o named s, or NONE. An escaped name cannot be compared: declines. Names
 * whose hash (the index's, for names up to 64 bytes) differs are passed over unread.
 */
function get(ob: u32, s: string): u32 {
  const stop = nextOf(ob);
  const h = literalHash(s);
  for (let c = ob + 1; c < stop; c = nextOf(c)) {
    const r = rec(c);
    if ((load<u32>(r) & F_KEY_ESCAPED) != 0) { bad = true; return NONE; }
    const kh = load<u32>(r + 24);
    if (kh != 0 && kh != h) continue;
    const ks = A + <usize>load<u32>(r + 16) + 1;
    if (spells(ks, A + <usize>load<u32>(r + 20) - 1 - ks, s)) return c;
  }
  return NONE;
}

/** Whether the n bytes at p are the n bytes at q: eight at a time (reading up to 7 past both). */
@inline function sameBytes(p: usize, q: usize, n: usize): bool {
  for (let j: usize = 0; j < n; j += 8) {
    let x = load<u64>(p + j) ^ load<u64>(q + j);
    if (j + 8 > n) x &= (<u64>1 << (<u64>(n - j) << 3)) - 1;
    if (x != 0) return false;
  }
  return true;
}

@inline function has(ob: u32, s: string): bool {
  return get(ob, s) != NONE;
}

// The names rest() passes over or refuses and the members message() looks at, by the index's
// hash of their bytes (as literalHash() hashes them): 256 slots of {hash u32, bits u32, length
// u32, 1 u32, the name's bytes (names of up to NAME_MAX bytes)}, open addressing. A member's
// name is then classified by one look-up and a compare of its bytes eight at a time, instead of
// a compare with each of ~40 literals (rest()), and a message's members found in one walk
// instead of one walk per name (message()).
const NAME_SLOTS: usize = memory.data(256 * 64, 8);
const NAME_MAX: i32 = 48;
let namesReady = false;
// bits: 1 << S_* for the skip sets of rest() the name is in, and:
const M_OLLAMA: u32 = 1 << 11; // in S_MESSAGE for an Ollama body only
const M_CACHE: u32 = 1 << 12; // cache_control: never copied
const M_INHERITED: u32 = 1 << 13; // inherited from Object.prototype: the provider shapes' members() declines
const M_ANTHROPIC: u32 = 1 << 14; // a root member that says Anthropic (detect())
const M_CHAT: u32 = 1 << 15; // a root member that says OpenAI chat (detect())
// in bits 16..19, a member message() looks at: its slot + 1; and in bits 20..25, a name the
// provider shapes (Gemini, Converse) look at: its code (C_*, members()).
const M_SLOT_SHIFT: u32 = 16;
const SLOT_LC: u32 = 0;
const SLOT_LC_NAMESPACE: u32 = 1;
const SLOT_TYPE: u32 = 2;
const SLOT_ROLE: u32 = 3;
const SLOT_CONTENT: u32 = 4;
const SLOT_TOOL_CALL_ID: u32 = 5;
const SLOT_TOOL_CALLS: u32 = 6;
const SLOT_FUNCTION_CALL: u32 = 7;
const SLOTS: usize = memory.data(8 * 4, 4); // the members message() looks at (NONE: absent)

const S_ALL_TYPE: u32 = (1 << S_TYPE) | (1 << S_TOOL_USE) | (1 << S_RESULT) | (1 << S_THINKING) | (1 << S_CALL) |
  (1 << S_IMAGE_PART) | (1 << S_TOOL) | (1 << S_TOOL_DEF) | (1 << S_MESSAGE);

function addName(s: string, bits: u32): void {
  const h = literalHash(s);
  let slot = (h * 0x9e3779b1) >> 24;
  while (load<u32>(NAME_SLOTS + <usize>slot * 64 + 12) != 0) {
    const q = NAME_SLOTS + <usize>slot * 64;
    // A name added again (the shapes' codes below) gets the new bits too.
    if (load<u32>(q) == h && spells(q + 16, <usize>load<u32>(q + 8), s)) {
      store<u32>(q + 4, load<u32>(q + 4) | bits);
      return;
    }
    slot = (slot + 1) & 255;
  }
  const q = NAME_SLOTS + <usize>slot * 64;
  store<u32>(q, h);
  store<u32>(q + 4, bits);
  store<u32>(q + 8, <u32>s.length);
  store<u32>(q + 12, 1);
  for (let i = 0; i < s.length && i < NAME_MAX; i++) store<u8>(q + 16 + <usize>i, <u8>s.charCodeAt(i));
}

@inline function slotBits(k: u32): u32 {
  return (k + 1) << M_SLOT_SHIFT;
}

/** Fills the name table (once per instance). A name added twice has the bits of both. */
function initNames(): void {
  namesReady = true;
  addName("type", S_ALL_TYPE | slotBits(SLOT_TYPE));
  addName("input", 1 << S_TOOL_USE);
  addName("tool_use_id", 1 << S_RESULT);
  addName("is_error", 1 << S_RESULT);
  addName("signature", 1 << S_THINKING);
  addName("index", 1 << S_CALL);
  addName("url", 1 << S_IMAGE_URL);
  addName("image_url", 1 << S_IMAGE_PART);
  addName("function", 1 << S_TOOL);
  addName("input_schema", 1 << S_TOOL_DEF);
  addName("inputSchema", 1 << S_TOOL_DEF);
  addName("tool_calls", (1 << S_MESSAGE) | slotBits(SLOT_TOOL_CALLS));
  addName("function_call", (1 << S_MESSAGE) | M_CHAT | slotBits(SLOT_FUNCTION_CALL));
  addName("tool_call_id", (1 << S_MESSAGE) | slotBits(SLOT_TOOL_CALL_ID));
  // The reference's message noise (bookkeeping, not content).
  addName("id", 1 << S_MESSAGE);
  addName("status", 1 << S_MESSAGE);
  addName("timestamp", 1 << S_MESSAGE);
  addName("created", 1 << S_MESSAGE);
  addName("created_at", 1 << S_MESSAGE);
  addName("createdAt", 1 << S_MESSAGE);
  addName("updated_at", 1 << S_MESSAGE);
  addName("updatedAt", 1 << S_MESSAGE);
  addName("request_id", 1 << S_MESSAGE);
  addName("requestId", 1 << S_MESSAGE);
  // Ollama's images, thinking and tool_name become parts and links, not members.
  addName("images", M_OLLAMA);
  addName("thinking", M_OLLAMA | M_ANTHROPIC);
  addName("tool_name", M_OLLAMA);
  addName("cache_control", M_CACHE);
  addName("constructor", M_INHERITED);
  addName("__proto__", M_INHERITED);
  addName("toString", M_INHERITED);
  addName("valueOf", M_INHERITED);
  addName("hasOwnProperty", M_INHERITED);
  addName("isPrototypeOf", M_INHERITED);
  addName("propertyIsEnumerable", M_INHERITED);
  addName("toLocaleString", M_INHERITED);
  addName("__defineGetter__", M_INHERITED);
  addName("__defineSetter__", M_INHERITED);
  addName("__lookupGetter__", M_INHERITED);
  addName("__lookupSetter__", M_INHERITED);
  addName("lc", slotBits(SLOT_LC));
  addName("lc_namespace", slotBits(SLOT_LC_NAMESPACE));
  addName("role", slotBits(SLOT_ROLE));
  addName("content", slotBits(SLOT_CONTENT));
  // detect()'s root members (normalize.ts detectProvider()).
  addName("system", M_ANTHROPIC);
  addName("stop_sequences", M_ANTHROPIC);
  addName("top_k", M_ANTHROPIC);
  addName("functions", M_CHAT);
  addName("max_completion_tokens", M_CHAT);
  addName("response_format", M_CHAT);
  addName("n", M_CHAT);
  addName("logit_bias", M_CHAT);
  addName("logprobs", M_CHAT);
  addName("top_logprobs", M_CHAT);
  addName("frequency_penalty", M_CHAT);
  addName("presence_penalty", M_CHAT);
  addName("reasoning_effort", M_CHAT);
  addName("modalities", M_CHAT);
  addName("audio", M_CHAT);
  addName("prediction", M_CHAT);
  addName("seed", M_CHAT);
  addName("parallel_tool_calls", M_CHAT);
  addName("stream_options", M_CHAT);
  addName("web_search_options", M_CHAT);
  // The provider shapes' names (members()), by their codes.
  addCode("role", C_ROLE);
  addCode("parts", C_PARTS);
  addCode("text", C_TEXT);
  addCode("thought", C_THOUGHT);
  addCode("thoughtSignature", C_THOUGHT_SIGNATURE);
  addCode("inlineData", C_INLINE_DATA);
  addCode("fileData", C_FILE_DATA);
  addCode("functionCall", C_FUNCTION_CALL);
  addCode("functionResponse", C_FUNCTION_RESPONSE);
  addCode("name", C_NAME);
  addCode("args", C_ARGS);
  addCode("id", C_ID);
  addCode("response", C_RESPONSE);
  addCode("output", C_OUTPUT);
  addCode("result", C_RESULT);
  addCode("content", C_CONTENT);
  addCode("mimeType", C_MIME_TYPE);
  addCode("data", C_DATA);
  addCode("fileUri", C_FILE_URI);
  addCode("systemInstruction", C_SYSTEM_INSTRUCTION);
  addCode("contents", C_CONTENTS);
  addCode("tools", C_TOOLS);
  addCode("generateContentRequest", C_GENERATE_CONTENT_REQUEST);
  addCode("functionDeclarations", C_FUNCTION_DECLARATIONS);
  addCode("parametersJsonSchema", C_PARAMETERS_JSON_SCHEMA);
  addCode("type", C_TYPE);
  addCode("cachePoint", C_CACHE_POINT);
  addCode("toolUse", C_TOOL_USE);
  addCode("toolResult", C_TOOL_RESULT);
  addCode("toolUseId", C_TOOL_USE_ID);
  addCode("input", C_INPUT);
  addCode("status", C_STATUS);
  addCode("toolSpec", C_TOOL_SPEC);
  addCode("description", C_DESCRIPTION);
  addCode("inputSchema", C_INPUT_SCHEMA);
  addCode("json", C_JSON);
  addCode("messages", C_MESSAGES);
  addCode("system", C_SYSTEM);
  addCode("toolConfig", C_TOOL_CONFIG);
}

/** The bits of the name of member record c (unescaped), at p (n bytes): 0 for a name not in the table. */
function nameBits(c: u32, p: usize, n: usize): u32 {
  const h = load<u32>(rec(c) + 24);
  if (h == 0) {
    // No hash (a name over 64 bytes, or one that hashes to 0): compared with every name.
    if (n > <usize>NAME_MAX) return 0;
    for (let q = NAME_SLOTS; q < NAME_SLOTS + 256 * 64; q += 64) {
      if (load<u32>(q + 12) != 0 && <usize>load<u32>(q + 8) == n && sameBytes(p, q + 16, n)) return load<u32>(q + 4);
    }
    return 0;
  }
  let slot = (h * 0x9e3779b1) >> 24;
  while (true) {
    const q = NAME_SLOTS + <usize>slot * 64;
    if (load<u32>(q + 12) == 0) return 0;
    if (load<u32>(q) == h && <usize>load<u32>(q + 8) == n && sameBytes(p, q + 16, n)) return load<u32>(q + 4);
    slot = (slot + 1) & 255;
  }
}

/**
 * One walk over the members of ob: the records of those message() looks at in SLOTS (NONE:
 * absent), and the bits of all its names OR'd together. An escaped name declines (every get()
 * over the object would meet it).
 */
function scan(ob: u32): u32 {
  for (let k: usize = 0; k < 8; k++) store<u32>(SLOTS + k * 4, NONE);
  let all: u32 = 0;
  others = 0;
  const kept = (1 << S_MESSAGE) | M_CACHE | (ollama ? M_OLLAMA : 0);
  const stop = nextOf(ob);
  for (let c = ob + 1; c < stop; c = nextOf(c)) {
    const r = rec(c);
    if ((load<u32>(r) & F_KEY_ESCAPED) != 0) { bad = true; return 0; }
    const p = A + <usize>load<u32>(r + 16) + 1;
    const n = A + <usize>load<u32>(r + 20) - 1 - p;
    // `role` and `content` (in every message) by their bytes as numbers, without the table.
    let bits: u32;
    if (n == 4 && load<u32>(p) == 0x656c6f72) bits = slotBits(SLOT_ROLE);
    else if (n == 7 && (load<u64>(p) & 0xffffffffffffff) == 0x746e65746e6f63) bits = slotBits(SLOT_CONTENT);
    else bits = nameBits(c, p, n);
    all |= bits;
    const k = (bits >> M_SLOT_SHIFT) & 15;
    if (k != 0) store<u32>(SLOTS + <usize>(k - 1) * 4, c);
    if ((bits & kept) == 0 && k != SLOT_ROLE + 1 && k != SLOT_CONTENT + 1) others++;
  }
  return all;
}

// Members of the object scan() walked last that message()'s rest() calls may copy: none of
// role, content, cache_control and the names S_MESSAGE skips.
let others: u32 = 0;

@inline function slot(k: u32): u32 {
  return load<u32>(SLOTS + <usize>k * 4);
}

// Codes of the names the provider shapes look at (bits 20..25 of the name table; 0: any other
// name). Gemini's:
const C_OTHER: u32 = 0;
const C_ROLE: u32 = 1;
const C_PARTS: u32 = 2;
const C_TEXT: u32 = 3;
const C_THOUGHT: u32 = 4;
const C_THOUGHT_SIGNATURE: u32 = 5;
const C_INLINE_DATA: u32 = 6;
const C_FILE_DATA: u32 = 7;
const C_FUNCTION_CALL: u32 = 8;
const C_FUNCTION_RESPONSE: u32 = 9;
const C_NAME: u32 = 10;
const C_ARGS: u32 = 11;
const C_ID: u32 = 12;
const C_RESPONSE: u32 = 13;
const C_OUTPUT: u32 = 14;
const C_RESULT: u32 = 15;
const C_CONTENT: u32 = 16;
const C_MIME_TYPE: u32 = 17;
const C_DATA: u32 = 18;
const C_FILE_URI: u32 = 19;
const C_SYSTEM_INSTRUCTION: u32 = 20;
const C_CONTENTS: u32 = 21;
const C_TOOLS: u32 = 22;
const C_GENERATE_CONTENT_REQUEST: u32 = 23;
const C_FUNCTION_DECLARATIONS: u32 = 24;
const C_PARAMETERS_JSON_SCHEMA: u32 = 25;
const C_TYPE: u32 = 26;
// Converse's:
const C_CACHE_POINT: u32 = 27;
const C_TOOL_USE: u32 = 28;
const C_TOOL_RESULT: u32 = 29;
const C_TOOL_USE_ID: u32 = 30;
const C_INPUT: u32 = 31;
const C_STATUS: u32 = 32;
const C_TOOL_SPEC: u32 = 33;
const C_DESCRIPTION: u32 = 34;
const C_INPUT_SCHEMA: u32 = 35;
const C_JSON: u32 = 36;
const C_MESSAGES: u32 = 37;
const C_SYSTEM: u32 = 38;
const C_TOOL_CONFIG: u32 = 39;
const M_CODE_SHIFT: u32 = 20;

function addCode(s: string, code: u32): void {
  addName(s, code << M_CODE_SHIFT);
}

/** The bit of a code in a mask of members(). */
@inline function bit(code: u32): u64 {
  return <u64>1 << <u64>code;
}

/**
 * The table bits of the name of member record c, at p (n bytes, unescaped), as far as the
 * provider shapes read them: its code at M_CODE_SHIFT, and M_INHERITED. One lookup gives both
 * (members() needs the two).
 */
@inline function nameCodeBits(c: u32, p: usize, n: usize): u32 {
  // The names of every message and part by their bytes as numbers, without the table.
  if (n == 4) {
    const x = load<u32>(p);
    if (x == 0x74786574) return C_TEXT << M_CODE_SHIFT;
    if (x == 0x656c6f72) return C_ROLE << M_CODE_SHIFT;
    if (x == 0x656d616e) return C_NAME << M_CODE_SHIFT;
  } else if (n == 5) {
    if (load<u32>(p) == 0x74726170 && load<u8>(p + 4) == 0x73) return C_PARTS << M_CODE_SHIFT;
  } else if (n == 7) {
    if ((load<u64>(p) & 0xffffffffffffff) == 0x746e65746e6f63) return C_CONTENT << M_CODE_SHIFT;
  }
  return nameBits(c, p, n);
}

/** The code of the name of member record c, at p (n bytes, unescaped). */
@inline function nameCode(c: u32, p: usize, n: usize): u32 {
  return (nameCodeBits(c, p, n) >> M_CODE_SHIFT) & 63;
}

/** The code of the name of member record c (an escaped name declines). */
function codeOf(c: u32): u32 {
  const r = rec(c);
  if ((load<u32>(r) & F_KEY_ESCAPED) != 0) { bad = true; return C_OTHER; }
  const p = A + <usize>load<u32>(r + 16) + 1;
  return nameCode(c, p, A + <usize>load<u32>(r + 20) - 1 - p);
}

// The records of the members of the object members() walked last, by their names' codes (valid
// where the code's bit is in the mask it returned), and how many members it has.
const CODES: usize = memory.data(64 * 4, 4);
let memberCount: u32 = 0;

/**
 * One walk over the members of ob for the provider shapes: each one's record in CODES under its
 * name's code, and the mask of the codes there (bit C_OTHER: some name without a code). An
 * escaped name declines, and with `camelOnly` so does a name with `_` (the reference camelCases
 * snake_case names); then it returns 0.
 */
function members(ob: u32, camelOnly: bool): u64 {
  let mask: u64 = 0;
  let n: u32 = 0;
  const stop = nextOf(ob);
  for (let c = ob + 1; c < stop; c = nextOf(c)) {
    const r = rec(c);
    if ((load<u32>(r) & F_KEY_ESCAPED) != 0) { bad = true; return 0; }
    const p = A + <usize>load<u32>(r + 16) + 1;
    const e = A + <usize>load<u32>(r + 20) - 1;
    const bits = nameCodeBits(c, p, e - p);
    const code = (bits >> M_CODE_SHIFT) & 63;
    // A name Object.prototype has (`__proto__`, `constructor`, ...) declines here: the provider
    // modules' JavaScript builds objects from member names (a Converse root `__proto__` once set
    // a prototype), so the TypeScript walk or the module's own normalizer keys such a body.
    if (code == C_OTHER && (bits & M_INHERITED) != 0) { bad = true; return 0; }
    // Every name with a code is camelCase.
    if (code == C_OTHER && camelOnly) {
      for (let q = p; q < e; q++) if (load<u8>(q) == 0x5f) { bad = true; return 0; }
    }
    store<u32>(CODES + <usize>code * 4, c);
    mask |= bit(code);
    n++;
  }
  memberCount = n;
  return mask;
}

/** The record of the member with the code in the mask members() returned last, or NONE. */
@inline function member(mask: u64, code: u32): u32 {
  return (mask & bit(code)) != 0 ? load<u32>(CODES + <usize>code * 4) : NONE;
}

/** Whether record i is the unescaped string s (an escaped one declines). */
function strIs(i: u32, s: string): bool {
  if (i == NONE || kindOf(i) != T_STRING) return false;
  if ((load<u32>(rec(i)) & F_ESCAPED) != 0) { bad = true; return false; }
  const p = startOf(i) + 1;
  return spells(p, endOf(i) - 1 - p, s);
}

/** Whether record i is a string (unescaped: an escaped one declines). */
function isStr(i: u32): bool {
  if (i == NONE || kindOf(i) != T_STRING) return false;
  if ((load<u32>(rec(i)) & F_ESCAPED) != 0) { bad = true; return false; }
  return true;
}

/** null, absent or []: the reference's empty(). */
function empty(i: u32): bool {
  if (i == NONE) return true;
  const k = kindOf(i);
  return k == T_NULL || (k == T_ARRAY && nextOf(i) == i + 1);
}

@inline function emptyString(i: u32): bool {
  return endOf(i) - startOf(i) == 2;
}

// --- output

// Room for the output. view() reserves it once for everything but copies of output already
// written (split messages repeat their members; the tools are copied in sorted order): every
// byte of the body is copied at most once, and what the walk writes itself is less than
// LITERALS_PER_RECORD bytes per record of the body (the longest, a chat tool message, writes
// `{"content":[{"content":[` and its closing `],"id":"call_<k>","type":"tool_result"}],
// "role":"tool"}`). Copies of output go through ownSpan(), which grows memory as it goes. A
// check on every write (inlined with the growing at every call site) had nearly doubled the
// module's size.
const LITERALS_PER_RECORD: usize = 256;
const SLACK: usize = 65536;

/** Makes room for n more output bytes, and SLACK more for the literals that follow. */
function room(n: usize): void {
  if (o + n + SLACK <= outLimit) return;
  if (!ensureMemory(o + n + 2 * SLACK)) {
    // Declined; later writes land in the room there is and are never read.
    bad = true;
    o = outLimit - n - SLACK;
    return;
  }
  outLimit = (<usize>memory.size()) << 16;
}

// Literals as bytes, by the address of their string (literals are static): 512 slots of {address
// u32, length u32, 56 bytes}; a literal is encoded the first time, or again after another took
// its slot.
const LIT_SLOTS: usize = memory.data(512 * 64, 8);
const LIT_MAX: i32 = 56;

/**
 * Writes an ASCII literal: its bytes copied from the slot it is kept in. A call, so that the
 * optimizer does not copy a loop into each of the ~50 places that write one (~3 KB of the module).
 */
function w(s: string): void {
  const ptr = changetype<usize>(s);
  const n = s.length;
  if (n > LIT_MAX) {
    o += String.UTF8.encodeUnsafe(ptr, n, o);
    return;
  }
  const slot = LIT_SLOTS + <usize>((<u32>ptr * 0x9e3779b1) >> 23) * 64;
  if (load<u32>(slot) != <u32>ptr) {
    store<u32>(slot, <u32>ptr);
    store<u32>(slot + 4, <u32>n);
    String.UTF8.encodeUnsafe(ptr, n, slot + 8);
  }
  // Eight bytes a step, past the literal's end by up to seven: room() keeps SLACK bytes after
  // o, and what lands past the literal is written over by whatever comes next (memory.copy
  // costs a call into the engine per literal, ~400 literals in an M body's view).
  for (let k: usize = 0; k < <usize>n; k += 8) store<u64>(o + k, load<u64>(slot + 8 + k));
  o += <usize>n;
}

@inline function byte(c: u8): void {
  store<u8>(o++, c);
}

function span(s: usize, e: usize): void {
  const n = e - s;
  memory.copy(o, s, n);
  o += n;
}

@inline function raw(i: u32): void {
  if (canon && !canonValue(i)) canonicalRaw(i);
  else span(startOf(i), endOf(i));
}

/**
 * A value of the body that is not canonical as it stands (members out of order, whitespace,
 * numbers in another spelling) is written in canonical form from its records (canonWrite());
 * where whole messages go through the canonical writer anyway (see allCanon), it is copied and
 * the message marked instead. What canonWrite() cannot vouch for is copied and run through the
 * canonical writer there and then, while it is the last thing written.
 */
function canonicalRaw(i: u32): void {
  const at = o;
  if (!allCanon) {
    span(startOf(i), endOf(i));
    canon = false;
    return;
  }
  if (canonWrite(i, 0)) return;
  o = at;
  orderTop = 0;
  span(startOf(i), endOf(i));
  canonicalize(at);
}

// --- RFC 8785 text as it stands

/**
 * Whether the name (p, n) sorts after (q, m) as RFC 8785 sorts names (by UTF-16 units: by bytes
 * for ASCII). Names that differ first outside ASCII answer false (the writer sorts them).
 */
function greater(p: usize, n: usize, q: usize, m: usize): bool {
  const k = n < m ? n : m;
  for (let j: usize = 0; j < k; j++) {
    const a = <u32>load<u8>(p + j);
    const b = <u32>load<u8>(q + j);
    if (a == b) continue;
    if ((a | b) >= 0x80) return false;
    return a > b;
  }
  return n > m;
}

/**
 * The byte order of the name (p, n) and the ASCII name (q, m): RFC 8785's order (UTF-16 units)
 * too, as the two differ only between two characters outside ASCII, and a unit outside ASCII
 * sorts after every ASCII one.
 */
@inline function byBytes(p: usize, n: usize, q: usize, m: usize): i32 {
  const k = n < m ? n : m;
  for (let j: usize = 0; j < k; j++) {
    const a = <i32>load<u8>(p + j);
    const b = <i32>load<u8>(q + j);
    if (a != b) return a - b;
  }
  return <i32>n - <i32>m;
}

/** Notes the literal member name (name) as the last one written, for rest()'s order check. */
@inline function keyAt(name: u64): void {
  keyP = <usize>(name >> 32);
  keyN = <usize>(<u32>name);
}

/** Whether the number at [s, e) is canonical as it stands: an integer of at most 15 digits, not -0. */
function canonNumber(s: usize, e: usize): bool {
  let p = s;
  if (load<u8>(p) == 0x2d) p++;
  const d = e - p;
  if (d == 0 || d > 15) return false;
  if (load<u8>(p) == 0x30) return d == 1 && p == s;
  for (let q = p; q < e; q++) if (<u32>load<u8>(q) - 0x30 >= 10) return false;
  return true;
}

/**
 * Whether the body's value i is RFC 8785 text as it stands: strings without odd escapes,
 * canonical integers, and arrays and objects without whitespace whose members are in order.
 */
function canonValue(i: u32): bool {
  const k = kindOf(i);
  if (k == T_STRING) return (load<u32>(rec(i)) & F_ODD_ESCAPE) == 0;
  if (k == T_NUMBER) return canonNumber(startOf(i), endOf(i));
  if (k != T_ARRAY && k != T_OBJECT) return true; // null, false, true
  const obj = k == T_OBJECT;
  const stop = nextOf(i);
  let at = startOf(i) + 1;
  let pk: usize = 0;
  let pn: usize = 0;
  for (let c = i + 1; c < stop; c = nextOf(c)) {
    if (c > i + 1) {
      if (load<u8>(at) != 0x2c) return false;
      at++;
    }
    if (obj) {
      const r = rec(c);
      if ((load<u32>(r) & F_KEY_ESCAPED) != 0) return false;
      const ks = A + <usize>load<u32>(r + 16);
      const ke = A + <usize>load<u32>(r + 20);
      if (ks != at || load<u8>(ke) != 0x3a) return false;
      if (c > i + 1 && !greater(ks + 1, ke - ks - 2, pk, pn)) return false;
      pk = ks + 1;
      pn = ke - ks - 2;
      at = ke + 1;
    }
    if (startOf(c) != at || !canonValue(c)) return false;
    at = endOf(c);
  }
  return at + 1 == endOf(i);
}

/**
 * The first quote, backslash or control character at or after p, or a position at or after e
 * where there is none before e: 16 bytes a step in the SIMD build (reading up to 15 past e).
 */
@inline function stopAt(p: usize, e: usize): usize {
  if (ASC_FEATURE_SIMD) {
    while (true) {
      const v = v128.load(p);
      const stops = <u32>i8x16.bitmask(v128.or(v128.or(i8x16.eq(v, i8x16.splat(0x22)), i8x16.eq(v, i8x16.splat(0x5c))), i8x16.lt_u(v, i8x16.splat(0x20))));
      if (stops != 0) return p + <usize>ctz(stops);
      p += 16;
      if (p >= e) return p;
    }
  } else {
    while (p < e) {
      const c = <u32>load<u8>(p);
      if (c == 0x22 || c == 0x5c || c < 0x20) break;
      p++;
    }
  }
  return p;
}

/**
 * The end of the canonical string at p (its quote) before e, or 0: only RFC 8785's escapes.
 * Reads up to 15 bytes past e (output text: room() keeps slack after it).
 */
function canonString(p: usize, e: usize): usize {
  p++;
  while (true) {
    p = stopAt(p, e);
    if (p >= e) return 0;
    const c = <u32>load<u8>(p);
    if (c == 0x22) return p + 1;
    if (c < 0x20 || p + 1 >= e) return 0;
    const d = <u32>load<u8>(p + 1);
    if (!(d == 0x22 || d == 0x5c || d == 0x62 || d == 0x66 || d == 0x6e || d == 0x72 || d == 0x74)) return 0;
    p += 2;
  }
  return 0; // not reached (the scalar build's flow analysis asks for it)
}

/**
 * Replaces the JSON text the view wrote last, [s, o), by its canonical form (the canonical
 * writer, run on it where it is); text that is not I-JSON (arguments text) declines.
 */
function canonicalize(s: usize): void {
  if (canonicalAt(s, <u32>(o - s)) != 0) { bad = true; return; }
  const n = <usize>load<u32>(RESULT + 16);
  memory.copy(s, <usize>load<u32>(RESULT + 12), n);
  o = s + n;
  room(0);
}

// --- RFC 8785 text written without the canonical writer

// Each object canonWrite() and textWrite() are writing keeps its members here while it writes
// them (nested objects above it): canonWrite() the member records in name order (u32 each),
// textWrite() {name address, name length, chunk start, chunk end} (4 x u32) in text order.
const ORDER_MAX: u32 = 4096;
const ORDER: usize = memory.data(<i32>ORDER_MAX * 4, 8);
let orderTop: u32 = 0;
const CANON_DEPTH: i32 = 64; // deeper values are left to the canonical writer

/** Copies [s, e) to the output: short spans a word at a time (room() keeps slack after o). */
@inline function copyOut(s: usize, e: usize): void {
  const n = e - s;
  if (n > 32) {
    memory.copy(o, s, n);
  } else {
    for (let k: usize = 0; k < n; k += 8) store<u64>(o + k, load<u64>(s + k));
  }
  o += n;
}

/** A number [s, e) in RFC 8785's spelling (the canonical writer's number writer); false if it overflows. */
function numberOut(s: usize, e: usize): bool {
  if (canonNumber(s, e)) {
    copyOut(s, e);
    return true;
  }
  room(32);
  const n = writeCanonicalNumber(s, <i32>(e - s), o);
  if (n < 0) return false;
  o += <usize>n;
  return true;
}

@inline function nameP(c: u32): usize { return A + <usize>load<u32>(rec(c) + 16) + 1; }
@inline function nameN(c: u32): usize { return A + <usize>load<u32>(rec(c) + 20) - 1 - nameP(c); }

/**
 * Writes the canonical form of the body's value i at o from its records, as the canonical
 * writer would write its text: members sorted by name (UTF-16 order: compareKeys), strings
 * without odd escapes and literals as they stand, numbers through the canonical number writer.
 * Returns false where it does not vouch for the result (odd escapes, escaped names, deep
 * nesting), its output then partial; the index has already refused duplicate names.
 */
function canonWrite(i: u32, depth: i32): bool {
  const r = rec(i);
  const k = load<u32>(r) & 0xff;
  if (k == T_NUMBER) return numberOut(startOf(i), endOf(i));
  if (k == T_STRING && (load<u32>(r) & F_ODD_ESCAPE) != 0) return false;
  if (k != T_ARRAY && k != T_OBJECT) {
    copyOut(startOf(i), endOf(i));
    return true;
  }
  if (depth >= CANON_DEPTH) return false;
  const stop = nextOf(i);
  if (k == T_ARRAY) {
    byte(0x5b);
    for (let c = i + 1; c < stop; c = nextOf(c)) {
      if (c > i + 1) byte(0x2c);
      if (!canonWrite(c, depth + 1)) return false;
    }
    byte(0x5d);
    return true;
  }
  // The member records in name order (insertion sort: objects here have few members).
  const base = orderTop;
  let n: u32 = 0;
  for (let c = i + 1; c < stop; c = nextOf(c)) {
    if ((load<u32>(rec(c)) & F_KEY_ESCAPED) != 0 || base + n == ORDER_MAX) return false;
    const p = nameP(c);
    const pn = <u32>nameN(c);
    let j = n;
    while (j > 0) {
      const d = load<u32>(ORDER + <usize>(base + j - 1) * 4);
      if (compareKeys(nameP(d), <u32>nameN(d), p, pn) < 0) break;
      store<u32>(ORDER + <usize>(base + j) * 4, d);
      j--;
    }
    store<u32>(ORDER + <usize>(base + j) * 4, c);
    n++;
  }
  orderTop = base + n;
  byte(0x7b);
  for (let j: u32 = 0; j < n; j++) {
    if (j > 0) byte(0x2c);
    const c = load<u32>(ORDER + <usize>(base + j) * 4);
    copyOut(A + <usize>load<u32>(rec(c) + 16), A + <usize>load<u32>(rec(c) + 20));
    byte(0x3a);
    if (!canonWrite(c, depth + 1)) return false;
  }
  orderTop = base;
  byte(0x7d);
  return true;
}

/** The first byte at or after p (before e) that is not JSON whitespace. */
function ws(p: usize, e: usize): usize {
  while (p < e) {
    const c = <u32>load<u8>(p);
    if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) break;
    p++;
  }
  return p;
}

/**
 * Writes the canonical form of the JSON value at p (before e; text the view wrote, such as
 * arguments text) at o, as the canonical writer would write it; returns the position after the
 * value, or 0 where it does not vouch for the result (odd escapes, escaped names, duplicate
 * names, deep nesting, text that is not JSON), its output then partial.
 */
function textWrite(p: usize, e: usize, depth: i32): usize {
  if (p >= e) return 0;
  const c = <u32>load<u8>(p);
  if (c == 0x22) {
    const q = canonString(p, e);
    if (q != 0) copyOut(p, q);
    return q;
  }
  if (c == 0x7b || c == 0x5b) {
    if (depth >= CANON_DEPTH) return 0;
    const obj = c == 0x7b;
    const close: u32 = obj ? 0x7d : 0x5d;
    byte(<u8>c);
    p = ws(p + 1, e);
    if (p < e && <u32>load<u8>(p) == close) {
      byte(<u8>close);
      return p + 1;
    }
    const base = orderTop;
    const contentStart = o;
    let n: u32 = 0;
    let sorted = true;
    while (true) {
      if (n > 0) byte(0x2c);
      let m: usize = 0;
      if (obj) {
        if (p >= e || load<u8>(p) != 0x22 || base + n + 4 > ORDER_MAX) return 0;
        // A plain name: its bytes are its UTF-8 (an escaped one is left to the canonical writer).
        const q = stopAt(p + 1, e);
        if (q >= e || load<u8>(q) != 0x22) return 0;
        m = ORDER + <usize>(base + n) * 4;
        store<u32>(m, <u32>(p + 1));
        store<u32>(m + 4, <u32>(q - p - 1));
        store<u32>(m + 8, <u32>o);
        if (n > 0) {
          const cmp = compareKeys(<usize>load<u32>(m - 16), load<u32>(m - 12), p + 1, <u32>(q - p - 1));
          if (cmp == 0) return 0;
          if (cmp > 0) sorted = false;
        }
        copyOut(p, q + 1);
        byte(0x3a);
        p = ws(q + 1, e);
        if (p >= e || load<u8>(p) != 0x3a) return 0;
        p = ws(p + 1, e);
        orderTop = base + n + 4;
      }
      p = textWrite(p, e, depth + 1);
      if (p == 0) return 0;
      if (obj) store<u32>(m + 12, <u32>o);
      n += obj ? 4 : 1;
      p = ws(p, e);
      if (p >= e) return 0;
      const d = <u32>load<u8>(p);
      if (d == close) break;
      if (d != 0x2c) return 0;
      p = ws(p + 1, e);
    }
    orderTop = base;
    if (!sorted && !sortChunks(base, n >> 2, contentStart)) return 0;
    byte(<u8>close);
    return p + 1;
  }
  if (c == 0x74) {
    if (p + 4 > e || load<u32>(p) != 0x65757274) return 0; // true
    copyOut(p, p + 4);
    return p + 4;
  }
  if (c == 0x6e) {
    if (p + 4 > e || load<u32>(p) != 0x6c6c756e) return 0; // null
    copyOut(p, p + 4);
    return p + 4;
  }
  if (c == 0x66) {
    if (p + 5 > e || load<u32>(p + 1) != 0x65736c61) return 0; // false
    copyOut(p, p + 5);
    return p + 5;
  }
  // A number, by JSON's grammar.
  let q = p;
  if (load<u8>(q) == 0x2d) q++;
  if (q >= e) return 0;
  const d = <u32>load<u8>(q);
  if (d == 0x30) q++;
  else if (d - 0x31 < 9) {
    q++;
    while (q < e && <u32>load<u8>(q) - 0x30 < 10) q++;
  } else return 0;
  if (q < e && load<u8>(q) == 0x2e) {
    q++;
    if (q >= e || <u32>load<u8>(q) - 0x30 >= 10) return 0;
    while (q < e && <u32>load<u8>(q) - 0x30 < 10) q++;
  }
  if (q < e && (load<u8>(q) | 0x20) == 0x65) {
    q++;
    if (q < e && (load<u8>(q) == 0x2b || load<u8>(q) == 0x2d)) q++;
    if (q >= e || <u32>load<u8>(q) - 0x30 >= 10) return 0;
    while (q < e && <u32>load<u8>(q) - 0x30 < 10) q++;
  }
  return numberOut(p, q) ? q : 0;
}

/**
 * Puts the n member chunks textWrite() wrote from contentStart (entries at ORDER + base * 4)
 * in name order: sorted, then copied past the output and back. False for a duplicate name.
 */
function sortChunks(base: u32, n: u32, contentStart: usize): bool {
  const t = ORDER + <usize>base * 4;
  for (let k: u32 = 1; k < n; k++) {
    const x = t + <usize>k * 16;
    const xp = load<u64>(x);
    const xc = load<u64>(x + 8);
    let j = k;
    while (j > 0) {
      const y = t + <usize>(j - 1) * 16;
      const cmp = compareKeys(<usize>load<u32>(y), load<u32>(y + 4), <usize>(<u32>xp), <u32>(xp >> 32));
      if (cmp == 0) return false;
      if (cmp < 0) break;
      store<u64>(y + 16, load<u64>(y));
      store<u64>(y + 24, load<u64>(y + 8));
      j--;
    }
    store<u64>(t + <usize>j * 16, xp);
    store<u64>(t + <usize>j * 16 + 8, xc);
  }
  // Copied past the output with a gap of a word: copyOut() writes up to 7 bytes past a chunk.
  const len = o - contentStart;
  room(len + 8);
  if (bad) return false;
  memory.copy(o + 8, contentStart, len);
  const delta = o + 8 - contentStart;
  o = contentStart;
  for (let k: u32 = 0; k < n; k++) {
    const x = t + <usize>k * 16;
    if (k > 0) byte(0x2c);
    const s = <usize>load<u32>(x + 8) + delta;
    copyOut(s, <usize>load<u32>(x + 12) + delta);
  }
  return true;
}

/**
 * Replaces the JSON text the view wrote last, [s, o), by its canonical form: textWrite() where
 * it vouches for it, else the canonical writer (canonicalize()).
 */
function canonicalizeText(s: usize): void {
  const e = o;
  const q = textWrite(ws(s, e), e, 0);
  orderTop = 0;
  if (q != 0 && ws(q, e) == e) {
    const n = o - e;
    memory.copy(s, e, n);
    o = s + n;
    return;
  }
  o = e;
  canonicalize(s);
}

/**
 * message() for a message of the list, with its start recorded where message() did not record
 * it; a message written in no canonical form is made canonical in place, except where a later
 * call may still join it (Responses input: the join needs its layout) or it was split (each
 * part a message of its own): there the whole view goes through the canonical writer.
 */
function listed(m: u32, responses: bool, comma: bool): i32 {
  const at = o + (comma ? 1 : 0);
  splitRecorded = false;
  canon = true;
  holed = false;
  const k = message(m, responses, comma);
  if (bad) return 0;
  if (holed && !canon) holedOdd = true;
  if (k == 1 && !splitRecorded) {
    messageAt(at);
    if (!canon && allCanon && !holed) {
      if (responses) allCanon = false;
      else canonicalize(at);
    }
  } else if (!canon) {
    allCanon = false;
  }
  return k;
}

/** A message written from `at` as one (the system prompt, a text input): canonical in place if need be. */
function whole(at: usize): void {
  messageAt(at);
  if (holed && !canon) holedOdd = true;
  if (!canon && allCanon && !holed) canonicalize(at);
  canon = true;
  holed = false;
}

/** Records that a message starts at output address `at` (as an offset from the output's start). */
@inline function messageAt(at: usize): void {
  store<u32>(startsP + <usize>startCount * 4, <u32>(at - outStart));
  startCount++;
}

/** A comma, unless the object being written has no member yet. */
@inline function sep(): void {
  if (load<u8>(o - 1) != 0x7b) byte(0x2c);
}

// --- the `have` list: names the object being written has (a stack: parts nest)

function havePush(name: u64): void {
  store<u32>(haveP + <usize>haveTop * 8, <u32>(name >> 32));
  store<u32>(haveP + <usize>haveTop * 8 + 4, <u32>name);
  haveTop++;
}

function haveHas(from: u32, p: usize, n: usize): bool {
  for (let h = from; h < haveTop; h++) {
    const q = haveP + <usize>h * 8;
    if (<usize>load<u32>(q + 4) == n && memory.compare(<usize>load<u32>(q), p, n) == 0) return true;
  }
  return false;
}

@inline function haveHasName(from: u32, name: u64): bool {
  return haveHas(from, <usize>(name >> 32), <usize>(<u32>name));
}

/**
 * The reference's rest(): the members of ob the output does not have yet, minus skipped ones,
 * cache_control and empty values, as written in the body; each added to `have` (from `from`).
 */
function rest(ob: u32, from: u32, skip: i32, lo: u64 = 0, hi: u64 = 0): void {
  const stop = nextOf(ob);
  // cache_control and the skip set's names (S_NONE: bit 0, which no name has).
  const skipBits = M_CACHE | (<u32>1 << <u32>skip) | (skip == S_MESSAGE && ollama ? M_OLLAMA : 0);
  for (let c = ob + 1; c < stop; c = nextOf(c)) {
    const r = rec(c);
    if ((load<u32>(r) & F_KEY_ESCAPED) != 0) { bad = true; return; }
    const ks = A + <usize>load<u32>(r + 16);
    const ke = A + <usize>load<u32>(r + 20);
    const p = ks + 1;
    const n = ke - 1 - p;
    // Only the names after `lo` and before `hi` (0: no bound), where the caller copies a
    // message's members in pieces around the names it writes itself. In RFC 8785's order, so
    // that every name lands in one piece, names outside ASCII included (see byBytes()).
    if (lo != 0 && byBytes(p, n, <usize>(lo >> 32), <usize>(<u32>lo)) <= 0) continue;
    if (hi != 0 && byBytes(p, n, <usize>(hi >> 32), <usize>(<u32>hi)) >= 0) continue;
    if (haveHas(from, p, n)) continue;
    const bits = nameBits(c, p, n);
    // A name Object.prototype has (`constructor`, `__proto__`, ...) is copied like any other:
    // the reference's rest() skips only the names its output has as own members.
    if ((bits & skipBits) != 0 || empty(c)) continue;
    if (canon && !greater(p, n, keyP, keyN)) canon = false;
    keyP = p;
    keyN = n;
    sep();
    span(ks, ke);
    byte(0x3a);
    raw(c);
    havePush((<u64>p << 32) | <u64>n);
  }
}

// --- call ids: "call_<k>" for the k-th distinct id

/** The number of a call's own id in record i, or -1 for absent / null (non-strings decline). */
function id(i: u32): i32 {
  return numbered(i, true);
}

/**
 * The number of a result's reference to a call (the reference's Ids.ref()): numbered as id()
 * numbers it, but it does not make the id a call's. A reference whose call is not in the body
 * (dangling) keeps its id as given in the reference's second pass: see dangling().
 */
function ref(i: u32): i32 {
  return numbered(i, false);
}

function numbered(i: u32, call: bool): i32 {
  if (i == NONE || kindOf(i) == T_NULL) return -1;
  if (!isStr(i)) { bad = true; return -1; }
  const p = startOf(i) + 1;
  const n = endOf(i) - 1 - p;
  // A hash table, not a scan of the ids seen: a long agent conversation has thousands.
  let h = load<u32>(rec(i) + 28); // the index's hash (hashBytes()) of strings up to 64 bytes; FNV-1a below for longer ones
  if (h == 0) {
    h = 0x811c9dc5;
    for (let q = p; q < p + n; q++) h = (h ^ <u32>load<u8>(q)) * 0x01000193;
  }
  let slot = h & idMask;
  while (true) {
    const v = load<u32>(idSlots + <usize>slot * 4);
    if (v == 0) break;
    const q = idsP + <usize>(v - 1) * ID_STRIDE;
    if (<usize>load<u32>(q + 4) == n && memory.compare(<usize>load<u32>(q), p, n) == 0) {
      if (call) store<u32>(q + 8, 1);
      return <i32>(v - 1);
    }
    slot = (slot + 1) & idMask;
  }
  const q = idsP + <usize>idCount * ID_STRIDE;
  store<u32>(q, <u32>p);
  store<u32>(q + 4, <u32>n);
  store<u32>(q + 8, call ? 1 : 0);
  idCount++;
  store<u32>(idSlots + <usize>slot * 4, idCount);
  return <i32>(idCount - 1);
}

/**
 * Whether a result refers to an id no call of the body has, other than one spelled `call_<digits>`
 * (the reference's Ids.dangling()). The reference keeps such ids as given, in a second pass over
 * the messages this view does not make: the body is declined to it.
 */
function dangling(): bool {
  for (let k: u32 = 0; k < idCount; k++) {
    const q = idsP + <usize>k * ID_STRIDE;
    if (load<u32>(q + 8) != 0) continue;
    // The bytes as written: an escape in them is no positional spelling here, so such an id
    // declines (the reference decodes it first; declining is always safe).
    const p = <usize>load<u32>(q);
    const n = <usize>load<u32>(q + 4);
    let positional = n > 5 && load<u8>(p) == 0x63 && load<u8>(p + 1) == 0x61 && load<u8>(p + 2) == 0x6c && load<u8>(p + 3) == 0x6c && load<u8>(p + 4) == 0x5f;
    for (let j: usize = 5; positional && j < n; j++) {
      const c = load<u8>(p + j);
      if (c < 0x30 || c > 0x39) positional = false;
    }
    if (!positional) return true;
  }
  return false;
}

/** `"call_<k>"` */
function quotedId(k: i32): void {
  w("\"call_");
  // Decimal digits of k (a call id number is far below 10^10).
  let d: u32 = 1;
  while (<u32>k / d >= 10) d *= 10;
  while (d > 0) {
    store<u8>(o++, <u8>(0x30 + (<u32>k / d) % 10));
    d /= 10;
  }
  byte(0x22);
}

function putId(name: u64, key: string, k: i32): void {
  if (k < 0) return;
  sep();
  w(key);
  quotedId(k);
  havePush(name);
}

/** `put(out, k, copy(v))` for a member that is there. */
function putRaw(name: u64, key: string, v: u32): void {
  if (v == NONE) return;
  sep();
  w(key);
  raw(v);
  havePush(name);
}

/** The reference's keep(): null and [] are absent. */
function keep(name: u64, key: string, v: u32): void {
  if (!empty(v)) putRaw(name, key, v);
}

function putNotNull(name: u64, key: string, v: u32): void {
  if (v != NONE && kindOf(v) != T_NULL) putRaw(name, key, v);
}

/**
 * setArguments(): arguments that are JSON data are copied; arguments text that opens an object
 * or array is unescaped into the view (the canonical writer then parses it, and a text that is
 * not I-JSON fails there, which sends the body to the reference). Any other text declines.
 */
function setArguments(v: u32): void {
  if (v == NONE || kindOf(v) == T_NULL) return;
  if (kindOf(v) != T_STRING) {
    putRaw(N_ARGUMENTS, "\"arguments\":", v);
    return;
  }
  const s = startOf(v) + 1;
  const e = endOf(v) - 1;
  let i = s;
  while (i < e) {
    const c = load<u8>(i);
    if (c == 0x20) i++;
    else if (c == 0x5c && (load<u8>(i + 1) == 0x6e || load<u8>(i + 1) == 0x74 || load<u8>(i + 1) == 0x72)) i += 2;
    else break;
  }
  if (i >= e || (load<u8>(i) != 0x7b && load<u8>(i) != 0x5b)) { bad = true; return; }
  sep();
  w("\"arguments\":");
  const text = o;
  let k = s;
  if (ASC_FEATURE_SIMD) {
    // 16 bytes a step, up to the next backslash (arguments text has one every ~20 bytes:
    // its quotes); the step is stored whole, the output room has the slack for it.
    const bslash = i8x16.splat(0x5c);
    while (k + 16 <= e) {
      const v = v128.load(k);
      v128.store(o, v);
      const bits = i8x16.bitmask(i8x16.eq(v, bslash));
      if (bits == 0) {
        k += 16;
        o += 16;
        continue;
      }
      const n = <usize>ctz(bits);
      o += n;
      k += n + 1;
      const d = load<u8>(k++);
      if (d == 0x75) { bad = true; return; } // \u: the TypeScript walk decodes it
      store<u8>(o++, d == 0x6e ? 0x0a : d == 0x74 ? 0x09 : d == 0x72 ? 0x0d : d == 0x62 ? 0x08 : d == 0x66 ? 0x0c : d);
    }
  }
  while (k < e) {
    const c = load<u8>(k++);
    if (c != 0x5c) {
      store<u8>(o++, c);
      continue;
    }
    const d = load<u8>(k++);
    if (d == 0x75) { bad = true; return; } // \u: the TypeScript walk decodes it
    store<u8>(o++, d == 0x6e ? 0x0a : d == 0x74 ? 0x09 : d == 0x72 ? 0x0d : d == 0x62 ? 0x08 : d == 0x66 ? 0x0c : d);
  }
  // Arguments text is the model's JSON: made canonical here, where it is short and alone.
  if (canon && allCanon) canonicalizeText(text);
  havePush(N_ARGUMENTS);
}

// --- parts

/** Whether the string record i starts with `data:` (any case). */
function isDataUrl(i: u32): bool {
  const p = startOf(i) + 1;
  if (endOf(i) - 1 - p < 5) return false;
  return (load<u8>(p) | 0x20) == 0x64 && (load<u8>(p + 1) | 0x20) == 0x61 && (load<u8>(p + 2) | 0x20) == 0x74 &&
    (load<u8>(p + 3) | 0x20) == 0x61 && load<u8>(p + 4) == 0x3a;
}

/** /^(data:|[a-z][a-z0-9+.-]*:\/\/)/i on the string record i. */
function urlLike(i: u32): bool {
  if (isDataUrl(i)) return true;
  const p = startOf(i) + 1;
  const e = endOf(i) - 1;
  if (p >= e || <u32>((load<u8>(p) | 0x20) - 0x61) >= 26) return false;
  let q = p + 1;
  while (q < e) {
    const c = <u32>load<u8>(q);
    if (<u32>((c | 0x20) - 0x61) < 26 || c - 0x30 < 10 || c == 0x2b || c == 0x2e || c == 0x2d) q++;
    else break;
  }
  return q + 3 <= e && load<u8>(q) == 0x3a && load<u8>(q + 1) == 0x2f && load<u8>(q + 2) == 0x2f;
}

/** A part the reference normalizes (attachments): a hole for the caller to fill. */
function hole(p: u32): i32 {
  // Filled by the caller with the reference's part, which then canonicalizes the message whole.
  holed = true;
  byte(0);
  store<u32>(holesP + <usize>holeCount * 8, load<u32>(rec(p) + 4));
  store<u32>(holesP + <usize>holeCount * 8 + 4, load<u32>(rec(p) + 8));
  holeCount++;
  return K_PART;
}

/**
 * Writes the parts of v (comma-separated, after `prior` parts already written); returns how
 * many; with `ranges`, records them.
 */
function content(v: u32, ranges: bool, prior: i32 = 0): i32 {
  if (v == NONE || kindOf(v) == T_NULL) return 0;
  let n: i32 = 0;
  const arr = kindOf(v) == T_ARRAY;
  const stop = arr ? nextOf(v) : v + 1;
  for (let p = arr ? v + 1 : v; p < stop; p = arr ? nextOf(p) : stop) {
    const mark = o;
    if (n + prior > 0) byte(0x2c);
    const start = o;
    const kind = part(p);
    if (bad) return n;
    if (kind == K_NONE) {
      o = mark;
      continue;
    }
    n++;
    if (ranges) {
      const q = rangesP + <usize>rangeCount * 12;
      store<u32>(q, <u32>start);
      store<u32>(q + 4, <u32>o);
      store<u32>(q + 8, <u32>kind);
      rangeCount++;
    }
  }
  return n;
}

function isTextType(t: u32): bool {
  return strIs(t, "text") || strIs(t, "input_text") || strIs(t, "output_text");
}

function isAttachmentType(t: u32): bool {
  return strIs(t, "input_image") || strIs(t, "image") || strIs(t, "input_audio") || strIs(t, "audio") || strIs(t, "file") ||
    strIs(t, "input_file") || strIs(t, "document");
}

/** One part: K_NONE (no part), K_PART, or K_RESULT for a tool result. */
function part(p: u32): i32 {
  const k = kindOf(p);
  if (k == T_STRING) {
    if (emptyString(p)) return K_NONE;
    w("{\"text\":");
    raw(p);
    w(",\"type\":\"text\"}");
    return K_PART;
  }
  if (k != T_OBJECT) {
    raw(p);
    return K_PART;
  }
  const type = get(p, "type");
  if (bad) return K_NONE;
  const from = haveTop;
  if (isTextType(type)) {
    const text = get(p, "text");
    if (text == NONE || kindOf(text) == T_NULL || (kindOf(text) == T_STRING && emptyString(text))) return K_NONE;
    w("{\"text\":");
    raw(text);
    w(",\"type\":\"text\"");
    havePush(N_TYPE);
    havePush(N_TEXT);
    keyAt(N_TYPE);
    rest(p, from, S_TYPE);
    haveTop = from;
    byte(0x7d);
    return K_PART;
  }
  if (isAttachmentType(type)) return hole(p);
  if (strIs(type, "tool-call") || strIs(type, "tool-result")) { bad = true; return K_NONE; }
  const imageUrl = strIs(type, "image_url");
  if (imageUrl && !plainImageUrl(p)) return hole(p);
  if (bad) return K_NONE;
  byte(0x7b);
  let kind = K_PART;
  if (imageUrl) {
    writeImageUrl(p, from);
  } else if (strIs(type, "tool_use") || strIs(type, "tool_call")) {
    // In canonical member order (arguments, id, name, type), so the canonical writer need not
    // sort the part; the members rest() copies follow.
    if (strIs(type, "tool_use")) {
      setArguments(get(p, "input"));
    } else {
      // Arguments are data: [] is a value here, only null is no arguments.
      putNotNull(N_ARGUMENTS, "\"arguments\":", get(p, "arguments"));
      putNotNull(N_ARGUMENTS_TEXT, "\"argumentsText\":", get(p, "argumentsText"));
    }
    putId(N_ID, "\"id\":", id(get(p, "id")));
    keep(N_NAME, "\"name\":", get(p, "name"));
    sep();
    w("\"type\":\"tool_call\"");
    havePush(N_TYPE);
    keyAt(N_TYPE);
    rest(p, from, S_TOOL_USE);
  } else if (strIs(type, "tool_result")) {
    // In canonical member order (content, id, is_error, type); the id is numbered before the
    // content's own ids, as the reference numbers them.
    const tu = get(p, "tool_use_id");
    const k = ref(tu == NONE || kindOf(tu) == T_NULL ? get(p, "id") : tu);
    w("\"content\":[");
    content(get(p, "content"), false);
    byte(0x5d);
    havePush(N_CONTENT);
    putId(N_ID, "\"id\":", k);
    const err = get(p, "is_error");
    if (err != NONE && load<u8>(startOf(err)) == 0x74) {
      w(",\"is_error\":true");
      havePush(N_IS_ERROR);
    }
    w(",\"type\":\"tool_result\"");
    havePush(N_TYPE);
    keyAt(N_TYPE);
    rest(p, from, S_RESULT);
    kind = K_RESULT;
  } else if (strIs(type, "thinking")) {
    // thinking, type: canonical order.
    keep(N_THINKING, "\"thinking\":", get(p, "thinking"));
    sep();
    w("\"type\":\"thinking\"");
    havePush(N_TYPE);
    keyAt(N_TYPE);
    rest(p, from, S_THINKING);
  } else if (strIs(type, "function_call")) {
    canon = false; // type, name, arguments: the writer sorts them
    w("\"type\":\"function_call\"");
    havePush(N_TYPE);
    keep(N_NAME, "\"name\":", get(p, "name"));
    putNotNull(N_ARGUMENTS, "\"arguments\":", get(p, "arguments"));
    rest(p, from, S_TYPE);
  } else {
    other(p, type, from);
  }
  haveTop = from;
  byte(0x7d);
  return kind;
}

/** Whether an image_url part is written here: no data: URL, no image_url object without a url. */
function plainImageUrl(p: u32): bool {
  let url = get(p, "image_url");
  if (isObj(url)) {
    url = get(url, "url");
    if (url == NONE || kindOf(url) != T_STRING) return false;
  }
  if (url == NONE || kindOf(url) != T_STRING) return true;
  if (!isStr(url)) return false;
  return !isDataUrl(url);
}

/** OpenAI chat image_url parts with a URL or path. */
function writeImageUrl(p: u32, from: u32): void {
  const iu = get(p, "image_url");
  havePush(N_TYPE);
  havePush(N_IMAGE);
  let url = iu;
  let inner = NONE;
  if (isObj(iu)) {
    inner = iu;
    url = get(iu, "url");
  }
  // In canonical member order: the members rest() copies (from the image_url object, then
  // the part) that sort before `image`, the image, those between it and `type`, the type, those
  // after it (as message() writes its pieces; `detail` goes first).
  keyN = 0;
  if (inner != NONE) rest(inner, from, S_IMAGE_URL, 0, N_IMAGE);
  rest(p, from, S_IMAGE_PART, 0, N_IMAGE);
  if (url != NONE && !empty(url)) {
    sep();
    w("\"image\":");
    if (kindOf(url) == T_STRING) {
      if (!isStr(url)) return;
      w(urlLike(url) ? "{\"url\":" : "{\"path\":");
      raw(url);
      byte(0x7d);
    } else {
      raw(url);
    }
  }
  keyAt(N_IMAGE);
  if (inner != NONE) rest(inner, from, S_IMAGE_URL, N_IMAGE, N_TYPE);
  rest(p, from, S_IMAGE_PART, N_IMAGE, N_TYPE);
  sep();
  w("\"type\":\"image\"");
  keyAt(N_TYPE);
  if (inner != NONE) rest(inner, from, S_IMAGE_URL, N_TYPE);
  rest(p, from, S_IMAGE_PART, N_TYPE);
}

/** /(tool_use|_call)$/ on the type string (absent: ""). */
function callType(type: u32): bool {
  if (!isStr(type)) return false;
  const p = startOf(type) + 1;
  const n = endOf(type) - 1 - p;
  return (n >= 8 && spells(p + n - 8, 8, "tool_use")) || (n >= 5 && spells(p + n - 5, 5, "_call"));
}

/** Whether a type names an output item (`custom_tool_call_output`, ...): its `call_id` is a reference. */
function outputType(type: u32): bool {
  if (!isStr(type)) return false;
  const p = startOf(type) + 1;
  const n = endOf(type) - 1 - p;
  return n >= 7 && spells(p + n - 7, 7, "_output");
}

/** A part of another type: the reference's other(). */
function other(p: u32, type: u32, from: u32): void {
  canon = false; // ids and members in no known order: the writer sorts them
  // tool_use_id, tool_call_id and an output item's call_id are results' references.
  putId(N_TOOL_USE_ID, "\"tool_use_id\":", ref(get(p, "tool_use_id")));
  putId(N_TOOL_CALL_ID, "\"tool_call_id\":", ref(get(p, "tool_call_id")));
  putId(N_CALL_ID, "\"call_id\":", outputType(type) ? ref(get(p, "call_id")) : id(get(p, "call_id")));
  if (callType(type)) putId(N_ID, "\"id\":", id(get(p, "id")));
  rest(p, from, S_NONE);
}

function toolCall(c: u32): void {
  if (kindOf(c) != T_OBJECT) {
    raw(c);
    return;
  }
  if (ollama) {
    ollamaCall(c);
    return;
  }
  const from = haveTop;
  const type = get(c, "type");
  byte(0x7b);
  if (type == NONE || kindOf(type) == T_NULL || strIs(type, "function")) {
    // In canonical member order (arguments, id, name, type): nothing for the writer to sort.
    const f = get(c, "function");
    if (isObj(f)) setArguments(get(f, "arguments"));
    putId(N_ID, "\"id\":", id(get(c, "id")));
    if (isObj(f)) keep(N_NAME, "\"name\":", get(f, "name"));
    sep();
    w("\"type\":\"tool_call\"");
  } else {
    canon = false; // type, id, kind: the writer sorts them
    w("\"type\":\"tool_call\"");
    havePush(N_TYPE);
    putId(N_ID, "\"id\":", id(get(c, "id")));
    putRaw(N_KIND, "\"kind\":", type);
    rest(c, from, S_CALL);
  }
  haveTop = from;
  byte(0x7d);
}

// --- Ollama's rules (src/providers/ollama.ts chatMessages(), raw-keys/ollama.ts)

/**
 * An Ollama call, rewritten as { id, type: "function", function: { name, arguments } } (its
 * other members dropped): an absent or null id is a positional id no other id equals (a fresh
 * number); the call is open for a tool message to answer by its name.
 */
function ollamaCall(c: u32): void {
  const idRec = get(c, "id");
  const f = get(c, "function");
  if (bad) return;
  let k: i32;
  if (idRec == NONE || kindOf(idRec) == T_NULL) k = freshId();
  else if (kindOf(idRec) == T_STRING) k = id(idRec);
  else { bad = true; return; } // a non-string id: numbered by value in the reference
  const name = isObj(f) ? get(f, "name") : NONE;
  const q = openP + <usize>openCount * 12;
  store<u32>(q, name);
  store<u32>(q + 8, <u32>k);
  openCount++;
  // arguments, id, name, type: canonical order.
  const from = haveTop;
  byte(0x7b);
  havePush(N_TYPE);
  if (isObj(f)) setArguments(get(f, "arguments"));
  putId(N_ID, "\"id\":", k);
  keep(N_NAME, "\"name\":", name);
  haveTop = from;
  sep();
  w("\"type\":\"tool_call\"}");
}

/**
 * The call number a tool message of an Ollama body answers (the first open call its
 * `tool_name` names, or the first open call without one), taken off the open calls; -1 for
 * none. Declines what becomes parts or members of its own: non-empty images, thinking that is
 * not text, a kept tool_name.
 */
function ollamaAnswer(i: u32, role: u32): i32 {
  const images = get(i, "images");
  if (images != NONE && kindOf(images) == T_ARRAY && !empty(images)) { bad = true; return -1; }
  const thinking = get(i, "thinking");
  if (thinking != NONE && kindOf(thinking) != T_NULL && kindOf(thinking) != T_STRING) { bad = true; return -1; }
  const name = get(i, "tool_name");
  const tc = get(i, "tool_call_id");
  if (bad) return -1;
  if (!strIs(role, "tool")) {
    if (name != NONE) bad = true; // kept as a member
    return -1;
  }
  if (tc != NONE && kindOf(tc) != T_NULL) return -1; // linked by its own id; tool_name dropped
  const any = name == NONE || kindOf(name) == T_NULL;
  if (!any && !isStr(name)) { bad = true; return -1; }
  for (let k: u32 = 0; k < openCount; k++) {
    const q = openP + <usize>k * 12;
    const callName = load<u32>(q);
    if (!any) {
      if (callName == NONE || kindOf(callName) != T_STRING) continue;
      // Equal text in other spellings compares equal in the reference: escaped names decline.
      if ((load<u32>(rec(callName)) & F_ESCAPED) != 0) { bad = true; return -1; }
      if (!sameString(callName, name)) continue;
    }
    const number = <i32>load<u32>(q + 8);
    memory.copy(q, q + 12, <usize>(openCount - k - 1) * 12);
    openCount--;
    return number;
  }
  if (name != NONE) bad = true; // kept as a member
  return -1;
}

/** An Ollama message's thinking text as its first part (recorded as a range); returns the parts written. */
function ollamaThinking(i: u32): i32 {
  const t = get(i, "thinking");
  if (t == NONE || kindOf(t) != T_STRING || emptyString(t)) return 0;
  const s = o;
  w("{\"thinking\":");
  raw(t);
  w(",\"type\":\"thinking\"}");
  pushRange(s, o, K_PART);
  return 1;
}

// --- messages

function setLast(assistant: bool, joinable: bool, isEmpty: bool, tail: usize): void {
  lastSet = true;
  lastTail = tail;
  lastAssistant = assistant;
  lastJoinable = joinable;
  lastEmpty = isEmpty;
}

/**
 * One message (or Responses item); returns how many messages it became (a user message with
 * tool results is split), 0 if it joined the assistant message before it. Every message
 * written has `content` last, so a joining call goes in before its closing `]}`.
 */
function message(i: u32, responses: bool, comma: bool): i32 {
  if (kindOf(i) != T_OBJECT) { bad = true; return 0; }
  scan(i);
  if (bad) return 0;
  if (slot(SLOT_LC) != NONE || slot(SLOT_LC_NAMESPACE) != NONE) { bad = true; return 0; }
  // Taken before anything below walks another object.
  const type = slot(SLOT_TYPE);
  const role = slot(SLOT_ROLE);
  const contentRec = slot(SLOT_CONTENT);
  const tc = slot(SLOT_TOOL_CALL_ID);
  const calls = slot(SLOT_TOOL_CALLS);
  const fc = slot(SLOT_FUNCTION_CALL);
  // Whether the message has members the rest() calls below may copy (none in most messages).
  const copies = others != 0;
  if (role == NONE && type != NONE && kindOf(type) == T_STRING && !strIs(type, "message")) {
    if (strIs(type, "function_call")) return call(i, responses, comma);
    if (comma) byte(0x2c);
    if (strIs(type, "function_call_output")) return callOutput(i);
    bad = true; // server items, item references: the TypeScript walk
    return 0;
  }
  const answer = ollama ? ollamaAnswer(i, role) : -1;
  if (bad) return 0;
  if (!responses && answer < 0 && plainMessage(i, role, contentRec, comma)) return 1;
  if (bad) return 0;
  if (comma) byte(0x2c);
  // In canonical member order: the members rest() copies that sort before `content`, the
  // content, those between it and the role, the role, those after it (each piece in body order:
  // the order check below catches a body that has them unsorted).
  const start = o;
  const user = !empty(role) && strIs(role, "user");
  const assistant = !empty(role) && strIs(role, "assistant");
  const from = haveTop;
  havePush(N_CONTENT);
  if (!empty(role)) havePush(N_ROLE);
  byte(0x7b);
  const preStart = o;
  keyN = 0;
  if (copies) rest(i, from, S_MESSAGE, 0, N_CONTENT);
  const preEnd = o;
  if (preEnd > preStart) byte(0x2c);
  w("\"content\":[");
  const partsStart = o;
  rangeCount = 0;
  const resultId = answer >= 0 ? answer : tc == NONE || kindOf(tc) == T_NULL ? -1 : ref(tc);
  if (resultId >= 0) w("{\"content\":[");
  let n = ollama ? ollamaThinking(i) : 0;
  n += content(contentRec, true, n);
  if (bad) return 0;
  if (calls != NONE && kindOf(calls) == T_ARRAY) {
    if (ollama) openCount = 0; // only the last assistant turn's calls are answered
    const stop = nextOf(calls);
    for (let c = calls + 1; c < stop; c = nextOf(c)) {
      if (n++ > 0) byte(0x2c);
      const s = o;
      toolCall(c);
      pushRange(s, o, K_PART);
    }
  }
  if (isObj(fc)) {
    if (n++ > 0) byte(0x2c);
    const s = o;
    // arguments, name, type: canonical order.
    byte(0x7b);
    const f2 = haveTop;
    havePush(N_TYPE);
    setArguments(get(fc, "arguments"));
    keep(N_NAME, "\"name\":", get(fc, "name"));
    haveTop = f2;
    sep();
    w("\"type\":\"function_call\"}");
    pushRange(s, o, K_PART);
  }
  if (resultId >= 0) {
    w("],\"id\":");
    quotedId(resultId);
    w(",\"type\":\"tool_result\"}");
    rangeCount = 0;
    pushRange(partsStart, o, K_RESULT);
  }
  byte(0x5d);
  // The members after the content: each written with its leading comma.
  const membersStart = o;
  keyAt(N_CONTENT);
  if (empty(role)) {
    if (copies) rest(i, from, S_MESSAGE, N_CONTENT);
  } else {
    if (copies) rest(i, from, S_MESSAGE, N_CONTENT, N_ROLE);
    w(",\"role\":");
    raw(role);
    keyAt(N_ROLE);
    if (copies) rest(i, from, S_MESSAGE, N_ROLE);
  }
  haveTop = from;
  const membersEnd = o;
  byte(0x7d);
  if (bad) return 0;

  let split = false;
  if (user) for (let r: u32 = 0; r < rangeCount; r++) if (load<u32>(rangesP + <usize>r * 12 + 8) == <u32>K_RESULT) split = true;
  if (!split) {
    setLast(assistant, true, rangeCount == 0, o - (membersStart - 1));
    return 1;
  }
  // Runs of other parts keep the message's members; each tool result becomes a tool message.
  // Each one's start is recorded where it lands once moved to `start`.
  const asm = o;
  splitRecorded = true;
  let count: i32 = 0;
  let run: i32 = -1;
  for (let r: i32 = 0; r <= <i32>rangeCount; r++) {
    const isResult = r < <i32>rangeCount && load<u32>(rangesP + <usize>r * 12 + 8) == <u32>K_RESULT;
    if (r < <i32>rangeCount && !isResult) {
      if (run < 0) run = r;
      continue;
    }
    if (run >= 0) {
      if (count++ > 0) byte(0x2c);
      messageAt(start + (o - asm));
      byte(0x7b);
      if (preEnd > preStart) {
        ownSpan(preStart, preEnd);
        byte(0x2c);
      }
      w("\"content\":[");
      for (let q = run; q < r; q++) {
        if (q > run) byte(0x2c);
        ownSpan(<usize>load<u32>(rangesP + <usize>q * 12), <usize>load<u32>(rangesP + <usize>q * 12 + 4));
      }
      byte(0x5d);
      ownSpan(membersStart, membersEnd);
      byte(0x7d);
      run = -1;
    }
    if (isResult) {
      if (count++ > 0) byte(0x2c);
      messageAt(start + (o - asm));
      w("{\"content\":[");
      ownSpan(<usize>load<u32>(rangesP + <usize>r * 12), <usize>load<u32>(rangesP + <usize>r * 12 + 4));
      w("],\"role\":\"tool\"}");
    }
  }
  if (bad) return 0;
  memory.copy(start, asm, o - asm);
  o = start + (o - asm);
  setLast(false, true, false, 0);
  return count;
}

function pushRange(s: usize, e: usize, kind: i32): void {
  const q = rangesP + <usize>rangeCount * 12;
  store<u32>(q, <u32>s);
  store<u32>(q + 4, <u32>e);
  store<u32>(q + 8, <u32>kind);
  rangeCount++;
}

/** Appends a copy of output bytes already written (room() never moves them: memory only grows). */
function ownSpan(s: usize, e: usize): void {
  room(e - s);
  memory.copy(o, s, e - s);
  o += e - s;
}

/**
 * `{"role": "<string>", "content": "<string>"}` and nothing else, in canonical member order.
 * Not for Responses input (see message()).
 */
function plainMessage(i: u32, role: u32, content: u32, comma: bool): bool {
  if (nextOf(i) != i + 3) return false;
  if (role == NONE || content == NONE || kindOf(role) != T_STRING || kindOf(content) != T_STRING) return false;
  if (comma) byte(0x2c);
  w("{\"content\":[");
  const isEmpty = emptyString(content);
  if (!isEmpty) {
    w("{\"text\":");
    raw(content);
    w(",\"type\":\"text\"}");
  }
  w("],\"role\":");
  raw(role);
  byte(0x7d);
  // Never joined (see above), but kept as message() would set it.
  setLast(strIs(role, "assistant"), false, isEmpty, 0);
  return true;
}

/** A Responses function_call item: an assistant message, or joined to the one before. */
function call(i: u32, responses: bool, comma: bool): i32 {
  const join = responses && comma && lastSet && lastAssistant;
  if (join && !lastJoinable) { bad = true; return 0; }
  const partStart = o;
  if (join) {
    if (!lastEmpty) byte(0x2c);
  } else {
    if (comma) byte(0x2c);
    w("{\"content\":[");
  }
  // arguments, id, name, type: canonical order.
  const from = haveTop;
  byte(0x7b);
  havePush(N_TYPE);
  setArguments(get(i, "arguments"));
  putId(N_ID, "\"id\":", id(get(i, "call_id")));
  keep(N_NAME, "\"name\":", get(i, "name"));
  haveTop = from;
  sep();
  w("\"type\":\"tool_call\"}");
  if (join) {
    // Into the message before, ahead of what follows its content's closing `]`:
    // [tail][part] becomes [part][tail].
    const tailStart = partStart - lastTail;
    const partLen = o - partStart;
    room(lastTail);
    memory.copy(o, tailStart, lastTail);
    memory.copy(tailStart, partStart, partLen + lastTail);
    o = tailStart + partLen + lastTail;
    setLast(true, true, false, lastTail);
    return 0;
  }
  w("],\"role\":\"assistant\"}");
  setLast(true, true, false, 21); // `],"role":"assistant"}`
  return 1;
}

function callOutput(i: u32): i32 {
  // The id is numbered before the output's own ids, as the reference numbers them.
  const k = ref(get(i, "call_id"));
  w("{\"content\":[{\"content\":[");
  content(get(i, "output"), false);
  byte(0x5d);
  if (k >= 0) {
    w(",\"id\":");
    quotedId(k);
  }
  w(",\"type\":\"tool_result\"}],\"role\":\"tool\"}");
  setLast(false, true, false, 0);
  return 1;
}

/** A prompt string (Responses `input`, generic `prompt`) as a user message. */
function userText(i: u32): i32 {
  w("{\"content\":[");
  content(i, false);
  w("],\"role\":\"user\"}");
  setLast(false, true, false, 0);
  return 1;
}

// --- tools

/** The schema toolDef() picks: parameters ?? input_schema ?? inputSchema. */
function params(f: u32): u32 {
  let v = get(f, "parameters");
  if (v != NONE && kindOf(v) != T_NULL) return v;
  v = get(f, "input_schema");
  if (v != NONE && kindOf(v) != T_NULL) return v;
  v = get(f, "inputSchema");
  if (v != NONE && kindOf(v) != T_NULL) return v;
  return NONE;
}

/** The Vercel AI SDK's jsonSchema() wrapper, which the reference unwraps: declines. */
function wrappedSchema(f: u32): bool {
  const p = params(f);
  if (!isObj(p)) return false;
  return isObj(get(p, "jsonSchema"));
}

/** The reference's toolDef(); returns the record of the name it kept. */
function toolDef(f: u32, from: u32): u32 {
  const name = get(f, "name");
  // Canonical member order: the writer then sorts only a tool with other members.
  keep(N_DESCRIPTION, "\"description\":", get(f, "description"));
  keep(N_NAME, "\"name\":", name);
  keep(N_PARAMETERS, "\"parameters\":", params(f));
  rest(f, from, S_TOOL_DEF);
  return haveHasName(from, N_NAME) ? name : NONE;
}

/** One tool definition; returns the record of its name (NONE: none). */
function tool(i: u32, legacy: bool): u32 {
  if (kindOf(i) != T_OBJECT) {
    raw(i);
    return NONE;
  }
  const type = get(i, "type");
  const f = get(i, "function");
  const fnTool = strIs(type, "function") && isObj(f);
  const defTool = !fnTool && (type == NONE || kindOf(type) == T_NULL || strIs(type, "function") || (strIs(type, "custom") && has(i, "input_schema")));
  if ((fnTool && wrappedSchema(f)) || (defTool && wrappedSchema(i))) { bad = true; return NONE; }
  if (bad) return NONE;
  const from = haveTop;
  if (legacy) havePush(N_LEGACY); // `out.legacy = true` wins over a copied member
  byte(0x7b);
  let name = NONE;
  if (fnTool) {
    name = toolDef(f, from);
    const own = get(i, "name");
    if (!haveHasName(from, N_NAME) && !empty(own)) name = own; // copied by rest() below
    rest(i, from, S_TOOL);
  } else if (defTool) {
    name = toolDef(i, from);
  } else {
    rest(i, from, S_NONE);
    name = haveHasName(from, N_NAME) ? get(i, "name") : NONE;
  }
  if (legacy) {
    sep();
    w("\"legacy\":true");
  }
  haveTop = from;
  byte(0x7d);
  return name != NONE && kindOf(name) == T_STRING ? name : NONE;
}

/** Byte order of two tool names (records or NONE for none, which sorts as ""). */
function compareNames(a: u32, b: u32): i32 {
  const ap: usize = a == NONE ? 0 : startOf(a) + 1;
  const an: usize = a == NONE ? 0 : endOf(a) - 1 - ap;
  const bp: usize = b == NONE ? 0 : startOf(b) + 1;
  const bn: usize = b == NONE ? 0 : endOf(b) - 1 - bp;
  const n = an < bn ? an : bn;
  const c = n == 0 ? 0 : memory.compare(ap, bp, n);
  if (c != 0) return c;
  return <i32>an - <i32>bn;
}

/**
 * Records the tool chunk written from s (up to the output cursor) and the record of its name
 * (NONE: none). Names are compared by bytes, which is the reference's UTF-16 order for ASCII;
 * other names and escaped names decline.
 */
function addChunk(s: usize, name: u32): void {
  if (name != NONE) {
    if (!isStr(name)) return;
    for (let q = startOf(name) + 1; q < endOf(name) - 1; q++) if (load<u8>(q) >= 0x80) { bad = true; return; }
  }
  // The sort below is quadratic; the APIs take at most a few hundred tools.
  if (chunkCount == 512) { bad = true; return; }
  const r = chunksP + <usize>chunkCount * 12;
  store<u32>(r, <u32>s);
  store<u32>(r + 4, <u32>o);
  store<u32>(r + 8, name);
  store<u32>(sortP + <usize>chunkCount * 4, chunkCount);
  chunkCount++;
}

/**
 * Writes the chunks recorded since `first` as `,"tools":[...]` sorted by name as the reference
 * sorts them, over the chunks themselves. Equal names (ordered by canonical bytes in the
 * reference) decline.
 */
function sortedTools(first: usize): void {
  // Insertion sort of the chunk order by name (a request has tens of tools).
  for (let k: u32 = 1; k < chunkCount; k++) {
    const x = load<u32>(sortP + <usize>k * 4);
    const xn = load<u32>(chunksP + <usize>x * 12 + 8);
    let j = <i32>k - 1;
    while (j >= 0) {
      const y = load<u32>(sortP + <usize>j * 4);
      const c = compareNames(load<u32>(chunksP + <usize>y * 12 + 8), xn);
      if (c == 0) { bad = true; return; }
      if (c < 0) break;
      store<u32>(sortP + <usize>(j + 1) * 4, y);
      j--;
    }
    store<u32>(sortP + <usize>(j + 1) * 4, x);
  }
  const at = o;
  w(",\"tools\":[");
  for (let k: u32 = 0; k < chunkCount; k++) {
    if (k > 0) byte(0x2c);
    const r = chunksP + <usize>load<u32>(sortP + <usize>k * 4) * 12;
    ownSpan(<usize>load<u32>(r), <usize>load<u32>(r + 4));
  }
  byte(0x5d);
  if (bad) return;
  memory.copy(first, at, o - at);
  o = first + (o - at);
}

/** Writes the tools (`,"tools":[...]`) of the chat family's `tools` and `functions`. */
function tools(): void {
  chunkCount = 0;
  const first = o;
  // A skipped `tools` list is written by the loader (its kept form); `functions` would be
  // sorted in with it, so a body with both declines (the loader indexes it again, whole).
  if (ollama) {
    // The root `tools` alone (`functions` is an option of an Ollama body); no detection.
  } else if (load<u32>(RESULT + 112) != 0) {
    const f = get(0, "functions");
    if (f != NONE && kindOf(f) != T_NULL) { bad = true; return; }
  } else {
    store<u32>(RESULT + 96, toolsVerdict());
  }
  const lists = ollama ? 1 : 2;
  for (let legacy = 0; legacy < lists; legacy++) {
    const t = get(0, legacy == 0 ? "tools" : "functions");
    if (t == NONE || kindOf(t) == T_NULL) continue;
    if (kindOf(t) != T_ARRAY) { bad = true; return; }
    const stop = nextOf(t);
    for (let c = t + 1; c < stop; c = nextOf(c)) {
      const s = o;
      const name = tool(c, legacy == 1);
      if (bad) return;
      addChunk(s, name);
      if (bad) return;
    }
  }
  sortedTools(first);
}

// --- provider detection (normalize.ts detectProvider(), same rules and order)

/** Whether every element of the array record a is a number (a token list). */
function isTokens(a: u32): bool {
  if (kindOf(a) != T_ARRAY) return false;
  const stop = nextOf(a);
  for (let c = a + 1; c < stop; c = nextOf(c)) if (kindOf(c) != T_NUMBER) return false;
  return true;
}

function containsEmbed(i: u32): bool {
  const p = startOf(i) + 1;
  const e = endOf(i) - 1;
  for (let q = p; q + 5 <= e; q++) {
    if ((load<u8>(q) | 0x20) == 0x65 && (load<u8>(q + 1) | 0x20) == 0x6d && (load<u8>(q + 2) | 0x20) == 0x62 &&
      (load<u8>(q + 3) | 0x20) == 0x65 && (load<u8>(q + 4) | 0x20) == 0x64) return true;
  }
  return false;
}


/**
 * Whether a content block of some message is one of Anthropic's (tool_use, tool_result,
 * thinking, an image or document with a source) or, with `anthropic` false, one of OpenAI
 * chat's part types (image_url, input_audio, file).
 */
function someBlock(messages: u32, anthropic: bool): bool {
  const mStop = nextOf(messages);
  for (let m = messages + 1; m < mStop; m = nextOf(m)) {
    if (!isObj(m)) continue;
    const c = get(m, "content");
    if (c == NONE || kindOf(c) != T_ARRAY) continue;
    const stop = nextOf(c);
    for (let b = c + 1; b < stop; b = nextOf(b)) {
      if (!isObj(b)) continue;
      const type = get(b, "type");
      if (anthropic) {
        if (strIs(type, "tool_use") || strIs(type, "tool_result") || strIs(type, "thinking") || strIs(type, "redacted_thinking")) return true;
        if ((strIs(type, "image") || strIs(type, "document")) && isObj(get(b, "source"))) return true;
      } else if (strIs(type, "image_url") || strIs(type, "input_audio") || strIs(type, "file")) {
        return true;
      }
    }
  }
  return false;
}

const V_INPUT_SCHEMA: u32 = 1; // a tool with input_schema: Anthropic
const V_FUNCTION: u32 = 2; // a { type: "function", function: {...} } tool: OpenAI chat

/**
 * The detection rules' reading of the root `tools` list: V_INPUT_SCHEMA and V_FUNCTION bits.
 * A list the index skipped (RESULT + 112) has no records: its verdict is the one its loader
 * passed (RESULT + 108), which the call that indexed it whole stored (RESULT + 96).
 */
function toolsVerdict(): u32 {
  if (load<u32>(RESULT + 112) != 0) return load<u32>(RESULT + 108);
  // Read once a view: detect() and tools() both ask (the answer and what the walk flags are the same).
  if (verdictKnown) return verdict;
  verdictKnown = true;
  verdict = toolsVerdictOnce();
  return verdict;
}

let verdictKnown = false;
let verdict: u32 = 0;

function toolsVerdictOnce(): u32 {
  const toolList = get(0, "tools");
  if (toolList == NONE || kindOf(toolList) != T_ARRAY) return 0;
  let v: u32 = 0;
  const stop = nextOf(toolList);
  for (let t = toolList + 1; t < stop; t = nextOf(t)) {
    if (!isObj(t)) continue;
    if (has(t, "input_schema")) v |= V_INPUT_SCHEMA;
    if (strIs(get(t, "type"), "function") && isObj(get(t, "function"))) v |= V_FUNCTION;
  }
  return v;
}

function detect(): i32 {
  const messages = get(0, "messages");
  if (messages == NONE) {
    if (has(0, "instructions") || has(0, "previous_response_id")) return P_RESPONSES;
    const input = get(0, "input");
    if (input != NONE) {
      if (has(0, "encoding_format") || has(0, "dimensions") || isObj(get(0, "options"))) return P_EMBEDDINGS;
      if (kindOf(input) == T_ARRAY && nextOf(input) != input + 1) {
        let all = true;
        const stop = nextOf(input);
        for (let c = input + 1; c < stop; c = nextOf(c)) {
          const k = kindOf(c);
          if (k != T_STRING && k != T_NUMBER && !isTokens(c)) all = false;
        }
        if (all) return P_EMBEDDINGS;
      }
      const model = get(0, "model");
      if (isStr(model) && containsEmbed(model)) return P_EMBEDDINGS;
      return P_RESPONSES;
    }
    if (has(0, "prompt")) return P_GENERIC;
    bad = true;
    return 0;
  }
  if (kindOf(messages) != T_ARRAY) { bad = true; return 0; }
  if (isObj(get(0, "context")) || isObj(get(0, "options"))) return P_GENERIC;
  // What the tools say (V_INPUT_SCHEMA, V_FUNCTION), from their records or, for a list the
  // index skipped, from the call that kept it.
  const verdict = toolsVerdict();
  // The root's members that say Anthropic (system, stop_sequences, top_k, thinking) or OpenAI
  // chat (functions, function_call, n, seed, ...): M_ANTHROPIC and M_CHAT in initNames().
  const rootBits = scan(0);
  if ((rootBits & M_ANTHROPIC) != 0) return P_ANTHROPIC;
  if ((verdict & V_INPUT_SCHEMA) != 0) return P_ANTHROPIC;
  if (someBlock(messages, true)) return P_ANTHROPIC;
  if ((rootBits & M_CHAT) != 0) return P_CHAT;
  if ((verdict & V_FUNCTION) != 0) return P_CHAT;
  const mStop = nextOf(messages);
  for (let m = messages + 1; m < mStop; m = nextOf(m)) {
    if (isObj(m) && (has(m, "tool_calls") || has(m, "tool_call_id") || has(m, "function_call"))) return P_CHAT;
  }
  if (someBlock(messages, false)) return P_CHAT;
  let roles = true;
  for (let m = messages + 1; m < mStop; m = nextOf(m)) {
    if (!isObj(m)) { roles = false; break; }
    const r = get(m, "role");
    if (!(strIs(r, "system") || strIs(r, "developer") || strIs(r, "user") || strIs(r, "assistant") || strIs(r, "tool") || strIs(r, "function"))) {
      roles = false;
      break;
    }
  }
  return roles ? P_CHAT : P_GENERIC;
}

// --- provider modules' shapes: the message list as raw-keys/gemini.ts and raw-keys/converse.ts
// write it (a separator before every message but the first, a turn of kept parts as one message,
// function and tool results as tool messages of their own), for the bodies SDKs send; anything
// else declines to those walks.

let messageCount: i32 = 0;

// A message opens with its content and ends with its role: canonical member order.
const H_OPEN = "{\"content\":[";
const H_SYSTEM = "],\"role\":\"system\"}";
const H_USER = "],\"role\":\"user\"}";
const H_ASSISTANT = "],\"role\":\"assistant\"}";
const H_TOOL = "],\"role\":\"tool\"}";

/** Eight bytes of the ASCII literal s from its k-th on, as a little-endian number (zeros past its end). */
function word(s: string, k: i32): u64 {
  let v: u64 = 0;
  for (let i = min(s.length, k + 8) - 1; i >= k; i--) v = (v << 8) | <u64>s.charCodeAt(i);
  return v;
}

// The literals of every message and text part as words, stored whole (room() keeps slack after
// o): w()'s look-up and loop cost more than the stores where a literal is written ~100 times.
const OPEN_0 = word(H_OPEN, 0);
const OPEN_1 = word(H_OPEN, 8);
const USER_0 = word(H_USER, 0);
const USER_1 = word(H_USER, 8);
const ASSISTANT_0 = word(H_ASSISTANT, 0);
const ASSISTANT_1 = word(H_ASSISTANT, 8);
const ASSISTANT_2 = word(H_ASSISTANT, 16);
const TOOL_0 = word(H_TOOL, 0);
const TOOL_1 = word(H_TOOL, 8);
const TEXT_OPEN = word("{\"text\":", 0);
const TEXT_CLOSE_0 = word(",\"type\":\"text\"}", 0);
const TEXT_CLOSE_1 = word(",\"type\":\"text\"}", 8);

/** Writes the n bytes (at most 16) of the literal whose words are a and b. */
@inline function put(a: u64, b: u64, n: usize): void {
  store<u64>(o, a);
  store<u64>(o + 8, b);
  o += n;
}

@inline function openMessage(): void {
  put(OPEN_0, OPEN_1, 12);
}

/** Closes an assistant message, or the system prompt's. */
function closeWhole(assistant: bool): void {
  if (assistant) {
    put(ASSISTANT_0, ASSISTANT_1, 16);
    store<u64>(o, ASSISTANT_2);
    o += 5;
  } else {
    w(H_SYSTEM);
  }
}

@inline function closeUser(): void {
  put(USER_0, USER_1, 16);
}

/** A separator before every message but the first. */
function nextMessage(): void {
  if (messageCount++ > 0) byte(0x2c);
  // Where it starts: a message taken back (messageCount lowered) is written over.
  store<u32>(startsP + <usize>(messageCount - 1) * 4, <u32>(o - outStart));
}

/** The one member of object ob, or NONE when it has none or more than one. */
function soleMember(ob: u32): u32 {
  const first = ob + 1;
  if (first >= nextOf(ob) || nextOf(first) != nextOf(ob)) return NONE;
  return first;
}

@inline function textPart(p: u32): void {
  store<u64>(o, TEXT_OPEN);
  o += 8;
  raw(p);
  put(TEXT_CLOSE_0, TEXT_CLOSE_1, 15);
}

/**
 * raw() for a value of a part (arguments, tool input, a function's response): an object or
 * array is written by canonWrite() at once (what is canonical comes out as it stands), without
 * canonValue()'s walk first, which costs about as much and finds most arguments out of order.
 */
function rawTree(i: u32): void {
  const k = kindOf(i);
  if (canon && (k == T_OBJECT || k == T_ARRAY)) canonicalRaw(i);
  else raw(i);
}

/** Whether two unescaped string records hold the same bytes (the body has padding after its end). */
function sameString(a: u32, b: u32): bool {
  const ap = startOf(a);
  const n = endOf(a) - ap;
  return endOf(b) - startOf(b) == n && sameBytes(ap, startOf(b), n);
}

/** A call id number no id of the body has: a Gemini call without an id (the reference's `{ gemini: k }`). */
function freshId(): i32 {
  store<u32>(idsP + <usize>idCount * ID_STRIDE, 0);
  store<u32>(idsP + <usize>idCount * ID_STRIDE + 4, 0xffffffff);
  store<u32>(idsP + <usize>idCount * ID_STRIDE + 8, 1);
  idCount++;
  return <i32>(idCount - 1);
}

/**
 * One message (an assistant's, else the system prompt) of all the parts of v (one part, or an
 * array of them; Converse: an array only) that are kept; none for no parts when `dropEmpty` (an
 * empty system prompt is no message).
 */
function wholeMessage(assistant: bool, v: u32, dropEmpty: bool, gemini: bool): void {
  if (v == NONE || kindOf(v) == T_NULL) {
    if (!gemini) { bad = true; return; }
    if (dropEmpty) return;
    nextMessage();
    openMessage();
    closeWhole(assistant);
    return;
  }
  const arr = kindOf(v) == T_ARRAY;
  if (!arr && !gemini) { bad = true; return; }
  const mark = o;
  const count0 = messageCount;
  nextMessage();
  openMessage();
  let n = 0;
  const stop = arr ? nextOf(v) : v + 1;
  for (let p = arr ? v + 1 : v; p < stop && !bad; p = arr ? nextOf(p) : stop) {
    const at = o;
    if (n > 0) byte(0x2c);
    if ((gemini ? geminiPart(p) : conversePart(p)) == K_NONE) o = at;
    else n++;
  }
  if (n == 0 && dropEmpty) {
    o = mark;
    messageCount = count0;
    return;
  }
  closeWhole(assistant);
}

/**
 * A user turn: results (Gemini function responses, Converse tool results) are tool messages of
 * their own, the other parts user messages between them (splitToolResults), written in place.
 */
function userTurn(v: u32, gemini: bool): void {
  let arr = false;
  let first: u32 = 0;
  let stop: u32 = 0;
  if (v == NONE || kindOf(v) == T_NULL) {
    if (!gemini) { bad = true; return; }
  } else {
    arr = kindOf(v) == T_ARRAY;
    if (!arr && !gemini) { bad = true; return; }
    first = arr ? v + 1 : v;
    stop = arr ? nextOf(v) : v + 1;
  }
  let open = false;
  let any = false;
  for (let p = first; p < stop && !bad; p = arr ? nextOf(p) : stop) {
    let result = false;
    // A Gemini part's members, walked once here for geminiObject() (nothing walks another
    // object's members in between).
    let mask: u64 = 0;
    const obj = isObj(p);
    if (obj) {
      if (gemini) {
        mask = members(p, true);
        result = (mask & bit(C_FUNCTION_RESPONSE)) != 0;
      } else {
        const m = soleMember(p);
        result = m != NONE && codeOf(m) == C_TOOL_RESULT;
      }
    }
    if (result) {
      if (open) closeUser();
      open = false;
      any = true;
      nextMessage();
      openMessage();
      // A result the walk would not write itself (a Converse hole) may not be one to the reference.
      if ((gemini ? geminiObject(p, mask) : conversePart(p)) != K_RESULT) { bad = true; return; }
      put(TOOL_0, TOOL_1, 16);
      continue;
    }
    const mark = o;
    const count0 = messageCount;
    if (open) byte(0x2c);
    else {
      nextMessage();
      openMessage();
    }
    if ((gemini ? (obj ? geminiObject(p, mask) : geminiPart(p)) : conversePart(p)) == K_NONE) {
      o = mark;
      messageCount = count0;
      continue;
    }
    open = true;
    any = true;
  }
  if (open) closeUser();
  else if (!any) {
    nextMessage();
    openMessage();
    closeUser();
  }
}

// The tools' list of the root members the message walk read: Gemini's `tools`, Converse's `toolConfig`.
let shapeTools: u32 = NONE;

// Gemini (src/providers/gemini.ts is the reference; raw-keys/gemini.ts the walk this copies).

function geminiMessages(): void {
  const root = members(0, true);
  if (bad || (root & bit(C_GENERATE_CONTENT_REQUEST)) != 0) { bad = true; return; }
  const system = member(root, C_SYSTEM_INSTRUCTION);
  const contents = member(root, C_CONTENTS);
  shapeTools = member(root, C_TOOLS);
  if (system != NONE && kindOf(system) != T_NULL) {
    if (!isObj(system)) { bad = true; return; }
    const m = members(system, true);
    if (bad) return;
    wholeMessage(false, member(m, C_PARTS), true, true);
  }
  if (bad || contents == NONE || kindOf(contents) == T_NULL) return;
  if (kindOf(contents) != T_ARRAY) { bad = true; return; }
  const stop = nextOf(contents);
  for (let c = contents + 1; c < stop && !bad; c = nextOf(c)) {
    if (!isObj(c)) { bad = true; return; }
    const m = members(c, true);
    if (bad || (m & ~(bit(C_ROLE) | bit(C_PARTS))) != 0) { bad = true; return; }
    const role = member(m, C_ROLE);
    const parts = member(m, C_PARTS);
    if (role == NONE || kindOf(role) == T_NULL || strIs(role, "user")) userTurn(parts, true);
    else if (strIs(role, "model")) wholeMessage(true, parts, false, true);
    else bad = true;
  }
}

// A part's members: one of text, inlineData, fileData, functionCall, functionResponse (held),
// beside thought (with text) and thoughtSignature.
const G_HELD: u64 = bit(C_TEXT) | bit(C_INLINE_DATA) | bit(C_FILE_DATA) | bit(C_FUNCTION_CALL) | bit(C_FUNCTION_RESPONSE);
const G_PART: u64 = G_HELD | bit(C_THOUGHT) | bit(C_THOUGHT_SIGNATURE);

/** One Gemini part: K_NONE, K_PART, or K_RESULT for a function response. */
function geminiPart(p: u32): i32 {
  const k = kindOf(p);
  if (k == T_STRING) {
    if (emptyString(p)) return K_NONE;
    textPart(p);
    return K_PART;
  }
  if (k != T_OBJECT) {
    raw(p);
    return K_PART;
  }
  return geminiObject(p, members(p, true));
}

/** geminiPart() of an object part whose members members() just walked (`m`, its mask). */
function geminiObject(p: u32, m: u64): i32 {
  if (bad || (m & ~G_PART) != 0 || popcnt<u64>(m & G_HELD) != 1) { bad = true; return K_NONE; }
  // Every record the part needs, before another object's walk reuses CODES.
  const text = member(m, C_TEXT);
  const thought = member(m, C_THOUGHT);
  const call = member(m, C_FUNCTION_CALL);
  const result = member(m, C_FUNCTION_RESPONSE);
  const inline = member(m, C_INLINE_DATA);
  const file = member(m, C_FILE_DATA);
  if (text != NONE) {
    if (kindOf(text) != T_STRING) { bad = true; return K_NONE; }
    if (thought != NONE && kindOf(thought) == T_TRUE) {
      byte(0x7b);
      if (!emptyString(text)) {
        w("\"thinking\":");
        raw(text);
        byte(0x2c);
      }
      w("\"type\":\"thinking\"}");
      return K_PART;
    }
    if (emptyString(text)) return K_NONE;
    textPart(text);
    return K_PART;
  }
  if (thought != NONE) { bad = true; return K_NONE; }
  if (isObj(call)) {
    const cm = members(call, true);
    if (bad || (cm & ~(bit(C_NAME) | bit(C_ARGS) | bit(C_ID))) != 0) { bad = true; return K_NONE; }
    const name = member(cm, C_NAME);
    const idRec = member(cm, C_ID);
    const args = member(cm, C_ARGS);
    if (!isStr(name) || (idRec != NONE && !isStr(idRec))) { bad = true; return K_NONE; }
    const number = idRec == NONE ? freshId() : id(idRec);
    const q = openP + <usize>openCount * 12;
    store<u32>(q, name);
    store<u32>(q + 4, idRec);
    store<u32>(q + 8, <u32>number);
    openCount++;
    // arguments, id, name, type: canonical order.
    byte(0x7b);
    if (args != NONE && kindOf(args) != T_NULL) {
      w("\"arguments\":");
      rawTree(args);
      byte(0x2c);
    }
    w("\"id\":");
    quotedId(number);
    w(",\"name\":");
    raw(name);
    w(",\"type\":\"tool_call\"}");
    return K_PART;
  }
  if (isObj(result)) {
    const rm = members(result, true);
    if (bad || (rm & ~(bit(C_NAME) | bit(C_RESPONSE) | bit(C_ID))) != 0) { bad = true; return K_NONE; }
    const name = member(rm, C_NAME);
    const idRec = member(rm, C_ID);
    let value = member(rm, C_RESPONSE);
    if (!isStr(name) || (idRec != NONE && !isStr(idRec))) { bad = true; return K_NONE; }
    // The call it answers: by id when it has one, else the earliest open call of its name.
    let number: i32 = -1;
    for (let j: u32 = 0; j < openCount; j++) {
      const q = openP + <usize>j * 12;
      const callId = load<u32>(q + 4);
      if (idRec != NONE ? callId != NONE && sameString(callId, idRec) : sameString(load<u32>(q), name)) {
        number = <i32>load<u32>(q + 8);
        memory.copy(q, q + 12, <usize>(openCount - j - 1) * 12);
        openCount--;
        break;
      }
    }
    const paired = number >= 0 || idRec != NONE;
    if (number < 0) number = idRec == NONE ? freshId() : id(idRec);
    // content, id, name, type: canonical order.
    w("{\"content\":[");
    // `{ output }`, `{ result }` or `{ content }` alone (beside a `name`) is that value.
    if (isObj(value)) {
      const vm = members(value, false);
      if (bad) return K_NONE;
      const own = vm & (bit(C_OUTPUT) | bit(C_RESULT) | bit(C_CONTENT));
      if (memberCount - ((vm & bit(C_NAME)) != 0 ? 1 : 0) == 1 && own != 0) value = load<u32>(CODES + <usize>ctz<u64>(own) * 4);
    }
    if (value != NONE && kindOf(value) != T_NULL) {
      if (kindOf(value) == T_STRING) {
        if (!emptyString(value)) textPart(value);
      } else if (empty(value)) {
        w("{\"type\":\"json\"}");
      } else {
        w("{\"json\":");
        rawTree(value);
        w(",\"type\":\"json\"}");
      }
    }
    w("],\"id\":");
    quotedId(number);
    if (!paired) {
      w(",\"name\":");
      raw(name);
    }
    w(",\"type\":\"tool_result\"}");
    return K_RESULT;
  }
  const media = inline != NONE ? inline : file;
  if (isObj(media)) {
    const mm = members(media, true);
    if (bad || (mm & ~(bit(C_MIME_TYPE) | bit(inline != NONE ? C_DATA : C_FILE_URI))) != 0) { bad = true; return K_NONE; }
    return hole(p);
  }
  bad = true;
  return K_NONE;
}

/** Function declarations, through the chat family's tool writer. */
function geminiTools(): void {
  const t = shapeTools;
  if (bad || t == NONE || kindOf(t) == T_NULL) return;
  if (kindOf(t) != T_ARRAY) { bad = true; return; }
  const stop = nextOf(t);
  for (let c = t + 1; c < stop && !bad; c = nextOf(c)) {
    if (!isObj(c)) { bad = true; return; }
    const m = members(c, true);
    const fns = member(m, C_FUNCTION_DECLARATIONS);
    if (bad || memberCount != 1 || fns == NONE || kindOf(fns) != T_ARRAY) { bad = true; return; }
    const stop2 = nextOf(fns);
    for (let f = fns + 1; f < stop2 && !bad; f = nextOf(f)) {
      if (!isObj(f)) { bad = true; return; }
      if ((members(f, true) & (bit(C_PARAMETERS_JSON_SCHEMA) | bit(C_TYPE))) != 0 || bad) { bad = true; return; }
      const s = o;
      const name = tool(f, false);
      if (bad) return;
      addChunk(s, name);
    }
  }
}

// Bedrock Converse (src/providers/bedrock.ts is the reference; raw-keys/converse.ts the walk
// this copies).

function converseMessages(): void {
  const root = members(0, false);
  const messages = member(root, C_MESSAGES);
  const system = member(root, C_SYSTEM);
  shapeTools = member(root, C_TOOL_CONFIG);
  if (bad || messages == NONE || kindOf(messages) != T_ARRAY) { bad = true; return; }
  if (system != NONE && kindOf(system) != T_NULL) wholeMessage(false, system, true, false);
  const stop = nextOf(messages);
  for (let m = messages + 1; m < stop && !bad; m = nextOf(m)) {
    if (!isObj(m)) { bad = true; return; }
    const mm = members(m, false);
    if (bad || (mm & ~(bit(C_ROLE) | bit(C_CONTENT))) != 0) { bad = true; return; }
    const content = member(mm, C_CONTENT);
    const role = member(mm, C_ROLE);
    if (content == NONE) { bad = true; return; }
    if (strIs(role, "assistant")) wholeMessage(true, content, false, false);
    else if (strIs(role, "user")) userTurn(content, false);
    else bad = true;
  }
}

/** One Converse block: K_NONE, K_PART, or K_RESULT for a tool result; other blocks are holes. */
function conversePart(b: u32): i32 {
  if (!isObj(b)) { bad = true; return K_NONE; }
  const m = soleMember(b);
  if (m != NONE) {
    const code = codeOf(m);
    if (bad) return K_NONE;
    if (code == C_CACHE_POINT) return K_NONE;
    if (code == C_TEXT && kindOf(m) == T_STRING) {
      if (emptyString(m)) return K_NONE;
      textPart(m);
      return K_PART;
    }
    if (code == C_TOOL_USE && isObj(m)) {
      const um = members(m, false);
      const idRec = member(um, C_TOOL_USE_ID);
      const name = member(um, C_NAME);
      const input = member(um, C_INPUT);
      // An input given as a string is JSON text to the reference: a hole.
      if ((um & ~(bit(C_TOOL_USE_ID) | bit(C_NAME) | bit(C_INPUT))) == 0 && !bad && isStr(idRec) && isStr(name) && (input == NONE || isObj(input))) {
        // arguments, id, name, type: canonical order.
        byte(0x7b);
        if (input != NONE) {
          w("\"arguments\":");
          rawTree(input);
          byte(0x2c);
        }
        w("\"id\":");
        quotedId(id(idRec));
        w(",\"name\":");
        raw(name);
        w(",\"type\":\"tool_call\"}");
        return K_PART;
      }
    }
    if (code == C_TOOL_RESULT && isObj(m)) {
      const rm = members(m, false);
      const idRec = member(rm, C_TOOL_USE_ID);
      const content = member(rm, C_CONTENT);
      const status = member(rm, C_STATUS);
      let textOnly = (rm & ~(bit(C_TOOL_USE_ID) | bit(C_CONTENT) | bit(C_STATUS))) == 0 && !bad && content != NONE && kindOf(content) == T_ARRAY;
      if (textOnly) {
        const stop = nextOf(content);
        for (let c = content + 1; c < stop; c = nextOf(c)) {
          const t = isObj(c) ? soleMember(c) : NONE;
          if (t == NONE || kindOf(t) != T_STRING || codeOf(t) != C_TEXT) textOnly = false;
        }
      }
      if (textOnly && isStr(idRec) && (status == NONE || kindOf(status) == T_STRING)) {
        // content, id, is_error, type: canonical order; the id numbered first, as before.
        const k = ref(idRec);
        w("{\"content\":[");
        let n = 0;
        const stop = nextOf(content);
        for (let c = content + 1; c < stop; c = nextOf(c)) {
          const t = c + 1;
          if (emptyString(t)) continue;
          if (n++ > 0) byte(0x2c);
          textPart(t);
        }
        w("],\"id\":");
        quotedId(k);
        if (strIs(status, "error")) w(",\"is_error\":true");
        w(",\"type\":\"tool_result\"}");
        return K_RESULT;
      }
    }
  }
  if (bad) return K_NONE;
  return hole(b);
}

/** Plain `{ toolSpec: { name, description?, inputSchema: { json } } }` tools; any other declines. */
function converseTools(): void {
  const config = shapeTools;
  if (bad || !isObj(config)) return;
  const cm = members(config, false);
  // The reference spreads toolConfig's other members over the root: `messages` or `system`
  // there would replace the conversation this wrote.
  if ((cm & (bit(C_MESSAGES) | bit(C_SYSTEM))) != 0) { bad = true; return; }
  const t = member(cm, C_TOOLS);
  if (bad || t == NONE) return;
  if (kindOf(t) != T_ARRAY) { bad = true; return; }
  // The tools are written here: the caller's top level need not parse them.
  cutStart = load<u32>(rec(t) + 4);
  cutEnd = load<u32>(rec(t) + 8);
  const stop = nextOf(t);
  for (let c = t + 1; c < stop && !bad; c = nextOf(c)) {
    const spec = isObj(c) ? soleMember(c) : NONE;
    if (spec == NONE || codeOf(spec) != C_TOOL_SPEC || !isObj(spec)) { bad = true; return; }
    const sm = members(spec, false);
    if (bad || (sm & ~(bit(C_NAME) | bit(C_DESCRIPTION) | bit(C_INPUT_SCHEMA))) != 0) { bad = true; return; }
    const name = member(sm, C_NAME);
    const description = member(sm, C_DESCRIPTION);
    const schema = member(sm, C_INPUT_SCHEMA);
    if (!isStr(name) || (description != NONE && kindOf(description) != T_STRING && kindOf(description) != T_NULL) || !isObj(schema)) { bad = true; return; }
    const json = soleMember(schema);
    // A schema of null (or []) is no parameters to the reference; objects only here.
    if (json == NONE || codeOf(json) != C_JSON || !isObj(json)) { bad = true; return; }
    const s = o;
    if (description != NONE && kindOf(description) == T_STRING) {
      w("{\"description\":");
      raw(description);
      w(",\"name\":");
    } else {
      w("{\"name\":");
    }
    raw(name);
    w(",\"parameters\":");
    raw(json);
    byte(0x7d);
    addChunk(s, name);
  }
}

// --- the view

/**
 * Writes the view of the body just indexed by index(at, n) (its `count` records at
 * RESULT + 48). `provider` is 0 to detect it. Returns V_OK, V_DECLINED or V_MEMORY. On V_OK,
 * RESULT + 52.. holds (u32 each): provider, message count, output address, end of the messages
 * part (`{"messages":[...]`; the tools part `,"tools":[...]` follows up to) output end, hole
 * count, holes address ({start, end} body offsets), tool count, tool chunks address ({start,
 * end, name record}, start and end as output addresses), and the body range of a top-level
 * value the caller leaves out of its top level (0, 0: none). The root object's members are the
 * index's records 1.., chained by their next record.
 */
export function view(at: usize, n: u32, count: u32, provider: i32): i32 {
  A = at;
  B = <usize>load<u32>(RESULT + 48);
  bad = false;
  ollama = provider == P_OLLAMA;
  if (!namesReady) initNames();
  verdictKnown = false;
  if (count == 0 || kindOf(0) != T_OBJECT) return V_DECLINED;
  // Any object whose names the index left for the caller to compare: four records a step.
  let flags: u32 = 0;
  const recEnd = B + <usize>count * NODE;
  let r = B;
  for (; r + 4 * NODE <= recEnd; r += 4 * NODE) flags |= load<u32>(r) | load<u32>(r + NODE) | load<u32>(r + 2 * NODE) | load<u32>(r + 3 * NODE);
  for (; r < recEnd; r += NODE) flags |= load<u32>(r);
  if ((flags & F_CHECK_KEYS) != 0) return V_DECLINED;
  // Scratch after the records: have (the records plus literal names per nesting level), ids,
  // ranges, holes, chunks and their order, each bounded by the record count.
  const c = <usize>count + 8;
  haveP = (B + <usize>count * NODE + 7) & ~(<usize>7);
  idsP = haveP + (c + 16 * 520) * 8;
  rangesP = idsP + c * ID_STRIDE;
  holesP = rangesP + c * 12;
  chunksP = holesP + c * 8;
  sortP = chunksP + c * 12;
  // Id slots: a power of two at least twice the most ids a body of `count` records can have.
  let slots: u32 = 64;
  while (<usize>slots < c * 2) slots <<= 1;
  idMask = slots - 1;
  openP = sortP + c * 4;
  idSlots = (openP + c * 12 + 7) & ~(<usize>7);
  startsP = (idSlots + <usize>slots * 4 + 7) & ~(<usize>7);
  const outBase = (startsP + c * 4 + 7) & ~(<usize>7);
  outStart = outBase;
  if (!ensureMemory(outBase + <usize>n + <usize>count * LITERALS_PER_RECORD + SLACK)) return V_MEMORY;
  outLimit = (<usize>memory.size()) << 16;
  memory.fill(idSlots, 0, <usize>slots * 4);
  o = outBase;
  haveTop = 0;
  idCount = 0;
  holeCount = 0;
  chunkCount = 0;
  lastSet = false;
  openCount = 0;
  messageCount = 0;
  cutStart = 0;
  cutEnd = 0;
  shapeTools = NONE;
  canon = true;
  allCanon = true;
  holed = false;
  holedOdd = false;
  keyN = 0;
  startCount = 0;
  store<u32>(RESULT + 120, 0);

  if (provider == P_GEMINI || provider == P_CONVERSE) {
    w("{\"messages\":[");
    if (provider == P_GEMINI) geminiMessages();
    else converseMessages();
    byte(0x5d);
    if (bad || dangling()) return V_DECLINED;
    const end = o;
    // Canonical as written, values copied from the body made so where they landed (as for the
    // chat family; no message is canonicalized whole here): see RESULT + 120.
    if (allCanon && canon) {
      // Every message canonical as written, one with holes but for them: bit 2.
      store<u32>(RESULT + 120, 3);
      store<u32>(RESULT + 124, <u32>startsP);
    }
    canon = false;
    chunkCount = 0;
    if (provider == P_GEMINI) geminiTools();
    else converseTools();
    sortedTools(end);
    if (bad) return V_DECLINED;
    return done(provider, messageCount, outBase, end);
  }
  const p = ollama ? P_CHAT : provider != 0 ? provider : detect();
  if (bad) return V_DECLINED;
  if (p == P_EMBEDDINGS) return embeddings(outBase);
  const responses = p == P_RESPONSES;
  w("{\"messages\":[");
  let messages: i32 = 0;
  const system = ollama ? NONE : get(0, responses ? "instructions" : "system");
  if (system != NONE) {
    const mark = o;
    w("{\"content\":[");
    if (content(system, false) > 0) {
      w("],\"role\":\"system\"}");
      whole(mark);
      messages++;
    } else {
      o = mark;
    }
  }
  const list = get(0, responses ? "input" : "messages");
  if (bad) return V_DECLINED;
  if (list == NONE) {
    if (!responses && p != P_GENERIC) return V_DECLINED; // the reference throws E_REQUEST
  } else if (kindOf(list) == T_NULL) {
    if (!responses) return V_DECLINED;
  } else if (kindOf(list) == T_ARRAY) {
    const stop = nextOf(list);
    for (let m = list + 1; m < stop && !bad; m = nextOf(m)) messages += listed(m, responses, messages > 0);
  } else if (responses && kindOf(list) == T_STRING) {
    if (messages > 0) byte(0x2c);
    const at = o;
    canon = true;
    messages += userText(list);
    whole(at);
  } else {
    return V_DECLINED;
  }
  if (p == P_GENERIC) {
    // Vercel AI SDK call options: `prompt` (a string or messages) follows `messages`.
    const prompt = get(0, "prompt");
    if (prompt != NONE && kindOf(prompt) != T_NULL) {
      if (kindOf(prompt) == T_STRING) {
        if (messages > 0) byte(0x2c);
        const at = o;
        canon = true;
        messages += userText(prompt);
        whole(at);
      } else if (kindOf(prompt) == T_ARRAY) {
        const stop = nextOf(prompt);
        for (let m = prompt + 1; m < stop && !bad; m = nextOf(m)) messages += listed(m, false, messages > 0);
      } else {
        return V_DECLINED;
      }
    }
  }
  byte(0x5d);
  if (bad || dangling()) return V_DECLINED;
  const messagesEnd = o;
  // The messages as they stand are canonical, and where each starts is known: RESULT + 120
  // says so, RESULT + 124 holds the starts (the tools are canonicalized apart, as before).
  if (allCanon && startCount == <u32>messages) {
    // Bit 2: every message with holes is canonical but for them (the caller fills them with
    // the parts' canonical text and need not canonicalize the message).
    store<u32>(RESULT + 120, holedOdd ? 1 : 3);
    store<u32>(RESULT + 124, <u32>startsP);
  }
  canon = false; // nothing below needs the checks
  tools();
  if (bad) return V_DECLINED;
  return done(ollama ? P_OLLAMA : p, messages, outBase, messagesEnd);
}

/**
 * An OpenAI embeddings body's view, `{"input":[...]`: each input is a message (a list that is
 * not one token list is its inputs; anything else, a string or one token list, is one input;
 * absent or null, none), written canonical where it lands, with its start recorded. The model
 * and options are the caller's top level, as for the chat family; there are no tools.
 */
function embeddings(outBase: usize): i32 {
  w("{\"input\":[");
  const input = get(0, "input");
  if (bad) return V_DECLINED;
  let inputs: i32 = 0;
  if (input != NONE && kindOf(input) != T_NULL) {
    if (kindOf(input) == T_ARRAY && !isTokens(input)) {
      const stop = nextOf(input);
      for (let m = input + 1; m < stop && !bad; m = nextOf(m)) {
        if (inputs > 0) byte(0x2c);
        embeddingInput(m);
        inputs++;
      }
    } else {
      embeddingInput(input);
      inputs = 1;
    }
  }
  byte(0x5d);
  if (bad) return V_DECLINED;
  if (allCanon && startCount == <u32>inputs) {
    store<u32>(RESULT + 120, 3);
    store<u32>(RESULT + 124, <u32>startsP);
  }
  canon = false;
  return done(P_EMBEDDINGS, inputs, outBase, o);
}

/** One input of an embeddings body, canonical (see raw()), as a message that starts here. */
function embeddingInput(i: u32): void {
  const at = o;
  canon = true;
  raw(i);
  whole(at);
}

/** Stores what view() wrote (see there) and returns V_OK. */
function done(p: i32, messages: i32, outBase: usize, messagesEnd: usize): i32 {
  store<u32>(RESULT + 52, <u32>p);
  store<u32>(RESULT + 56, <u32>messages);
  store<u32>(RESULT + 60, <u32>outBase);
  store<u32>(RESULT + 64, <u32>messagesEnd);
  store<u32>(RESULT + 68, <u32>o);
  store<u32>(RESULT + 72, holeCount);
  store<u32>(RESULT + 76, <u32>holesP);
  store<u32>(RESULT + 80, chunkCount);
  store<u32>(RESULT + 84, <u32>chunksP);
  store<u32>(RESULT + 88, cutStart);
  store<u32>(RESULT + 92, cutEnd);
  return V_OK;
}
