/**
 * Why a re-recorded call got an error answer, in one line. "HTTP 502" alone does not say whether
 * the API refused the request or was never reached: the recorder answers a failed connection
 * itself, with a 502 whose body carries tapedeck's error (ECONNREFUSED, a timeout), and a real
 * API error carries the provider's message. Either is said with the status.
 */

const decoder = new TextDecoder();
const MAX = 300;

const short = (s: string) => (s.length > MAX ? `${s.slice(0, MAX - 3)}...` : s);

/** The error object of a JSON error answer (OpenAI's and Anthropic's shape: `{ error: { message } }`). */
function errorOf(bytes: Uint8Array): { message?: unknown; tapedeck?: { code?: unknown; hint?: unknown } } | undefined {
  try {
    const v = JSON.parse(decoder.decode(bytes)) as { error?: unknown; message?: unknown };
    if (v && typeof v.error === 'object' && v.error !== null) return v.error as { message?: unknown };
    if (typeof v?.message === 'string') return { message: v.message };
  } catch {
    // Not JSON: the status is all there is to say.
  }
  return undefined;
}

/**
 * The reason a call is listed as not recorded: the status, and what the answer says.
 *
 * @example
 * failureReason(502, headers, bytes) // 'HTTP 502 from tapedeck, not the API: E_UPSTREAM Upstream http://127.0.0.1:8799 is unreachable (ECONNREFUSED). Check that this host is up …'
 */
export function failureReason(status: number, headers: Headers, bytes: Uint8Array): string {
  const err = errorOf(bytes);
  const message = typeof err?.message === 'string' ? err.message : undefined;
  const code = headers.get('x-tapedeck-error');
  if (code) {
    // The recorder's hint speaks of replaying from a tape, which is no fix here: the API's
    // address is what the command line gives. Without --upstream rerecord sends each call to the
    // host its recording names, so "check --upstream" would name a flag the user never gave.
    const hint = typeof err?.tapedeck?.hint === 'string' ? err.tapedeck.hint : '';
    const what = message && hint && message.endsWith(hint) ? message.slice(0, -hint.length).trim() : message;
    const fix = code.startsWith('E_UPSTREAM') ? ' Check that this host is up and reachable from here, or send the calls to another: tapedeck rerecord --upstream URL (--hostless-upstream URL for recordings that name no host).' : '';
    return `HTTP ${status} from tapedeck, not the API: ${code}${what ? ` ${short(what)}` : ''}${fix}`;
  }
  return message ? `HTTP ${status}: ${short(message)}` : `HTTP ${status}`;
}
