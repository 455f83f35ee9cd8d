/**
 * Why a realtime connect found no recorded session although sessions were recorded at its URL:
 * the subprotocols it offered, or the header that selects the API's event names (OpenAI's
 * `OpenAI-Beta: realtime=v1`), are part of how a session is found (docs/realtime.md, "Keys").
 * Without this the miss named a URL that reads the same as the recorded one. Sessions recorded
 * at its path with another query (the model, Azure's deployment or API version: the commonest
 * reason a replay misses) are named with the query they have.
 */
import type { RealtimeSessionRecord } from '../store/records.ts';

type UpgradeHeaders = Readonly<Record<string, string | string[] | undefined>>;

/**
 * The difference between a connect (its stored URL, the subprotocols it offered that are kept,
 * its headers) and the sessions recorded at the same URL; undefined when none was.
 *
 * @example
 * connectDifference([{ url: '/v1/realtime?model=m', protocols: ['realtime'] } as RealtimeSessionRecord], '/v1/realtime?model=m', ['realtime'], { 'openai-beta': 'realtime=v1' })
 * // 'the 1 session recorded at this URL was connected with other headers: this connect sends OpenAI-Beta: realtime=v1, which selects other event names'
 */
export function connectDifference(heads: readonly RealtimeSessionRecord[], url: string, protocols: readonly string[], headers: UpgradeHeaders): string | undefined {
  const here = heads.filter((h) => h.url === url);
  if (here.length === 0) return queryDifference(heads, url);
  const n = here.length === 1 ? 'the 1 session' : `the ${here.length} sessions`;
  const mine = [...protocols].sort().join(', ');
  if (!here.some((h) => [...h.protocols].sort().join(', ') === mine)) {
    const theirs = [...here[0]!.protocols].sort().join(', ');
    return `${n} recorded at this URL offered other subprotocols: [${theirs}], this connect [${mine}]`;
  }
  const beta = headers['openai-beta'];
  const said = beta === undefined ? 'no OpenAI-Beta header' : `OpenAI-Beta: ${String(beta)}`;
  return `${n} recorded at this URL ${here.length === 1 ? 'was' : 'were'} connected with other headers: this connect sends ${said}, which selects ${beta === undefined ? 'the GA' : 'other'} event names`;
}

const pathOf = (u: string): string => u.split('?')[0]!;
const queryOf = (u: string): URLSearchParams => new URLSearchParams(u.includes('?') ? u.slice(u.indexOf('?') + 1) : '');

/**
 * How sessions recorded at the connect's path (none at its URL) differ in their query: the
 * parameters that differ, as they recorded them and as this connect sends them; undefined when
 * none was recorded at that path.
 *
 * @example
 * queryDifference([{ url: '/v1/realtime?model=gpt-realtime' } as RealtimeSessionRecord], '/v1/realtime?model=gpt-realtime-mini')
 * // 'the 1 session recorded at /v1/realtime has model=gpt-realtime; this connect asks for model=gpt-realtime-mini'
 */
function queryDifference(heads: readonly RealtimeSessionRecord[], url: string): string | undefined {
  const path = pathOf(url);
  const there = heads.filter((h) => pathOf(h.url) === path);
  if (there.length === 0) return undefined;
  const mine = queryOf(url);
  const names = new Set<string>();
  for (const h of there) {
    const q = queryOf(h.url);
    for (const k of new Set([...q.keys(), ...mine.keys()])) if (q.getAll(k).join('\n') !== mine.getAll(k).join('\n')) names.add(k);
  }
  // The same parameters in another order: nothing to name.
  if (names.size === 0) return undefined;
  const shown = (q: URLSearchParams): string => [...names].sort().map((k) => (q.has(k) ? q.getAll(k).map((v) => `${k}=${v}`).join('&') : `no ${k}`)).join('&');
  const theirs = [...new Set(there.map((h) => shown(queryOf(h.url))))];
  const listed = theirs.length > 5 ? `${theirs.slice(0, 5).join(', ')}, …` : theirs.join(', ');
  const n = there.length === 1 ? 'the 1 session' : `the ${there.length} sessions`;
  return `${n} recorded at ${path} ${there.length === 1 ? 'has' : 'have'} ${listed}; this connect asks for ${shown(mine)}`;
}
