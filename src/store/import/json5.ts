/**
 * A reader for JSON5 (https://spec.json5.org/, 1.0.0), the text talkback writes its tapes in
 * (`JSON5.stringify(tape, null, 4)` in talkback's tape-store.js): member names without quotes,
 * strings in single quotes, `\x` and `\v` escapes, a comma after the last member. JSON.parse
 * reads none of those. The whole grammar is read, not only what JSON5.stringify writes, since
 * talkback's README tells users to edit their tapes by hand: comments, hexadecimal numbers,
 * `Infinity` and `NaN`, leading or trailing decimal points, explicit `+`, strings continued
 * over lines.
 *
 * Written here rather than taken from the `json5` package (the reference implementation, which
 * talkback depends on): the grammar is small, this is the only place that needs it, and the
 * import stays free of a runtime dependency. test/store/json5.test.ts checks it against that
 * package.
 */

/** Where a JSON5 text breaks: a UTF-16 offset into the text, and its line and column (1-based). */
export class Json5SyntaxError extends Error {
  constructor(
    readonly what: string,
    readonly offset: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${what} at line ${line}, column ${column}`);
  }
}

/**
 * Parses JSON5 text into the value it holds, as `JSON5.parse` does (the last of repeated member
 * names wins; `__proto__` is an own member, as JSON.parse makes it). Throws
 * {@link Json5SyntaxError} naming the line and column where the text breaks.
 *
 * @example
 * parseJson5("{ meta: { host: 'https://api.openai.com', }, }") // { meta: { host: 'https://api.openai.com' } }
 */
export function parseJson5(text: string): unknown {
  const p = new Reader(text);
  let value: unknown;
  try {
    p.space();
    value = p.value();
    p.space();
  } catch (e) {
    // A pathologically deep nesting runs out of stack: said as a place in the text, not a crash.
    if (e instanceof RangeError) throw p.fail('nesting too deep to read');
    throw e;
  }
  if (p.at < text.length) throw p.fail(`unexpected ${p.describe()} after the value`);
  return value;
}

const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;
/** ES5 IdentifierStart (letters, `$`, `_`) and IdentifierPart, as JSON5 names members. */
const ID_START = /[\p{L}\p{Nl}$_]/u;
const ID_PART = /[\p{L}\p{Nl}$_\p{Mn}\p{Mc}\p{Nd}\p{Pc}\u200C\u200D]/u;
/** JSON5's white space: JSON's, vertical tab, form feed, no-break space, line and paragraph separators, BOM and any other space separator. */
const SPACE = /[\t\n\v\f\r \u00A0\u2028\u2029\uFEFF\p{Zs}]/u;
const DIGIT = /[0-9]/;
const HEX = /[0-9a-fA-F]/;
const SINGLE_ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', "'": "'", '"': '"', '\\': '\\', '/': '/' };

class Reader {
  at = 0;
  constructor(readonly text: string) {}

  /** An error at the reader's place (or `at`). */
  fail(what: string, at = this.at): Json5SyntaxError {
    let line = 1;
    let start = 0;
    for (let i = 0; i < at && i < this.text.length; i++) {
      const c = this.text.charCodeAt(i);
      // CRLF is one line end.
      if (c === 0x0a || c === 0x2028 || c === 0x2029 || (c === 0x0d && this.text.charCodeAt(i + 1) !== 0x0a)) {
        line++;
        start = i + 1;
      }
    }
    return new Json5SyntaxError(what, at, line, at - start + 1);
  }

  /** The character at the reader's place, as messages quote it. */
  describe(): string {
    if (this.at >= this.text.length) return 'end of input';
    const c = String.fromCodePoint(this.text.codePointAt(this.at)!);
    return `character ${JSON.stringify(c)}`;
  }

  /** Skips white space and comments. */
  space(): void {
    const t = this.text;
    for (;;) {
      const c = t[this.at];
      if (c === undefined) return;
      if (c === '/' && t[this.at + 1] === '/') {
        this.at += 2;
        while (this.at < t.length && !LINE_TERMINATOR.test(t[this.at]!)) this.at++;
      } else if (c === '/' && t[this.at + 1] === '*') {
        const end = t.indexOf('*/', this.at + 2);
        if (end < 0) throw this.fail('a comment is not closed (*/)');
        this.at = end + 2;
      } else if (SPACE.test(c)) this.at++;
      else return;
    }
  }

  value(): unknown {
    const t = this.text;
    const c = t[this.at];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"' || c === "'") return this.string();
    if (c !== undefined && (DIGIT.test(c) || c === '-' || c === '+' || c === '.' || c === 'I' || c === 'N')) return this.number();
    for (const [word, v] of LITERALS) {
      if (t.startsWith(word, this.at)) {
        this.at += word.length;
        return v;
      }
    }
    throw this.fail(`unexpected ${this.describe()}`);
  }

  object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.at++;
    this.space();
    while (this.text[this.at] !== '}') {
      const key = this.memberName();
      this.space();
      if (this.text[this.at] !== ':') throw this.fail(`expected ":" after the member name ${JSON.stringify(key)}, found ${this.describe()}`);
      this.at++;
      this.space();
      const v = this.value();
      // As JSON.parse: a member named __proto__ is the object's own, not its prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value: v, writable: true, enumerable: true, configurable: true });
      else out[key] = v;
      this.space();
      if (this.text[this.at] === ',') {
        this.at++;
        this.space();
      } else if (this.text[this.at] !== '}') throw this.fail(`expected "," or "}" in an object, found ${this.describe()}`);
    }
    this.at++;
    return out;
  }

  array(): unknown[] {
    const out: unknown[] = [];
    this.at++;
    this.space();
    while (this.text[this.at] !== ']') {
      out.push(this.value());
      this.space();
      if (this.text[this.at] === ',') {
        this.at++;
        this.space();
      } else if (this.text[this.at] !== ']') throw this.fail(`expected "," or "]" in an array, found ${this.describe()}`);
    }
    this.at++;
    return out;
  }

  memberName(): string {
    const t = this.text;
    const c = t[this.at];
    if (c === '"' || c === "'") return this.string();
    const start = this.at;
    let name = '';
    for (;;) {
      const at = this.at;
      const part = name === '' ? ID_START : ID_PART;
      if (t[at] === '\\') {
        // An identifier may spell a character as \uXXXX.
        if (t[at + 1] !== 'u') throw this.fail('expected \\u in a member name', at);
        this.at = at + 2;
        const ch = String.fromCharCode(this.hexDigits(4));
        if (!part.test(ch)) throw this.fail(`the escape \\u${ch.charCodeAt(0).toString(16).padStart(4, '0')} is not a character of a member name`, at);
        name += ch;
        continue;
      }
      const cp = t.codePointAt(at);
      if (cp === undefined) break;
      const ch = String.fromCodePoint(cp);
      if (!part.test(ch)) break;
      name += ch;
      this.at += ch.length;
    }
    if (name === '') throw this.fail(`expected a member name, found ${this.describe()}`, start);
    return name;
  }

  /** A string in single or double quotes, with JSON5's escapes and line continuations. */
  string(): string {
    const t = this.text;
    const quote = t[this.at]!;
    const open = this.at;
    this.at++;
    let out = '';
    let from = this.at;
    for (;;) {
      const c = t[this.at];
      if (c === undefined) throw this.fail('a string is not closed', open);
      if (c === quote) {
        out += t.slice(from, this.at);
        this.at++;
        return out;
      }
      if (c === '\n' || c === '\r') throw this.fail('a line break in a string (write it as \\n, or end the line with \\ to continue the string)');
      if (c !== '\\') {
        this.at++;
        continue;
      }
      out += t.slice(from, this.at);
      this.at++;
      out += this.escape();
      from = this.at;
    }
  }

  /** The text of an escape, the reader just past its backslash. */
  escape(): string {
    const t = this.text;
    const c = t[this.at];
    if (c === undefined) throw this.fail('a string is not closed');
    const single = SINGLE_ESCAPES[c];
    if (single !== undefined) {
      this.at++;
      return single;
    }
    if (c === '0') {
      if (DIGIT.test(t[this.at + 1] ?? '')) throw this.fail('\\0 followed by a digit (octal escapes are not JSON5)');
      this.at++;
      return '\0';
    }
    if (c === 'x') {
      this.at++;
      return String.fromCharCode(this.hexDigits(2));
    }
    if (c === 'u') {
      this.at++;
      return String.fromCharCode(this.hexDigits(4));
    }
    // A line continuation: the backslash and the line end are no part of the string.
    if (c === '\r') {
      this.at += t[this.at + 1] === '\n' ? 2 : 1;
      return '';
    }
    if (c === '\n' || c === '\u2028' || c === '\u2029') {
      this.at++;
      return '';
    }
    if (DIGIT.test(c)) throw this.fail(`\\${c} (an octal escape) is not JSON5`);
    // Any other character escapes to itself.
    const cp = t.codePointAt(this.at)!;
    const ch = String.fromCodePoint(cp);
    this.at += ch.length;
    return ch;
  }

  hexDigits(n: number): number {
    const digits = this.text.slice(this.at, this.at + n);
    if (digits.length !== n || ![...digits].every((d) => HEX.test(d))) throw this.fail(`expected ${n} hexadecimal digits`);
    this.at += n;
    return parseInt(digits, 16);
  }

  /** A number: decimal (`.5`, `5.`, exponents), hexadecimal, `Infinity` or `NaN`, each with an optional sign. */
  number(): number {
    const t = this.text;
    const start = this.at;
    let sign = 1;
    if (t[this.at] === '+' || t[this.at] === '-') {
      sign = t[this.at] === '-' ? -1 : 1;
      this.at++;
    }
    if (t.startsWith('Infinity', this.at)) {
      this.at += 8;
      return sign * Infinity;
    }
    if (t.startsWith('NaN', this.at)) {
      this.at += 3;
      return NaN;
    }
    if (t[this.at] === '0' && (t[this.at + 1] === 'x' || t[this.at + 1] === 'X')) {
      this.at += 2;
      const from = this.at;
      while (HEX.test(t[this.at] ?? '')) this.at++;
      if (this.at === from) throw this.fail('expected hexadecimal digits after 0x');
      this.endOfNumber();
      return sign * parseInt(t.slice(from, this.at), 16);
    }
    const digitsFrom = this.at;
    let intDigits = 0;
    while (DIGIT.test(t[this.at] ?? '')) {
      this.at++;
      intDigits++;
    }
    if (intDigits > 1 && t[digitsFrom] === '0') throw this.fail('a number with a leading zero', digitsFrom);
    let fracDigits = 0;
    if (t[this.at] === '.') {
      this.at++;
      while (DIGIT.test(t[this.at] ?? '')) {
        this.at++;
        fracDigits++;
      }
    }
    if (intDigits === 0 && fracDigits === 0) throw this.fail(`expected a number, found ${this.describe()}`);
    if (t[this.at] === 'e' || t[this.at] === 'E') {
      this.at++;
      if (t[this.at] === '+' || t[this.at] === '-') this.at++;
      const from = this.at;
      while (DIGIT.test(t[this.at] ?? '')) this.at++;
      if (this.at === from) throw this.fail('expected the digits of an exponent');
    }
    this.endOfNumber();
    // Number() reads `5.` and `.5` as JavaScript does; the sign was taken above.
    return sign * Number(t.slice(digitsFrom, this.at));
  }

  /** A number runs into no letter or digit (`12abc` is no number). */
  endOfNumber(): void {
    const c = this.text[this.at];
    if (c !== undefined && ID_PART.test(c)) throw this.fail(`unexpected ${this.describe()} in a number`);
  }
}

const LITERALS: [string, unknown][] = [
  ['null', null],
  ['true', true],
  ['false', false],
];
