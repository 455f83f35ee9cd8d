/**
 * Calls a test's tape answered with another request's recording (`match: 'signature'` or
 * `'hybrid'` in replay): by design no miss, so without a word in the run summary an edited
 * prompt passed CI on the old prompt's answer. Noted as they happen (cheap: the route, the
 * recording's trace and the request's body text), worded once at close, when the tape is read
 * once for the recordings that answered and each is compared with the request it answered.
 */
import { differencesOf } from '../match/diagnose.ts';
import { requestKeys } from '../match/matcher.ts';
import type { NormalizeOptions } from '../providers/normalize.ts';
import { readTape } from '../store/tape-file.ts';
import { redactor } from '../store/redact.ts';
import { isHttpRecord } from '../store/records.ts';
import { isBytes } from '../bytes.ts';

/** One call answered by a fallback, as noted when it was answered. */
export interface FallbackCall {
  /** `POST /v1/chat/completions`. */
  route: string;
  /** How it matched (`signature`, `sequential`). */
  how: string;
  /** The trace of the recording that answered (x-tapedeck-trace). */
  trace: string | null;
  /** The request's body as text, when it was one. */
  body?: string;
}

/**
 * A request body as text, when the call gave it as text or bytes (what SDKs send); else
 * undefined (a stream, a Request's own body).
 *
 * @example
 * bodyText({ body: '{"a":1}' }) // '{"a":1}'
 */
export function bodyText(init?: RequestInit): string | undefined {
  const body = init?.body;
  if (typeof body === 'string') return body;
  return isBytes(body) ? new TextDecoder().decode(body) : undefined;
}

/** What differs between a request body and a recorded one, in one phrase; undefined when it cannot tell. */
function differenceOf(body: string | undefined, recorded: unknown, norm: NormalizeOptions): string | undefined {
  if (body === undefined || recorded === undefined) return undefined;
  try {
    const first = differencesOf(requestKeys(JSON.parse(body), norm), requestKeys(recorded, norm))[0];
    if (!first) return undefined;
    const text = first.text.replace(/ from the closest recording$/, ' from the recording that answered');
    const lines = first.lines.map((l) => l.trim()).filter(Boolean).slice(0, 2);
    return lines.length > 0 ? `${text} (${lines.join(' / ')})` : text;
  } catch {
    return undefined; // not a body the matcher reads: the route says enough
  }
}

/**
 * The summary's lines for `calls` answered on `tape` (a tape file; undefined for a store's
 * namespace, whose recordings are not read): each call's route and what differed from the
 * recording that answered it.
 *
 * @example
 * await describeFallbacks([{ route: 'POST /v1/chat/completions', how: 'signature', trace: 't1', body }], 'chat.tape', {})
 * // ['POST /v1/chat/completions (by signature): message 0 (user) text differs from the recording that answered (...)']
 */
export async function describeFallbacks(calls: readonly FallbackCall[], tape: string | undefined, norm: NormalizeOptions): Promise<string[]> {
  if (calls.length === 0) return [];
  const byTrace = new Map<string, unknown>();
  let salt: string | undefined;
  if (tape !== undefined) {
    try {
      const read = await readTape(tape);
      salt = read.header.salt;
      for (const { value } of read.records) if (isHttpRecord(value)) byTrace.set(value.trace, value.request.body);
    } catch {
      // unreadable now: each line names its route alone
    }
  }
  // The request as the tape would store it, masked under the tape's salt: its excerpts go to
  // the run summary (a key pasted into the prompt must not), and the recording it is compared
  // with is masked so (an unmasked key would read as a difference). Without the tape, plain masks.
  const masks = redactor(salt === undefined ? {} : { salt });
  return calls.map((c) => {
    const body = c.body === undefined ? undefined : new TextDecoder().decode(masks.bytes(new TextEncoder().encode(c.body), 'application/json'));
    const what = differenceOf(body, c.trace === null ? undefined : byTrace.get(c.trace), norm);
    return `${c.route} (by ${c.how === 'sequential' ? 'recorded order' : c.how})${what ? `: ${what}` : ''}`;
  });
}
