// The key of an Azure connection string (a storage account's or Cosmos DB's `AccountKey=`, Service
// Bus's and Event Hubs' `SharedAccessKey=`) pasted into a prompt, or repeated by a model, was
// stored as typed and `tapedeck scan` did not report it: base64 with no prefix of its own, it
// matched no key format, though it opens the whole account. It is masked now, keyed (two keys stay
// two requests), its name kept so the string still reads as one, in a body, an answer and a stream
// cut across events, and scan reports it in a record written before.
import { describe, expect, it } from 'vitest';
import { redactor } from '../../src/store/redact.ts';
import { redactAnswerBody } from '../../src/store/stream-redact.ts';
import { secretsInValue } from '../../src/store/secret-scan.ts';
import { rng } from '../reference.ts';

const r = redactor({ salt: '0123456789abcdef0123456789abcdef' });
const g = rng(7341);
/** A key as Azure makes them: random bytes in base64, with its padding. */
const key = (bytes: number): string => Buffer.from(Array.from({ length: bytes }, () => Math.floor(g() * 256))).toString('base64');
const ACCOUNT = key(64);
const OTHER = key(64);
const SHARED = key(32);
const storage = (k: string) => `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${k};EndpointSuffix=core.windows.net`;
const bus = `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=${SHARED}`;
const chat = (content: string) => ({ model: 'gpt-4o', messages: [{ role: 'user', content }] });
const stored = (t: string): string => (r.value(chat(t)) as ReturnType<typeof chat>).messages[0]!.content;

describe("an Azure connection string's key", () => {
  it('is masked in a prompt, keyed, its name kept', () => {
    for (const [t, k] of [
      [`my connection string is ${storage(ACCOUNT)}, why 403?`, ACCOUNT],
      [`AccountEndpoint=https://db.documents.azure.com:443/;AccountKey=${ACCOUNT};`, ACCOUNT],
      [bus, SHARED],
    ] as const) {
      expect(stored(t), t).toBe(t.replace(k, r.mask(k)));
    }
    expect(stored(storage(ACCOUNT))).not.toBe(stored(storage(OTHER)));
  });

  it('is masked in a streamed answer cut across events', () => {
    const said = `Use ${storage(ACCOUNT)} there.`;
    const pieces = [said.slice(0, 70), said.slice(70, 100), said.slice(100)];
    const sse = pieces.map((p) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: p } }] })}\n\n`).join('') + 'data: [DONE]\n\n';
    const out = new TextDecoder().decode(redactAnswerBody(new TextEncoder().encode(sse), 'text/event-stream', r).body);
    const joined = out
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => (JSON.parse(e.slice(6)) as { choices: { delta: { content: string } }[] }).choices[0]!.delta.content)
      .join('');
    expect(joined).toBe(said.replace(ACCOUNT, r.mask(ACCOUNT)));
  });

  it('is reported by scan in a record written before', () => {
    const found = secretsInValue({ v: 1, kind: 'http', request: { method: 'POST', url: '/v1/chat/completions', headers: {}, body: chat(`conn: ${storage(ACCOUNT)}`) } });
    expect(found.map((f) => f.kind)).toContain('key format');
    expect(found.some((f) => f.excerpt.startsWith('"Acco'))).toBe(true);
  });

  it('leaves a short or placeholder AccountKey alone', () => {
    for (const t of ['AccountKey=<your-key>', 'AccountKey=abc123;', 'set AccountKey=${AZURE_STORAGE_KEY}']) expect(stored(t)).toBe(t);
  });
});
