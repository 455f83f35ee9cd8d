// Deterministic benchmark workloads: OpenAI chat-completions shaped data.
//
// Every workload is generated from its own seeded PRNG, so the produced JS
// values (and therefore the raw JSON bytes) are byte-identical on every run
// and independent of which other workloads were built.
//
//   S        1 message
//   M        50 messages + 20 tool definitions (full request body ~30 KB)
//   L        1,000 messages (~550 KB)
//   XL       10,000 messages (~5.5 MB)
//   SMALL10K 10,000 separate ~200-byte messages
//   L-esc    1,000 messages whose text is escape-heavy (newlines, tabs, quotes, backslashes,
//            JSON-encoded tool arguments and results that escape again, non-ASCII, emoji)
//   SMALL10K-path  10,000 ~200-byte messages as one conversation (message + path hashes)
//   STR10K-path    10,000 plain-string prompts (escape-heavy, non-ASCII) as one conversation
//   M-tools  (request body only, see requestBodies) ~47 KB: 20 nested tool schemas, a dozen
//            tool calls with nested JSON arguments
//
// Each built workload exposes:
//   messages       the message array as a JS value
//   messagesBytes  UTF-8 bytes of JSON.stringify(messages)
//   body / bodyBytes  (M only) the full request body and its JSON bytes

const encoder = new TextEncoder();

// ---------------------------------------------------------------- PRNG ----

/** 32-bit FNV-1a of a string: turns a seed label into PRNG state. */
function fnv1a(str) {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** sfc32 small fast counter PRNG; returns floats in [0, 1). */
function sfc32(a, b, c, d) {
  return function next() {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
}

export class Rng {
  constructor(seedLabel) {
    const s = fnv1a(String(seedLabel));
    this.next = sfc32(0x9e3779b9, 0x243f6a88, 0xb7e15162, s);
    for (let i = 0; i < 16; i++) this.next(); // mix the seed in
  }
  /** float in [0, 1) */
  float() { return this.next(); }
  /** integer in [lo, hi] inclusive */
  int(lo, hi) { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p) { return this.next() < p; }
  pick(arr) { return arr[Math.floor(this.next() * arr.length)]; }
  alnum(n) {
    const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    let s = '';
    for (let i = 0; i < n; i++) s += chars[Math.floor(this.next() * chars.length)];
    return s;
  }
}

// ---------------------------------------------------------------- text ----

const WORDS = (
  'the a an of to and in is it that for on with as this be are was by at from or have not ' +
  'you we they can will would should could about which when what there their more also into ' +
  'than then some any each other only new first last time data file value result request ' +
  'response function error message user model system tool call output input number string ' +
  'list table query update delete create order account invoice payment customer report ' +
  'summary weather forecast temperature city travel flight hotel booking schedule meeting ' +
  'calendar email address project deadline budget review change test build release version ' +
  'server database cache latency memory network cluster deploy config setting option field ' +
  'record entry token context prompt answer question example please thanks sure here let me ' +
  'check look find show explain compare help need want make sure quickly carefully because ' +
  'however therefore although while since until after before during between within without ' +
  'important simple complex large small fast slow correct wrong missing available recent'
).split(' ');

// Realistic non-ASCII: accents, Greek/Cyrillic, CJK, Hangul, emoji (astral,
// with modifiers and ZWJ sequences), mathematical alphanumerics and CJK
// extension B (astral), plus RTL text. No lone surrogates: those are not
// valid I-JSON and are outside RFC 8785.
const UNICODE = [
  'café', 'naïve', 'Zürich', 'São Paulo', 'Ångström', 'crème brûlée', 'façade', 'Kraków',
  'Ελληνικά', 'Привет, мир', 'Москва', '日本語のテキスト', '東京都', '中文字符', '北京市',
  '한국어 문장', '서울', 'مرحبا بالعالم', 'שלום', 'हिन्दी',
  '😀', '🚀', '👍🏽', '🎉🎉', '👩‍💻', '🇫🇷', '✅', '⚠️', '€100', '£42', '¥500', '→', '…', '“quoted”',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𝟘𝟙𝟚', '𠜎𠜱𠝹', '𐍈', '🦀',
];

// Words of the "-intl" workloads: everyday non-English words (accented Latin, Cyrillic, Greek,
// CJK, Hangul) and emoji, as multilingual chats carry them. While such a workload is built,
// `intl` makes this share of the words non-ASCII (the other workloads keep 3.5% UNICODE).
const INTL = [
  'déjà', 'über', 'niño', 'façade', 'crème', 'São', 'Zürich', 'année', 'größe', 'señor', 'où', 'très', 'café', 'naïve',
  'Привет', 'спасибо', 'погода', 'город', 'Ελληνικά', 'καιρός',
  '東京', '天気予報', '会議', '日本語', '中文', '北京', '明日', '予約', '안녕하세요', '서울', '날씨', '회의',
  '😀', '🚀', '👍🏽', '🎉', '👩‍💻', '🇫🇷', '✅', '€', '→', '…', '🦀', '𠜎',
];
let intl = 0;
// While an escape-heavy workload is built: text carries what real chats hold and JSON must
// escape (newlines, tabs, quotes, backslashes), and tool payloads are JSON inside JSON.
let escapes = false;
const ESCAPED = ['"quoted"', 'C:\\Users\\dev', 'a\tb', 'line\nbreak', "it's", '\\d+\\.\\d*', '{"k": "v"}', 'say "hi"\n', '\ttab'];

function word(rng) { return rng.pick(WORDS); }

function sentence(rng, minWords = 6, maxWords = 18) {
  const n = rng.int(minWords, maxWords);
  const parts = [];
  for (let i = 0; i < n; i++) {
    if (escapes && rng.chance(0.12)) parts.push(rng.pick(ESCAPED));
    else if (intl > 0 && rng.chance(intl)) parts.push(rng.pick(INTL));
    else if (rng.chance(0.035)) parts.push(rng.pick(UNICODE));
    else if (rng.chance(0.03)) parts.push(String(rng.int(0, 99999)));
    else parts.push(word(rng));
  }
  let s = parts.join(' ');
  s = s[0].toUpperCase() + s.slice(1);
  const end = escapes ? rng.pick(['.', '.\n', '?\n\n', '!', ':\n\t', '."']) : rng.pick(['.', '.', '.', '?', '!', ':']);
  if (rng.chance(0.06)) s = `"${s}"`;
  return s + end;
}

function paragraph(rng, minSent, maxSent) {
  const n = rng.int(minSent, maxSent);
  const out = [];
  for (let i = 0; i < n; i++) out.push(sentence(rng));
  return out.join(' ');
}

const CODE_SNIPPETS = [
  'const result = await client.chat.completions.create({ model, messages });',
  'if (err) {\n\tconsole.error("failed:", err.message);\n\treturn null;\n}',
  'SELECT id, name, total FROM orders WHERE status = \'open\' ORDER BY created_at DESC LIMIT 10;',
  'path = "C:\\\\Users\\\\dev\\\\project\\\\config.json"',
  'def add(a, b):\n    """Return the sum."""\n    return a + b',
  'regex: ^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$',
];

/** Text with some structure: paragraphs, bullet lists, code blocks. */
function richText(rng, minSent, maxSent) {
  let s = paragraph(rng, minSent, maxSent);
  if (rng.chance(0.2)) {
    s += '\n\n';
    const items = rng.int(2, 4);
    for (let i = 0; i < items; i++) s += `- ${sentence(rng, 3, 8)}\n`;
  }
  if (rng.chance(escapes ? 0.5 : 0.12)) s += '\n```\n' + rng.pick(CODE_SNIPPETS) + '\n```\n';
  return s;
}

// --------------------------------------------------------------- tools ----

const TOOL_SPECS = [
  ['get_weather', 'Get the current weather and a short forecast for a city.',
    [['location', 'string', 'City and country, e.g. "Paris, France"'], ['unit', 'enum', ['celsius', 'fahrenheit']], ['days', 'integer', 'Number of forecast days', 1, 14]]],
  ['search_web', 'Search the web and return the top results with snippets.',
    [['query', 'string', 'The search query'], ['max_results', 'integer', 'Maximum number of results', 1, 50], ['recency_days', 'integer', 'Only results newer than this many days', 0, 3650]]],
  ['read_file', 'Read a UTF-8 text file from the workspace.',
    [['path', 'string', 'Path relative to the workspace root'], ['offset', 'integer', 'Byte offset to start reading', 0, 1e9], ['limit', 'integer', 'Maximum bytes to read', 1, 1048576]]],
  ['write_file', 'Write a UTF-8 text file to the workspace, replacing it.',
    [['path', 'string', 'Path relative to the workspace root'], ['content', 'string', 'Full file content']]],
  ['run_sql', 'Run a read-only SQL query against the analytics warehouse.',
    [['sql', 'string', 'A single SELECT statement'], ['timeout_s', 'number', 'Timeout in seconds', 0.5, 120]]],
  ['send_email', 'Send an email on behalf of the user.',
    [['to', 'string', 'Recipient address'], ['subject', 'string', 'Subject line'], ['body', 'string', 'Plain-text body'], ['priority', 'enum', ['low', 'normal', 'high']]]],
  ['create_calendar_event', 'Create an event in the user calendar.',
    [['title', 'string', 'Event title'], ['start', 'string', 'ISO 8601 start time'], ['duration_minutes', 'integer', 'Duration', 5, 1440], ['attendees', 'array', 'Email addresses']]],
  ['lookup_order', 'Look up an order by id and return its status and items.',
    [['order_id', 'string', 'The order identifier'], ['include_items', 'boolean', 'Whether to include line items']]],
  ['refund_order', 'Issue a refund for an order.',
    [['order_id', 'string', 'The order identifier'], ['amount', 'number', 'Refund amount in the order currency', 0.01, 100000], ['reason', 'string', 'Reason shown to the customer']]],
  ['convert_currency', 'Convert an amount between currencies at the current rate.',
    [['amount', 'number', 'Amount to convert', 0, 1e12], ['from', 'string', 'ISO 4217 code'], ['to', 'string', 'ISO 4217 code']]],
  ['translate_text', 'Translate text into a target language.',
    [['text', 'string', 'Text to translate'], ['target_language', 'string', 'BCP 47 language tag'], ['formality', 'enum', ['default', 'more', 'less']]]],
  ['get_stock_quote', 'Get the latest quote for a ticker symbol.',
    [['symbol', 'string', 'Ticker symbol'], ['exchange', 'string', 'Exchange code']]],
  ['list_directory', 'List files in a workspace directory.',
    [['path', 'string', 'Directory path'], ['recursive', 'boolean', 'Recurse into subdirectories'], ['max_depth', 'integer', 'Maximum depth', 1, 32]]],
  ['http_get', 'Fetch a URL with HTTP GET and return the body as text.',
    [['url', 'string', 'Absolute URL'], ['timeout_ms', 'integer', 'Timeout in milliseconds', 100, 60000]]],
  ['calculate', 'Evaluate an arithmetic expression exactly.',
    [['expression', 'string', 'Expression, e.g. "2 * (3 + 4)"'], ['precision', 'integer', 'Decimal places', 0, 64]]],
  ['get_user_profile', 'Fetch the profile of the current user.',
    [['fields', 'array', 'Fields to return']]],
  ['book_flight', 'Book a flight for the user.',
    [['origin', 'string', 'IATA airport code'], ['destination', 'string', 'IATA airport code'], ['date', 'string', 'YYYY-MM-DD'], ['cabin', 'enum', ['economy', 'premium_economy', 'business', 'first']], ['max_price', 'number', 'Maximum price in USD', 0, 50000]]],
  ['search_hotels', 'Search hotels in a city for given dates.',
    [['city', 'string', 'City name'], ['check_in', 'string', 'YYYY-MM-DD'], ['nights', 'integer', 'Number of nights', 1, 60], ['min_rating', 'number', 'Minimum rating', 0, 5]]],
  ['create_ticket', 'Open a support ticket.',
    [['title', 'string', 'Short summary'], ['description', 'string', 'Detailed description'], ['severity', 'enum', ['sev1', 'sev2', 'sev3', 'sev4']]]],
  ['embed_text', 'Compute an embedding vector for a text.',
    [['text', 'string', 'Input text'], ['dimensions', 'integer', 'Output dimensions', 64, 3072], ['normalize', 'boolean', 'L2-normalize the vector']]],
];

function toolDefinition(spec, rng) {
  const [name, description, params] = spec;
  const properties = {};
  const required = [];
  for (const [pname, ptype, a, b, c] of params) {
    let schema;
    if (ptype === 'enum') schema = { type: 'string', enum: a };
    else if (ptype === 'array') schema = { type: 'array', items: { type: 'string' }, description: a };
    else if (ptype === 'integer' || ptype === 'number') {
      schema = { type: ptype, description: a };
      if (b !== undefined) schema.minimum = b;
      if (c !== undefined) schema.maximum = c;
      if (ptype === 'number' && rng.chance(0.5)) schema.multipleOf = 1e-5;
    } else schema = { type: ptype, description: a };
    properties[pname] = schema;
    if (rng.chance(0.6) || required.length === 0) required.push(pname);
  }
  const fn = { name, description, parameters: { type: 'object', properties, required, additionalProperties: false } };
  if (rng.chance(0.5)) fn.strict = true;
  return { type: 'function', function: fn };
}

/** A plausible argument object for a tool call (key order = declaration order). */
function toolArguments(spec, rng) {
  const args = {};
  for (const [pname, ptype, a, b, c] of spec[2]) {
    if (!rng.chance(0.85)) continue;
    switch (ptype) {
      case 'enum': args[pname] = rng.pick(a); break;
      case 'boolean': args[pname] = rng.chance(0.5); break;
      case 'integer': args[pname] = rng.int(b ?? 0, Math.min(c ?? 1000, 100000)); break;
      case 'number': args[pname] = Math.round(rng.float() * Math.min(c ?? 100, 10000) * 100) / 100; break;
      case 'array': args[pname] = Array.from({ length: rng.int(1, 3) }, () => `${word(rng)}@example.com`); break;
      default: args[pname] = rng.chance(0.2) ? `${word(rng)} ${rng.pick(UNICODE)}` : sentence(rng, 2, 7);
    }
  }
  if (escapes) args.options = { filters: [{ field: word(rng), op: rng.pick(['=', '~', '>=']), value: sentence(rng, 1, 4) }], context: nestedPayload(rng, 1) };
  return args;
}

/** A nested JSON payload as tools return it: objects in arrays, text with escapes, numbers. */
function nestedPayload(rng, depth = 0) {
  const o = { id: `${word(rng)}_${rng.alnum(6)}`, score: rng.int(0, 1e6) / 1e4, ok: rng.chance(0.8), note: sentence(rng, 3, 9) };
  if (depth < 2) o.children = Array.from({ length: rng.int(1, 3) }, () => nestedPayload(rng, depth + 1));
  if (rng.chance(0.3)) o.raw = JSON.stringify({ cmd: rng.pick(CODE_SNIPPETS), exit: rng.int(0, 2) });
  return o;
}

function toolResult(rng) {
  if (escapes && rng.chance(0.6)) {
    const payload = { status: 'ok', results: Array.from({ length: rng.int(1, 4) }, () => nestedPayload(rng)), stderr: `warning: ${sentence(rng, 3, 6)}\n\tat line ${rng.int(1, 999)}` };
    // Sometimes encoded twice, as tools that wrap another tool's output do.
    return rng.chance(0.3) ? JSON.stringify({ wrapped: JSON.stringify(payload) }) : JSON.stringify(payload, null, rng.chance(0.5) ? 2 : undefined);
  }
  const kind = rng.int(0, 4);
  if (kind === 0) {
    // JSON payload as string (what tool messages usually carry)
    const items = [];
    for (let i = 0, n = rng.int(1, 4); i < n; i++) {
      items.push({ id: rng.int(1, 999999), name: `${word(rng)} ${word(rng)}`, price: rng.int(1, 99999) / 100, in_stock: rng.chance(0.7), tags: [word(rng), word(rng)] });
    }
    return JSON.stringify({ status: 'ok', count: items.length, items, latency_ms: rng.int(3, 900) });
  }
  if (kind === 1) {
    // terminal output with ANSI escapes and tabs (control characters)
    return `\u001b[32m✔\u001b[0m ${sentence(rng, 3, 8)}\n\tfiles: ${rng.int(1, 400)}\telapsed: ${rng.int(1, 9999) / 1000}s\n${paragraph(rng, 1, 2)}`;
  }
  if (kind === 2) return JSON.stringify({ temperature_c: rng.int(-300, 450) / 10, condition: rng.pick(['sunny', 'cloudy', 'rain', 'snow']), city: rng.pick(UNICODE.slice(0, 20)), humidity: rng.int(0, 100) / 100 });
  return paragraph(rng, 4, 10);
}

// ------------------------------------------------------------ messages ----

function systemMessage(rng) {
  return { role: 'system', content: `You are a helpful assistant for Acme Corp. ${paragraph(rng, 5, 9)} Always answer in the user's language.` };
}

function userMessage(rng) {
  if (rng.chance(0.2)) {
    // content-part array form
    const content = [{ type: 'text', text: richText(rng, 2, 6) }];
    if (rng.chance(0.4)) content.push({ type: 'image_url', image_url: { url: `https://images.example.com/${rng.alnum(16)}.png`, detail: rng.pick(['low', 'high', 'auto']) } });
    else content.push({ type: 'text', text: sentence(rng) });
    return { role: 'user', content };
  }
  const m = { role: 'user', content: richText(rng, 2, 7) };
  if (rng.chance(0.1)) m.name = `user_${rng.alnum(6)}`;
  return m;
}

function assistantText(rng) {
  const content = richText(rng, 5, 13);
  const m = { role: 'assistant', content };
  if (rng.chance(0.15)) m.refusal = null;
  if (rng.chance(0.08)) {
    const start = rng.int(0, Math.max(0, content.length - 20));
    m.annotations = [{ type: 'url_citation', url_citation: { start_index: start, end_index: start + rng.int(5, 19), url: `https://docs.example.com/${word(rng)}/${rng.alnum(8)}`, title: sentence(rng, 2, 5) } }];
  }
  if (rng.chance(0.06)) {
    // numbers exercising the ECMAScript number serialization
    m.metadata = {
      latency_ms: rng.int(40, 20000), temperature: 0.7, top_p: 1, score: rng.int(0, 1e6) / 1e6,
      epsilon: 1e-5, logprob: -rng.int(1, 99999) / 1e7, big: 1e21, tokens: 123456789012, sum: 0.1 + 0.2,
    };
  }
  return m;
}

/**
 * Generate a conversation of exactly `count` messages: a system prompt, then
 * user turns and assistant turns; assistant turns sometimes call tools, which
 * is followed by one tool message per call and a final assistant answer.
 */
export function conversation(rng, count, specs = TOOL_SPECS) {
  const out = [systemMessage(rng)];
  while (out.length < count) {
    out.push(userMessage(rng));
    if (rng.chance(0.45)) {
      const calls = [];
      for (let i = 0, n = rng.chance(0.75) ? 1 : rng.int(2, 3); i < n; i++) {
        const spec = rng.pick(specs);
        calls.push({ id: `call_${rng.alnum(24)}`, type: 'function', function: { name: spec[0], arguments: JSON.stringify(toolArguments(spec, rng)) } });
      }
      out.push({ role: 'assistant', content: rng.chance(0.7) ? null : sentence(rng), tool_calls: calls });
      for (const c of calls) out.push({ role: 'tool', tool_call_id: c.id, content: toolResult(rng) });
    }
    out.push(assistantText(rng));
  }
  out.length = count;
  return out;
}

function smallMessage(rng) {
  // ~200 bytes as JSON
  const role = rng.chance(0.5) ? 'user' : 'assistant';
  let text = sentence(rng, 8, 14);
  while (text.length < 150) text += ' ' + sentence(rng, 3, 8);
  if (text.length > 190) {
    // cut on a code point boundary (never split a surrogate pair)
    let cut = 186;
    const c = text.charCodeAt(cut - 1);
    if (c >= 0xd800 && c <= 0xdbff) cut--;
    text = text.slice(0, cut).trimEnd() + '…';
  }
  const m = { role, content: text };
  if (rng.chance(0.1)) m.name = `agent_${rng.alnum(4)}`;
  return m;
}

// ----------------------------------------------------------- workloads ----

export const WORKLOADS = {
  S: { description: '1 message', kind: 'path' },
  M: { description: '50 messages + 20 tool definitions (request body)', kind: 'path' },
  L: { description: '1,000 messages', kind: 'path' },
  'L-intl': { description: '1,000 messages, 30% non-ASCII words (accents, Cyrillic, CJK, Hangul, emoji)', kind: 'path' },
  XL: { description: '10,000 messages', kind: 'path' },
  SMALL10K: { description: '10,000 separate ~200 B messages', kind: 'many' },
  'L-esc': { description: '1,000 messages, escape-heavy text (newlines, tabs, quotes, backslashes, JSON in JSON, non-ASCII, emoji)', kind: 'path' },
  'SMALL10K-path': { description: '10,000 ~200 B messages as one conversation (message + path hashes)', kind: 'path' },
  'STR10K-path': { description: '10,000 prompts that are plain strings (as the conversation tree keeps them), escape-heavy and non-ASCII text, as one conversation', kind: 'path' },
};

export const WORKLOAD_NAMES = Object.keys(WORKLOADS);

const cache = new Map();

/** Build (and memoize) one workload by name. Deterministic. */
export function buildWorkload(name) {
  if (cache.has(name)) return cache.get(name);
  const rng = new Rng(`tapedeck-bench/${name}/v1`);
  let messages;
  let body;
  switch (name) {
    case 'S': messages = [userMessage(rng)]; break;
    case 'M': {
      const tools = TOOL_SPECS.map((s) => toolDefinition(s, rng));
      messages = conversation(rng, 50);
      body = {
        model: 'gpt-4o-2024-08-06',
        messages,
        tools,
        tool_choice: 'auto',
        parallel_tool_calls: true,
        temperature: 0.7,
        top_p: 1,
        frequency_penalty: 0,
        presence_penalty: 0,
        max_completion_tokens: 4096,
        seed: 1234567,
        logit_bias: { 50256: -100, 1734: 2.5 },
        stream: false,
        user: `user-${rng.alnum(12)}`,
      };
      break;
    }
    case 'L': messages = conversation(rng, 1000); break;
    case 'L-intl':
      intl = 0.3;
      try {
        messages = conversation(rng, 1000);
      } finally {
        intl = 0;
      }
      break;
    case 'XL': messages = conversation(rng, 10000); break;
    case 'SMALL10K': messages = Array.from({ length: 10000 }, () => smallMessage(rng)); break;
    case 'SMALL10K-path': messages = Array.from({ length: 10000 }, () => smallMessage(rng)); break;
    case 'STR10K-path':
      escapes = true;
      intl = 0.3;
      try {
        messages = Array.from({ length: 10000 }, () => smallMessage(rng).content);
      } finally {
        escapes = false;
        intl = 0;
      }
      break;
    case 'L-esc':
      escapes = true;
      intl = 0.1;
      try {
        messages = conversation(rng, 1000);
      } finally {
        escapes = false;
        intl = 0;
      }
      break;
    default: throw new Error(`unknown workload ${name}`);
  }
  const w = {
    name,
    ...WORKLOADS[name],
    messages,
    messagesBytes: encoder.encode(JSON.stringify(messages)),
  };
  if (body) {
    w.body = body;
    w.bodyBytes = encoder.encode(JSON.stringify(body));
  }
  cache.set(name, w);
  return w;
}

// ------------------------------------------------------- request shapes ----

/** A JSON Schema property with nesting: objects of objects, arrays of objects, enums. */
function schemaProperty(rng, depth) {
  const kind = depth >= 2 ? rng.pick(['string', 'number', 'enum', 'boolean']) : rng.pick(['string', 'object', 'array', 'enum', 'integer', 'string']);
  const description = sentence(rng, 3, 8);
  switch (kind) {
    case 'object': {
      const properties = {};
      for (let i = 0, n = rng.int(2, 3); i < n; i++) properties[`${word(rng)}_${rng.alnum(3).toLowerCase()}`] = schemaProperty(rng, depth + 1);
      return { type: 'object', description, properties, required: Object.keys(properties).slice(0, 1), additionalProperties: false };
    }
    case 'array':
      return { type: 'array', description, items: schemaProperty(rng, depth + 1), minItems: 0, maxItems: rng.int(5, 100) };
    case 'enum':
      return { type: 'string', description, enum: Array.from({ length: rng.int(2, 5) }, () => word(rng)) };
    case 'integer':
    case 'number':
      return { type: kind, description, minimum: 0, maximum: rng.int(10, 1e6) };
    default:
      return { type: kind, description };
  }
}

/** A value that fits a schema property, as a model fills in tool-call arguments. */
function argumentFor(rng, schema) {
  switch (schema.type) {
    case 'object': return Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, argumentFor(rng, v)]));
    case 'array': return Array.from({ length: rng.int(1, 3) }, () => argumentFor(rng, schema.items));
    case 'integer': return rng.int(0, schema.maximum);
    case 'number': return Math.round(rng.float() * 1e5) / 100;
    case 'boolean': return rng.chance(0.5);
    default: return schema.enum ? rng.pick(schema.enum) : sentence(rng, 2, 8);
  }
}

/**
 * An OpenAI chat body heavy in tools (~47 KB): 20 tool schemas with nested object and array
 * parameters, and a conversation with a dozen tool calls whose JSON arguments nest, each answered
 * by a tool message carrying a JSON result. Deterministic.
 */
function toolHeavyBody() {
  const rng = new Rng('tapedeck-bench/M-tools/v1');
  const tools = TOOL_SPECS.map(([name, description]) => {
    const properties = {};
    for (let i = 0, n = rng.int(2, 4); i < n; i++) properties[`${word(rng)}_${rng.alnum(4).toLowerCase()}`] = schemaProperty(rng, 0);
    return { type: 'function', function: { name, description, parameters: { type: 'object', properties, required: Object.keys(properties).slice(0, 2), additionalProperties: false }, strict: true } };
  });
  const messages = [systemMessage(rng)];
  let calls = 0;
  while (calls < 12) {
    messages.push(userMessage(rng));
    const n = Math.min(12 - calls, rng.int(1, 2));
    const toolCalls = [];
    for (let i = 0; i < n; i++) {
      const t = rng.pick(tools).function;
      toolCalls.push({ id: `call_${rng.alnum(24)}`, type: 'function', function: { name: t.name, arguments: JSON.stringify(argumentFor(rng, t.parameters)) } });
    }
    calls += n;
    messages.push({ role: 'assistant', content: null, tool_calls: toolCalls });
    for (const c of toolCalls) messages.push({ role: 'tool', tool_call_id: c.id, content: JSON.stringify({ ok: true, result: nestedPayload(rng, rng.int(0, 1)) }) });
    messages.push(assistantText(rng));
  }
  return { model: 'gpt-4o-2024-08-06', messages, tools, tool_choice: 'auto', parallel_tool_calls: true, temperature: 0.2, max_completion_tokens: 2048, stream: false };
}

const textOf = (content) =>
  typeof content === 'string' ? content : Array.isArray(content) ? content.filter((p) => p.type === 'text').map((p) => p.text).join('\n') : '';

/**
 * The M request body (an OpenAI chat completions call) as each request shape tapedeck keys
 * would carry the same conversation: OpenAI chat as is, Anthropic messages (system apart,
 * tool_use / tool_result blocks, input_schema), OpenAI Responses (input items, function_call
 * and function_call_output items, instructions) and the generic shape (messages, tools,
 * context, options), and the conversation's texts as one OpenAI embeddings batch. Deterministic:
 * derived from the M workload only.
 */
export function requestBodies() {
  if (cache.has('bodies')) return cache.get('bodies');
  const m = buildWorkload('M');
  const { messages, tools, model: _model, ...options } = m.body;
  const [system, ...rest] = messages;
  const anthropicMessages = [];
  for (const msg of rest) {
    if (msg.role === 'tool') {
      const block = { type: 'tool_result', tool_use_id: msg.tool_call_id, content: msg.content };
      const last = anthropicMessages[anthropicMessages.length - 1];
      if (last?.role === 'user' && Array.isArray(last.content) && last.content.every((b) => b.type === 'tool_result')) last.content.push(block);
      else anthropicMessages.push({ role: 'user', content: [block] });
      continue;
    }
    const blocks = [];
    if (typeof msg.content === 'string') blocks.push({ type: 'text', text: msg.content });
    else if (Array.isArray(msg.content)) {
      for (const p of msg.content) {
        if (p.type === 'text') blocks.push({ type: 'text', text: p.text });
        else if (p.type === 'image_url') blocks.push({ type: 'image', source: { type: 'url', url: p.image_url.url } });
      }
    }
    for (const c of msg.tool_calls ?? []) blocks.push({ type: 'tool_use', id: c.id.replace('call_', 'toolu_'), name: c.function.name, input: JSON.parse(c.function.arguments) });
    anthropicMessages.push({ role: msg.role, content: blocks.length === 1 && blocks[0].type === 'text' ? blocks[0].text : blocks });
  }
  for (const a of anthropicMessages) {
    if (Array.isArray(a.content)) for (const b of a.content) if (b.type === 'tool_result') b.tool_use_id = b.tool_use_id.replace('call_', 'toolu_');
  }
  const anthropic = {
    model: 'claude-sonnet-4-5-20250929',
    max_tokens: 4096,
    system: [{ type: 'text', text: system.content, cache_control: { type: 'ephemeral' } }],
    messages: anthropicMessages,
    tools: tools.map((t) => ({ name: t.function.name, description: t.function.description, input_schema: t.function.parameters })),
    tool_choice: { type: 'auto' },
    temperature: 0,
    stream: true,
    metadata: { user_id: 'user-42' },
  };
  const input = [];
  for (const msg of rest) {
    if (msg.role === 'tool') {
      input.push({ type: 'function_call_output', call_id: msg.tool_call_id, output: msg.content });
      continue;
    }
    const text = textOf(msg.content);
    if (text) input.push({ role: msg.role, content: [{ type: msg.role === 'assistant' ? 'output_text' : 'input_text', text }] });
    for (const c of msg.tool_calls ?? []) input.push({ type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments, id: `fc_${c.id.slice(5)}`, status: 'completed' });
  }
  const responses = {
    model: 'gpt-4.1',
    instructions: system.content,
    input,
    tools: tools.map((t) => ({ type: 'function', name: t.function.name, description: t.function.description, parameters: t.function.parameters, strict: false })),
    temperature: 0.2,
    store: false,
    stream: false,
  };
  const generic = {
    model: 'local-llm',
    messages,
    tools: tools.map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters })),
    context: { currentNode: 'triage', locale: 'fr-FR', userTier: 'pro' },
    options: { temperature: 0, seed: 7, max_tokens: 1024 },
  };
  // Embeddings: the conversation's texts as one batch of inputs.
  const embeddings = {
    model: 'text-embedding-3-small',
    input: messages.map((x) => textOf(x.content)).filter((t) => t !== ''),
    encoding_format: 'float',
    dimensions: 512,
    user: 'user-42',
  };
  const bodies = { 'openai-chat': m.body, anthropic, 'openai-responses': responses, 'openai-embeddings': embeddings, generic, 'openai-chat-tools': toolHeavyBody() };
  const out = Object.fromEntries(Object.entries(bodies).map(([k, v]) => [k, { body: v, bytes: encoder.encode(JSON.stringify(v)) }]));
  cache.set('bodies', out);
  return out;
}

/**
 * The requests of a conversation growing turn by turn with the same tools: every prefix of the
 * `shape` body's (an OpenAI chat body of requestBodies()) messages that ends where the model
 * answers next, as raw bytes, shortest first. Between two of them only the messages change.
 */
export function conversationTurns(shape = 'openai-chat-tools') {
  const key = `turns:${shape}`;
  if (cache.has(key)) return cache.get(key);
  const { body } = requestBodies()[shape];
  const out = [];
  for (let k = 2; k <= body.messages.length; k++) {
    if (k < body.messages.length && body.messages[k].role !== 'assistant') continue;
    out.push(encoder.encode(JSON.stringify({ ...body, messages: body.messages.slice(0, k) })));
  }
  cache.set(key, out);
  return out;
}

/**
 * `count` versions of the `shape` body (an OpenAI chat body of requestBodies()) whose tool
 * lists all differ (the first tool's description ends in its number): each one a conversation's
 * first request, whose tool list was never seen.
 */
export function newToolLists(shape, count) {
  const { body } = requestBodies()[shape];
  return Array.from({ length: count }, (_, i) => {
    const tools = body.tools.map((t, j) => (j === 0 ? { ...t, function: { ...t.function, description: `${t.function.description} #${i}` } } : t));
    return encoder.encode(JSON.stringify({ ...body, tools }));
  });
}

/**
 * The M conversation as an Ollama `/api/chat` body (~40 KB): text messages, tool calls with
 * object arguments and no ids, tool results linked by `tool_name`, OpenAI-shaped tools, an
 * `options` object and `keep_alive`. Derived from the M workload only (image parts, which
 * Ollama takes as base64 only, are left out).
 */
export function ollamaChatBody() {
  if (cache.has('ollama')) return cache.get('ollama');
  const m = buildWorkload('M');
  const names = new Map();
  const messages = m.body.messages.map((msg) => {
    if (msg.role === 'tool') return { role: 'tool', content: textOf(msg.content) || String(msg.content ?? ''), tool_name: names.get(msg.tool_call_id) };
    const out = { role: msg.role, content: textOf(msg.content) };
    if (msg.tool_calls) {
      out.tool_calls = msg.tool_calls.map((c) => {
        names.set(c.id, c.function.name);
        return { function: { name: c.function.name, arguments: JSON.parse(c.function.arguments) } };
      });
    }
    return out;
  });
  const body = { model: 'llama3.1:8b', messages, tools: m.body.tools, stream: false, keep_alive: '10m', options: { temperature: 0, seed: 42, num_ctx: 32768, num_predict: 1024, num_thread: 8 } };
  const out = { body, bytes: encoder.encode(JSON.stringify(body)), endpoint: { method: 'POST', url: '/api/chat' } };
  cache.set('ollama', out);
  return out;
}

/**
 * The M conversation as a Gemini generateContent body (contents with user/model roles,
 * functionCall / functionResponse parts, fileData images, functionDeclarations, systemInstruction,
 * generationConfig and safetySettings), sent to `endpoint`. Deterministic: derived from the M
 * workload only.
 */
export function geminiBody() {
  if (cache.has('gemini')) return cache.get('gemini');
  const m = buildWorkload('M');
  const { messages, tools } = m.body;
  const [system, ...rest] = messages;
  const contents = [];
  const names = new Map();
  for (const msg of rest) {
    if (msg.role === 'tool') {
      const part = { functionResponse: { name: names.get(msg.tool_call_id) ?? 'tool', response: { output: msg.content } } };
      const last = contents[contents.length - 1];
      if (last?.role === 'user' && last.parts.every((p) => p.functionResponse)) last.parts.push(part);
      else contents.push({ role: 'user', parts: [part] });
      continue;
    }
    const parts = [];
    if (typeof msg.content === 'string' && msg.content !== '') parts.push({ text: msg.content });
    else if (Array.isArray(msg.content)) {
      for (const p of msg.content) {
        if (p.type === 'text') parts.push({ text: p.text });
        else if (p.type === 'image_url') parts.push({ fileData: { mimeType: 'image/png', fileUri: p.image_url.url } });
      }
    }
    for (const c of msg.tool_calls ?? []) {
      names.set(c.id, c.function.name);
      parts.push({ functionCall: { name: c.function.name, args: JSON.parse(c.function.arguments) }, thoughtSignature: `sig-${c.id}` });
    }
    contents.push({ role: msg.role === 'assistant' ? 'model' : 'user', parts });
  }
  const body = {
    systemInstruction: { parts: [{ text: system.content }] },
    contents,
    tools: [{ functionDeclarations: tools.map((t) => ({ name: t.function.name, description: t.function.description, parameters: t.function.parameters })) }],
    toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
    generationConfig: { temperature: 0, maxOutputTokens: 1024, thinkingConfig: { thinkingBudget: 512 } },
    safetySettings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', threshold: 'BLOCK_ONLY_HIGH' }],
  };
  const out = { body, bytes: encoder.encode(JSON.stringify(body)), endpoint: { method: 'POST', url: '/v1beta/models/gemini-2.5-flash:generateContent' } };
  cache.set('gemini', out);
  return out;
}

/**
 * The M conversation as an AWS Bedrock Converse call (the Anthropic body of requestBodies(),
 * block by block: text, image by S3 location, toolUse, toolResult, toolSpec tools), with the
 * endpoint it is sent to: Bedrock puts the model in the path.
 */
export function converseBody() {
  if (cache.has('converse')) return cache.get('converse');
  const a = requestBodies().anthropic.body;
  const block = (b) => {
    if (b.type === 'text') return { text: b.text };
    if (b.type === 'image') return { image: { format: 'png', source: { s3Location: { uri: b.source.url } } } };
    if (b.type === 'tool_use') return { toolUse: { toolUseId: b.id, name: b.name, input: b.input } };
    if (b.type === 'tool_result') return { toolResult: { toolUseId: b.tool_use_id, content: [{ text: b.content }] } };
    throw new Error(`converseBody: no Converse block for ${b.type}`);
  };
  const body = {
    system: a.system.map((b) => ({ text: b.text })).concat([{ cachePoint: { type: 'default' } }]),
    messages: a.messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? [{ text: m.content }] : m.content.map(block) })),
    toolConfig: { tools: a.tools.map((t) => ({ toolSpec: { name: t.name, description: t.description, inputSchema: { json: t.input_schema } } })), toolChoice: { auto: {} } },
    inferenceConfig: { maxTokens: 4096, temperature: 0 },
    requestMetadata: { user: 'user-42' },
  };
  const out = { body, bytes: encoder.encode(JSON.stringify(body)), endpoint: { method: 'POST', url: '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream' } };
  cache.set('converse', out);
  return out;
}
