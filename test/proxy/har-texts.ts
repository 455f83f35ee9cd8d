// Random HAR texts for the tests of the HAR readers that split a file into its entries
// (import-har-split.test.ts, import-har-chunks.test.ts): adversarial by turns (duplicate `log`
// and `entries` members, escaped member names, brackets, quotes, backslashes and separators
// inside strings, non-ASCII and invalid UTF-8, CRLF, a BOM, damaged texts, bad entries).
import { rng } from '../reference.ts';

/** An object written with its members as listed (so a name may come twice). */
export class Members {
  constructor(readonly list: [string, unknown][]) {}
}

/** JSON text of a value with Members objects; `indent` as JSON.stringify's; `escape` spells a name with an escape. */
export function write(v: unknown, indent: string, level: number, escape: (k: string) => string): string {
  const open = indent ? `\n${indent.repeat(level + 1)}` : '';
  const close = indent ? `\n${indent.repeat(level)}` : '';
  if (v instanceof Members || (v !== null && typeof v === 'object' && !Array.isArray(v))) {
    const list = v instanceof Members ? v.list : Object.entries(v);
    if (list.length === 0) return '{}';
    return `{${list.map(([k, x]) => `${open}${escape(k)}:${indent ? ' ' : ''}${write(x, indent, level + 1, escape)}`).join(',')}${close}}`;
  }
  if (Array.isArray(v)) return v.length === 0 ? '[]' : `[${v.map((x) => `${open}${write(x, indent, level + 1, escape)}`).join(',')}${close}]`;
  return JSON.stringify(v) ?? 'null';
}

export const TRICKY = ['}, {', '},\n      {', '"quoted"', 'back\\slash\\', '\\"', ']]}}', '[{"a":1}]', 'é ü 😀 中', '\u2028', '\ud800', 'log', 'entries', '{"log":{"entries":[]}}', ''];

export function generator(seed: number) {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const str = () => (r() < 0.5 ? pick(TRICKY) : `${pick(TRICKY)}${int(1000)}${pick(TRICKY)}`);
  const goodEntry = (i: number) => ({
    startedDateTime: pick(['2026-01-01T00:00:00.000Z', '2026-02-30T10:00:00Z', 'not a time', undefined]),
    time: pick([1, 2.5, -1, undefined]),
    request: {
      method: pick(['GET', 'post', 'PUT']),
      url: pick(['https://api.openai.com/v1/chat/completions', 'https://example.com/a?b=1', `https://example.com/p${int(100)}?q=%7B%22a%22%7D`]),
      headers: Array.from({ length: int(4) }, () => ({ name: pick(['accept', 'x-note', 'authorization', ':path']), value: str() })),
      ...(r() < 0.6 ? { postData: { mimeType: 'application/json', text: JSON.stringify({ model: 'gpt-4o-mini', n: i, note: str(), messages: [{ role: 'user', content: str() }] }) } } : {}),
    },
    response: {
      status: pick([200, 201, 404]),
      statusText: str(),
      headers: [{ name: 'content-type', value: pick(['application/json', 'text/event-stream', 'text/plain']) }],
      content: r() < 0.9 ? { size: 10, mimeType: 'application/json', text: pick([JSON.stringify({ ok: str() }), `data: ${JSON.stringify({ a: str() })}\n\n`, str()]) } : { size: 3, _file: 'missing.bin' },
    },
    ...(r() < 0.3 ? { _extra: [[1, [2, {}]], ']}', { a: [[[]]] }, str()] } : {}),
    timings: { send: 1, wait: int(50), receive: int(20) },
  });
  const badEntry = () => pick<unknown>([7, 'entry', null, [], [{ request: {} }], {}, { request: { method: 'GET', url: 'relative' }, response: {} }, { request: { method: 'GET', url: 'https://x.test/' } }]);
  const entries = () => Array.from({ length: int(6) }, (_, i) => (r() < 0.85 ? goodEntry(i) : badEntry()));
  return { r, int, pick, str, entries };
}

/** A random HAR text (as bytes), adversarial by turns. */
export function harBytes(seed: number): Buffer {
  const { r, int, pick, str, entries } = generator(seed);
  const indent = pick(['  ', '  ', '    ', '\t', '']);
  const escape = r() < 0.1 ? (k: string) => JSON.stringify(k).replace(/o/g, '\\u006f').replace(/e/g, '\\u0065') : (k: string) => JSON.stringify(k);
  const logMembers: [string, unknown][] = [['version', '1.2'], ['creator', { name: str(), version: '1' }]];
  if (r() < 0.5) logMembers.push(['pages', [{ id: 'page_1', title: str() }, { id: 'page_2', title: str() }]]);
  logMembers.push(['entries', entries()]);
  // Duplicate members: JSON.parse keeps the last.
  if (r() < 0.15) logMembers.push(['entries', pick<unknown>([entries(), 5, {}, 'x'])]);
  if (r() < 0.1) logMembers.splice(0, 0, ['entries', entries()]);
  if (r() < 0.15) logMembers.push(['pages', [{ id: 'page_3' }, { id: 'page_4' }]]);
  const root: [string, unknown][] = [['log', new Members(logMembers)]];
  if (r() < 0.1) root.push(['log', pick<unknown>([new Members([['entries', entries()]]), 3, { entries: [] }])]);
  if (r() < 0.1) root.unshift(['log', new Members([['entries', entries()]])]);
  if (r() < 0.1) root.push(['other', { entries: entries() }]);
  let text = write(new Members(root), indent, 0, escape);
  if (r() < 0.1) text = text.replace(/\n/g, '\r\n');
  if (r() < 0.1) text = ` \n${text}\n\n`;
  const m = int(14);
  // Damage, by turns: a cut, a character lost or added, a separator written otherwise.
  if (m === 0) text = text.slice(0, int(text.length));
  else if (m === 1) {
    const at = int(text.length);
    text = text.slice(0, at) + text.slice(at + 1);
  } else if (m === 2) {
    const at = int(text.length);
    text = text.slice(0, at) + pick(['{', '}', '[', ']', ',', ':', '"', '\\', ' ', 'x', '\n']) + text.slice(at);
  } else if (m === 3) text = text.replace(/\},(\s+)\{/, '}, {');
  else if (m === 4) text = `${text}x`;
  else if (m === 5) text = text.replace(/"entries": \[/, '"entries": [1, ');
  let bytes = Buffer.from(text);
  if (r() < 0.05) bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
  if (r() < 0.1) {
    // Invalid UTF-8, inside a string or not.
    const at = int(bytes.length);
    bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(pick([[0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98]])), bytes.subarray(at)]);
  }
  return bytes;
}

