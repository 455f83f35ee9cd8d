/**
 * Why a realtime connect found no recorded session although sessions were recorded at its URL:
 * the subprotocols it offered, or the header that selects the API's event names (OpenAI's
 * `OpenAI-Beta: realtime=v1`), are part of how a session is found (docs/realtime.md, "Keys").
 * Without this the miss named a URL that reads the same as the recorded one.
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
  if (here.length === 0) return undefined;
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
