// The masked-value scenario shared by the tape and Redis suites: requests that differ only in a
// value the redactor masks (a `?token=`, a secret member, a key pasted into a prompt) are
// recorded, then replayed in the opposite order; each must get its own answer. Requests that
// differ only in a provider credential (Authorization, Google's `?key=`) must share one.
import { expect } from 'vitest';
import type { TapedeckFetch } from '../../src/proxy/fetch.ts';

/** Two values of each kind; none looks like another's fragment. */
export const V = {
  tokens: ['qtok-AAAA-1111-aaaa', 'qtok-BBBB-2222-bbbb'],
  codes: ['oauth-code-3333-cccc', 'oauth-code-4444-dddd'],
  signatures: ['sigval-5555-eeee-ffff', 'sigval-6666-gggg-hhhh'],
  prompts: ['sk-proj-' + 'PromptOneAbCdEfGhIjKlMnOpQrSt', 'sk-proj-' + 'PromptTwoZyXwVuTsRqPoNmLkJiHg'],
  members: ['member-secret-7777-iiii', 'member-secret-8888-jjjj'],
  forms: ['form-secret-9999-kkkk', 'form-secret-0000-llll'],
  bearer: ['sk-' + 'DeveloperOneKey0123456789abcdef', 'sk-' + 'DeveloperTwoKey0123456789abcdef'],
  google: ['AIza' + 'SyDeveloperOne0123456789abcdefghij', 'AIza' + 'SyDeveloperTwo0123456789abcdefghij'],
};

type Send = (i: 0 | 1) => Promise<Response>;

/** The call number the fake upstream put in an answer: which live call it was. */
function callOf(text: string): number {
  const m = /"call":(\d+)|chatcmpl-(\d+)|transcript (\d+)/.exec(text);
  if (!m) throw new Error(`no call number in ${text.slice(0, 200)}`);
  return Number(m[1] ?? m[2] ?? m[3]);
}

/** Requests that must stay two keys, one pair per kind of masked value. */
export function pairs(base: string): Record<string, Send> {
  const json = { 'content-type': 'application/json' };
  const chat = (content: string) => JSON.stringify({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content }] });
  return {
    'query ?token=': (i) => fetchWith(`${base}/v1/models?token=${V.tokens[i]}`),
    'query ?code=': (i) => fetchWith(`${base}/v1/models?code=${V.codes[i]}`),
    'query ?signature=': (i) => fetchWith(`${base}/v1/models?signature=${V.signatures[i]}`),
    'a key in a prompt': (i) => fetchWith(`${base}/v1/chat/completions`, { method: 'POST', headers: json, body: chat(`use ${V.prompts[i]} please`) }),
    'a secret JSON member': (i) => fetchWith(`${base}/v1/echo`, { method: 'POST', headers: json, body: JSON.stringify({ client_secret: V.members[i], q: 1 }) }),
    'a secret form field': (i) =>
      fetchWith(`${base}/v1/files`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `client_id=app&client_secret=${V.forms[i]}` }),
  };
}

/** Requests that must share one key: only a provider credential differs. */
export function credentialPairs(base: string): Record<string, Send> {
  const json = { 'content-type': 'application/json' };
  const chat = JSON.stringify({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'credential pair' }] });
  return {
    'Authorization: Bearer': (i) => fetchWith(`${base}/v1/chat/completions`, { method: 'POST', headers: { ...json, authorization: `Bearer ${V.bearer[i]}` }, body: chat }),
    "Google's ?key=": (i) => fetchWith(`${base}/v1/models?key=${V.google[i]}&alt=json`),
  };
}

let current: typeof fetch = fetch;
const fetchWith = (url: string, init?: RequestInit) => current(url, init);

/**
 * Records every pair with `recorder` (value 0, then value 1), then replays with `player` in the
 * opposite order (value 1 first): each request gets the answer recorded for its own value, and
 * a credential pair replays its one recording for the other developer's credential.
 */
export async function checkDistinct(base: string, recorder: TapedeckFetch, player: () => TapedeckFetch): Promise<void> {
  const recorded = new Map<string, number[]>();
  current = recorder;
  for (const [name, send] of Object.entries(pairs(base))) {
    const calls: number[] = [];
    for (const i of [0, 1] as const) {
      const r = await send(i);
      const text = await r.text();
      expect(r.status, `${name} ${i}: ${text}`).toBeLessThan(400);
      calls.push(callOf(text));
    }
    recorded.set(name, calls);
  }
  for (const [name, send] of Object.entries(credentialPairs(base))) {
    const r = await send(0);
    recorded.set(name, [callOf(await r.text())]);
  }
  await recorder.close();
  const play = player();
  current = play;
  try {
    for (const [name, send] of Object.entries(pairs(base))) {
      const got: number[] = [];
      for (const i of [1, 0] as const) {
        const r = await send(i);
        const text = await r.text();
        expect(r.headers.get('x-tapedeck-match'), `${name} ${i}: ${text}`).toBe('exact');
        got.unshift(callOf(text));
      }
      expect(got, name).toEqual(recorded.get(name));
    }
    for (const [name, send] of Object.entries(credentialPairs(base))) {
      const r = await send(1);
      const text = await r.text();
      expect(r.headers.get('x-tapedeck-match'), `${name}: ${text}`).toBe('exact');
      expect([callOf(text)], name).toEqual(recorded.get(name));
    }
  } finally {
    await play.close();
    current = fetch;
  }
}

/** Every value of {@link V} that must never be stored, for a byte search. */
export const allValues = (): string[] => Object.values(V).flat();
