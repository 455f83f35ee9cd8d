// The view's JSON text as the walks write it: a growable byte buffer, and the literals they write
// (encoded once). Everything written is UTF-8: byte ranges of a body already checked, and text
// encoded from well-formed strings.

const encoder = new TextEncoder();
// ignoreBOM: keep a leading U+FEFF. The default decoder drops it, which made "\ufeff{}" tool
// arguments parse as {} and "\ufefftext" a text part.
export const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
export const lit = (s: string): Uint8Array => encoder.encode(s);

/** Growable output buffer for the view's JSON text. */
export class Out {
  // One buffer for every call (grown, never shrunk): a 64 KB allocation per request showed up
  // as garbage collection in the profile.
  private static shared = new Uint8Array(1 << 16);
  buf = Out.shared;
  at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + n) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.at));
    this.buf = grown;
    Out.shared = grown;
  }

  bytes(b: Uint8Array): void {
    const n = b.length;
    this.room(n);
    // A loop beats TypedArray.prototype.set for the few-byte literals written here.
    if (n > 32) this.buf.set(b, this.at);
    else for (let i = 0; i < n; i++) this.buf[this.at + i] = b[i]!;
    this.at += n;
  }

  span(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.room(n);
    if (n > 32) this.buf.set(src.subarray(start, end), this.at);
    else for (let i = 0; i < n; i++) this.buf[this.at + i] = src[start + i]!;
    this.at += n;
  }

  /** Lets go of a buffer grown for a very large body, so one such body is not held for good. */
  static release(): void {
    if (Out.shared.length > 1 << 22) Out.shared = new Uint8Array(1 << 16);
  }

  /** Appends a copy of bytes already written. */
  own(start: number, end: number): void {
    this.room(end - start);
    this.buf.copyWithin(this.at, start, end);
    this.at += end - start;
  }

  byte(c: number): void {
    this.room(1);
    this.buf[this.at++] = c;
  }

  /**
   * The content of a JSON string literal (bytes start..end, between its quotes) unescaped, as
   * the UTF-8 of the string's value; false (with some bytes written) at a \u escape, which the
   * caller then handles as a decoded string.
   */
  unescaped(src: Uint8Array, start: number, end: number): boolean {
    this.room(end - start);
    const buf = this.buf;
    let at = this.at;
    for (let k = start; k < end; k++) {
      const c = src[k]!;
      if (c !== 0x5c) {
        buf[at++] = c;
        continue;
      }
      const d = src[++k]!;
      const r = d === 0x6e ? 0x0a : d === 0x74 ? 0x09 : d === 0x72 ? 0x0d : d === 0x62 ? 0x08 : d === 0x66 ? 0x0c : d === 0x75 ? -1 : d; // '"', '\\', '/'
      if (r < 0) return false;
      buf[at++] = r;
    }
    this.at = at;
    return true;
  }

  /** A JavaScript string as UTF-8 (it is JSON text, or ASCII made here). */
  text(s: string): void {
    this.room(s.length * 3);
    this.at += encoder.encodeInto(s, this.buf.subarray(this.at)).written;
  }
}

export const COMMA = 0x2c;
// Positional call ids ("call_0", ...) as JSON strings, encoded once.
const idBytes = new Map<string, Uint8Array>();
export function quotedId(id: string): Uint8Array {
  let b = idBytes.get(id);
  if (b === undefined) {
    if (idBytes.size > 4096) idBytes.clear();
    idBytes.set(id, (b = lit(`"${id}"`)));
  }
  return b;
}
export const L = {
  open: lit('{'),
  close: lit('}'),
  openArr: lit('['),
  closeArr: lit(']'),
  type: lit('"type":'),
  text: lit('"text"'),
  tool_call: lit('"tool_call"'),
  tool_result: lit('"tool_result"'),
  thinking: lit('"thinking"'),
  function_call: lit('"function_call"'),
  image: lit('"image"'),
  textKey: lit('"text":'),
  roleKey: lit('"role":'),
  contentKey: lit('"content":'),
  idKey: lit('"id":'),
  nameKey: lit('"name":'),
  argumentsKey: lit('"arguments":'),
  argumentsTextKey: lit('"argumentsText":'),
  kindKey: lit('"kind":'),
  imageKey: lit('"image":'),
  urlKey: lit('{"url":'),
  pathKey: lit('{"path":'),
  thinkingKey: lit('"thinking":'),
  isErrorTrue: lit('"is_error":true'),
  descriptionKey: lit('"description":'),
  parametersKey: lit('"parameters":'),
  legacyTrue: lit('"legacy":true'),
  systemMessage: lit('{"role":"system","content":['),
  userMessage: lit('{"role":"user","content":['),
  assistantMessage: lit('{"role":"assistant","content":['),
  toolMessage: lit('{"role":"tool","content":['),
  resultOpen: lit('{"type":"tool_result","id":'),
  view: lit('{"messages":['),
  embeddings: lit('{"input":['),
  tools: lit(',"tools":['),
  options: lit(',"options":'),
  // A text part as `{"text":...,"type":"text"}`: canonical member order, so the core need not
  // sort (and move) the part with its text.
  textOpen: lit('{"text":'),
  contentOpen: lit('{"content":['),
  contentRole: lit('],"role":'),
  textClose: lit(',"type":"text"'),
  model: lit(',"model":'),
  // A call part with its id next, as the Gemini and Converse walks open one.
  callOpen: lit('{"type":"tool_call","id":'),
};
