// Proxy and createFetch records (docs/proxy.md) as the tree reads them: the request is the stored
// JSON body, the answer the response body, parsed when it is JSON or assembled from the events
// when it was streamed, so a streamed answer lands where the same answer without `stream: true`
// would. Pure (no node:fs): it is part of the main entry's graph.

import { TapedeckError } from '../errors.ts';
import type { HttpRecord } from '../store/records.ts';
import { assembleAnswer, routeStreams } from '../providers/index.ts';
import type { TreeRecord } from './tree.ts';

function header(h: HttpRecord['response']['headers'], name: string): string | undefined {
  for (const [k, v] of Object.entries(h ?? {})) {
    if (k.toLowerCase() !== name) continue;
    const s = Array.isArray(v) ? v[0] : v;
    return typeof s === 'string' ? s : undefined;
  }
  return undefined;
}

/**
 * The request/answer pair of a proxy record, as `ConversationTree.record()` takes it, with the
 * record's `origin` when it has one; undefined
 * for records that hold no conversation answer: `match` other than 'llm' (other JSON or plain
 * HTTP calls) and answers with a status outside 2xx. Throws `E_TREE` for a 2xx answer it cannot
 * read (a body that is not JSON, a stream of a shape `assembleStream` does not know).
 *
 * @example
 * const x = httpRecordExchange(tapeRecord)
 * if (x) tree.record(x)
 */
export function httpRecordExchange(rec: HttpRecord): TreeRecord | undefined {
  if (rec.match !== 'llm') return undefined;
  const status = rec.response.status;
  if (!(status >= 200 && status < 300)) return undefined;
  const contentType = header(rec.response.headers, 'content-type');
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  let value: unknown;
  const sentTo = { method: rec.request.method, url: rec.request.url };
  if (mime === 'text/event-stream' || mime === 'application/x-ndjson' || routeStreams(sentTo)) {
    value = assembleAnswer(sentTo, contentType, rec.response.body);
    if (value === undefined) {
      throw new TapedeckError('E_TREE', `The streamed answer to ${rec.route} is not a stream tapedeck assembles (OpenAI chat completions or Responses, Anthropic Messages, Gemini, Bedrock, Ollama), or it was cut before its end or reports an error.`, {
        hint: 'The record still replays; only the tree cannot show its answer.',
      });
    }
  } else {
    const text = new TextDecoder('utf-8').decode(rec.response.body);
    try {
      value = JSON.parse(text);
    } catch {
      throw new TapedeckError('E_TREE', `The answer to ${rec.route} is not JSON (content-type ${contentType === undefined ? 'absent' : JSON.stringify(contentType)}).`, {
        hint: 'The record still replays; only the tree cannot show its answer.',
      });
    }
  }
  // Where it was sent: APIs that put the model and the shape in the URL (Bedrock) key by it.
  // The host it was sent to, when the record names one: a tape recorded for several hosts says
  // which of them gave each answer (formatTree), since the same request to two hosts is one path.
  return { request: rec.request.body, value, key: rec.key, recordedAt: rec.recordedAt, endpoint: sentTo, ...(typeof rec.origin === 'string' ? { origin: rec.origin } : {}) };
}
