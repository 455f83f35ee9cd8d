// The deck keys a request it records from the body's raw bytes where redaction masks nothing in
// it (src/match/raw-keys.ts), and by the reference path otherwise. Differential: for every
// request of a large varied corpus, under several keying options, and for bodies the strict
// reader refuses, prepareRequest gives what the reference path gives (strict check, JSON.parse,
// redaction, requestKey of the redacted body, the view's model), error for error.
import { describe, expect, it } from 'vitest';
import { canonicalizeJSON, hashValue, TapedeckError } from '../../src/index.ts';
import { redact } from '../../src/store/redact.ts';
import { requestKey } from '../../src/match/matcher.ts';
import { rawPathCounts } from '../../src/match/raw-keys.ts';
import { Deck, type DeckOptions, type DeckRequest } from '../../src/proxy/deck.ts';
import { readRecordingFile } from '../../src/store/import/read.ts';
import { corpusHar } from './import-corpus.ts';

const SALT = '0123456789abcdef0123456789abcdef';

/** What the reference path makes of a JSON request: the prepared fields, or the error. */
function reference(req: DeckRequest, opts: Pick<DeckOptions, 'ignoreArgs' | 'volatileKeys' | 'volatileText'>): Record<string, unknown> {
  try {
    canonicalizeJSON(req.body);
  } catch (e) {
    if (e instanceof TapedeckError) return { error: e.code, message: e.message };
    throw e;
  }
  const stored = redact(JSON.parse(Buffer.from(req.body).toString('utf8')), { salt: SALT });
  const norm = { ignoreArgs: opts.ignoreArgs, volatileKeys: opts.volatileKeys, volatileText: opts.volatileText, endpoint: { method: req.method, url: req.url } };
  let keys: ReturnType<typeof requestKey> | undefined;
  try {
    keys = requestKey(stored, norm);
  } catch (e) {
    if (!(e instanceof TapedeckError && e.code === 'E_REQUEST')) throw e;
  }
  const named = keys?.view.model ?? (stored !== null && typeof stored === 'object' ? (stored as { model?: unknown }).model : undefined);
  const model = typeof named === 'string' ? named : '';
  return keys ? { match: 'llm', key: keys.key, signature: keys.signature, model, body: stored } : { match: 'json', key: hashValue(stored), model, body: stored };
}

async function prepared(opts: Pick<DeckOptions, 'ignoreArgs' | 'volatileKeys' | 'volatileText'>, reqs: readonly DeckRequest[]): Promise<Record<string, unknown>[]> {
  const deck = await Deck.open({ mode: 'passthrough', redact: { salt: SALT }, onWarning: () => {}, ...opts }, { kind: 'fetch' });
  try {
    return reqs.map((req) => {
      try {
        const p = deck.prepareRequest(req);
        return { match: p.match, key: p.key, ...(p.signature ? { signature: p.signature } : {}), model: p.model, body: p.body };
      } catch (e) {
        if (e instanceof TapedeckError) return { error: e.code, message: e.message };
        throw e;
      }
    });
  } finally {
    await deck.close();
  }
}

/** The corpus's JSON requests as the deck takes them. */
function corpusRequests(n: number): DeckRequest[] {
  const out: DeckRequest[] = [];
  for (const x of readRecordingFile('corpus.har', corpusHar(n), 'har').exchanges) {
    if (x.request.body.length === 0 || !String(x.request.headers['content-type']).includes('json')) continue;
    const u = new URL(x.request.url);
    out.push({ method: x.request.method, url: u.pathname + u.search, headers: x.request.headers, body: x.request.body });
  }
  return out;
}

const CHAT = '/v1/chat/completions';
const json = { 'content-type': 'application/json' };
const bad = (text: string | Uint8Array, url = CHAT): DeckRequest => ({ method: 'POST', url, headers: json, body: typeof text === 'string' ? Buffer.from(text) : text });
const msgs = '"messages":[{"role":"user","content":"hi"}]';
const many = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`).join(',');

/** Bodies JSON.parse takes or refuses that the strict reader refuses, none with anything to mask. */
const FAULTS: DeckRequest[] = [
  bad(`{"model":"gpt-4o",${msgs},"model":"gpt-4o-mini"}`),
  bad(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi","content":"ho"}]}`),
  bad(`{"model":"gpt-4o",${msgs},"metadata":{"a":1,"a":2}}`),
  bad(`{"model":"gpt-4o",${msgs},"u\\u0073er":"a","user":"b"}`),
  bad(`{"model":"gpt-4o",${msgs},"metadata":{${many},"k7":0}}`),
  bad(`{"model":"gpt-4o","messages":[{"role":"user","content":"\\ud800"}]}`),
  bad(`{"model":"gpt-4o",${msgs},"metadata":{"\\udc00":1}}`),
  bad(`{"model":"gpt-4o",${msgs},"temperature":1e400}`),
  bad(`{"model":"gpt-4o",${msgs},"logit_bias":{"1":-1e400}}`),
  bad(`{"model":"gpt-4o",${msgs},}`),
  bad(`{"model":"gpt-4o",${msgs}`),
  bad(`{"model":"gpt-4o",${msgs}} x`),
  bad(Buffer.concat([Buffer.from(`{"model":"gpt-4o","messages":[{"role":"user","content":"h`), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')])),
  bad(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"contents":[]}`, '/v1beta/models/gemini-2.0-flash:generateContent'),
  bad(`{"model":"llama3",${msgs},"options":{"seed":1,"seed":2}}`, '/api/chat'),
];

describe('the deck keys a recorded request from its raw bytes only where that gives the reference key', () => {
  const reqs = corpusRequests(3000);
  const options: Pick<DeckOptions, 'ignoreArgs' | 'volatileKeys' | 'volatileText'>[] = [{}, { ignoreArgs: ['temperature', 'user'] }, { volatileKeys: ['id'] }, { volatileText: [/\d+ squared/] }];
  for (const opts of options) {
    it(`${reqs.length} JSON requests of the corpus (OpenAI, Anthropic, Gemini, Azure, Bedrock, Ollama, plain JSON; secrets), keyed with ${JSON.stringify(opts, (_k, v: unknown) => (v instanceof RegExp ? String(v) : v))}`, async () => {
      const before = rawPathCounts.answered;
      const got = await prepared(opts, reqs);
      const raw = rawPathCounts.answered - before;
      for (let i = 0; i < reqs.length; i++) {
        const want = reference(reqs[i]!, opts);
        // One request at a time, so a failure names the body.
        if (JSON.stringify(got[i]) !== JSON.stringify(want)) expect({ body: Buffer.from(reqs[i]!.body).toString(), got: got[i] }).toEqual({ body: Buffer.from(reqs[i]!.body).toString(), got: want });
      }
      // The raw path took most bodies where it may (no volatile members or text), and none where not.
      if (opts.volatileKeys || opts.volatileText) expect(raw).toBe(0);
      else expect(raw).toBeGreaterThan(reqs.length / 2);
    }, 120_000);
  }

  it('bodies the strict reader refuses (duplicate names, lone surrogates, 1e400, malformed JSON or UTF-8) are refused with its error', async () => {
    const got = await prepared({}, FAULTS);
    for (let i = 0; i < FAULTS.length; i++) {
      const want = reference(FAULTS[i]!, {});
      expect(want.error, `fault ${i} is one`).toBeDefined();
      expect(got[i], `fault ${i}`).toEqual(want);
    }
  });
});
