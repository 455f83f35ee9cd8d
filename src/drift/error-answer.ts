// What an HTTP error answer says, in one line: a change of status alone ("200 -> 400") leaves a
// reviewer to open the tape to learn why the call now fails (a model retired, a parameter no
// longer accepted). Read from the error documents the APIs send: OpenAI's and the compatible
// APIs' `{ error: { type, code, message } }`, Anthropic's `{ type: 'error', error: { type,
// message } }`, Gemini's `{ error: { status, message } }`, and a plain `{ message }` or
// `{ detail }`; a text answer is its first line.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

// One line of a report: long messages (a stack trace, an HTML error page) are cut.
const MAX = 200;
const short = (s: string) => (s.length > MAX ? `${s.slice(0, MAX - 1)}…` : s);
const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);

/**
 * The error an answer body carries, as `type code: message` (the parts it has), or undefined
 * when it says none.
 *
 * @example
 * errorMessage({ error: { message: 'The model `gpt-4o-mini` was retired', type: 'invalid_request_error', code: 'model_not_found' } })
 * // 'invalid_request_error model_not_found: The model `gpt-4o-mini` was retired'
 */
export function errorMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    const first = str(body.split(/\r?\n/).find((l) => l.trim() !== ''));
    return first ? short(first) : undefined;
  }
  if (!isObj(body)) return undefined;
  const e = isObj(body.error) ? body.error : body;
  const message = str(e.message) ?? str(body.detail) ?? (typeof body.error === 'string' ? str(body.error) : undefined);
  const kinds = [str(e.type) ?? str(e.status), str(e.code)].filter((k, i, all): k is string => k !== undefined && all.indexOf(k) === i);
  if (!message && kinds.length === 0) return undefined;
  return short(message ? `${kinds.length ? `${kinds.join(' ')}: ` : ''}${message}` : kinds.join(' '));
}
