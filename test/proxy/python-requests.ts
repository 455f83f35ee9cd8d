// openai-python's chat requests as that SDK sends them (captured from openai 3.22.1, the
// version pip installs today): the same header names and values, the body's members in the
// same order with no spaces, and `str(e)` of its APIStatusError built the way the SDK builds
// it. For machines without openai-python; test/proxy/python-sdk.test.ts runs the real one where
// it is installed.

/** The headers openai-python 3.22.1 sends with every request (minus host and length). */
export const PYTHON_HEADERS: Record<string, string> = {
  'accept-encoding': 'gzip, deflate',
  connection: 'keep-alive',
  authorization: 'Bearer sk-test',
  accept: 'application/json',
  'content-type': 'application/json',
  'user-agent': 'OpenAI/Python 3.22.1',
  'x-stainless-lang': 'python',
  'x-stainless-package-version': '3.22.1',
  'x-stainless-os': 'Linux',
  'x-stainless-arch': 'x64',
  'x-stainless-runtime': 'CPython',
  'x-stainless-runtime-version': '3.11.7',
  'x-stainless-async': 'false',
  'x-stainless-retry-count': '0',
  'x-stainless-read-timeout': '600',
};

/** Python's repr of a JSON value (what `str(e)` shows of the body). */
export function pyRepr(v: unknown): string {
  if (v === null) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') {
    // repr picks single quotes unless the text has one and no double quote.
    const q = v.includes("'") && !v.includes('"') ? '"' : "'";
    const body = v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
    return q + (q === "'" ? body.replace(/'/g, "\\'") : body) + q;
  }
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
}

/** openai-python's APIStatusError: `str(e)` is "Error code: <status> - <repr of the body>". */
export class PythonStatusError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`Error code: ${status} - ${typeof body === 'string' ? body : pyRepr(body)}`);
  }
}

/**
 * `client.chat.completions.create(model='gpt-4o-mini', messages=[...], stream=streamed)` as
 * openai-python sends it, read to the end; a status >= 400 throws what the SDK raises.
 */
export async function pythonChat(f: typeof fetch, base: string, prompt: string, streamed: boolean): Promise<string> {
  const body = JSON.stringify({ messages: [{ role: 'user', content: prompt }], model: 'gpt-4o-mini', ...(streamed ? { stream: true } : {}) });
  const res = await f(`${base}/v1/chat/completions`, { method: 'POST', headers: PYTHON_HEADERS, body });
  const text = await res.text();
  if (res.status >= 400) {
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // the SDK keeps a body that is not JSON as text
    }
    throw new PythonStatusError(res.status, parsed);
  }
  return text;
}
