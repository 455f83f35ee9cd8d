// A ReplayCache miss quoted the request as given: a key pasted into the prompt (or a secret
// member, or a secret-named header of the request's headers map) went into the miss message,
// its details and its report, which a test prints to the CI log. The miss now shows the request
// as a put would store it, and compares that with the recordings, stored masked as well.
import { describe, expect, it } from 'vitest';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { rejectionOf } from '../helpers.ts';
import { tapeSuite } from './setup.ts';

const { fresh } = tapeSuite('cache-miss-masked');
const RECORDED = `sk-proj-${'A1b2C3d4E5f6G7h8I9j0'.repeat(2)}`;
const SENT = `sk-proj-${'Z9y8X7w6V5u4T3s2R1q0'.repeat(2)}`;
const GATEWAY = 'gw_tok_5fK2pQ9xL7mN3vB8cR1t';
const ask = (key: string, words = 'deploy with key') => ({
  model: 'gpt-4o-mini',
  headers: { 'x-gateway-token': GATEWAY },
  api_key: key,
  messages: [{ role: 'user', content: `${words} ${key}` }],
});
const answer = { object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }] };

async function missOf(sent: ReturnType<typeof ask>) {
  const file = fresh();
  const rec = await ReplayCache.open(file, { mode: 'record' });
  await rec.put(ask(RECORDED), answer);
  await rec.close();
  const play = await ReplayCache.open(file, { mode: 'replay' });
  try {
    return await rejectionOf(play.get(sent));
  } finally {
    await play.close();
  }
}

describe('ReplayCache: a miss shows the request masked', () => {
  it('another key in the prompt and in a member: neither key nor any part of it in the message, details or report', async () => {
    const miss = await missOf(ask(SENT));
    expect(miss.code).toBe('E_MISS');
    const all = `${miss.message}\n${JSON.stringify(miss.details)}`;
    for (const secret of [SENT, RECORDED, GATEWAY]) expect(all).not.toContain(secret.slice(8, 28));
    // Still a diagnosis of what differs, with the masks on both sides.
    expect(miss.message).toContain('text differs');
    expect(miss.message).toMatch(/request: +"deploy with key \[REDACTED:[0-9a-f]{16}\]"/);
    expect(String(miss.details.report)).toContain('[REDACTED:');
  });

  it('a changed word with the same key: the diagnosis names the text and shows one mask on both sides', async () => {
    const miss = await missOf(ask(RECORDED, 'please deploy with key'));
    expect(miss.message).not.toContain(RECORDED.slice(8, 28));
    const masks = [...miss.message.matchAll(/\[REDACTED:([0-9a-f]{16})\]/g)].map((m) => m[1]);
    expect(masks.length).toBe(2);
    expect(masks[0]).toBe(masks[1]);
  });
});
