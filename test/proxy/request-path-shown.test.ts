// A request path refused for climbing out with `..` was quoted whole in its E_PROXY_PATH, query
// included: `?key=AIza…` or `?token=…` went back in the error, which the client's SDK raises into
// its log. The path is quoted without its query (the path is what is wrong) and with a secret in
// it masked (a bot token).
import { describe, expect, it } from 'vitest';
import { normalizeRequestPath } from '../../src/proxy/request-path.ts';
import { TapedeckError } from '../../src/errors.ts';

const GOOGLE = `AIzaSy${'Q7v'.repeat(11)}XX`;
const TOKEN = 'Zk3xQ9vLmP2wR7tYplain';
const BOT = '123456789:AAHk3xQ9vLmP2wR7tYabcdefghijklmnopq';

function refusal(url: string): TapedeckError {
  try {
    normalizeRequestPath(url);
  } catch (e) {
    return e as TapedeckError;
  }
  throw new Error(`accepted ${url}`);
}

describe('E_PROXY_PATH: the refused path, without its secrets', () => {
  it('quotes the path without the query', () => {
    const e = refusal(`/v1/../../../admin?key=${GOOGLE}&token=${TOKEN}`);
    expect(e.code).toBe('E_PROXY_PATH');
    expect(e.message).toContain('"/v1/../../../admin"');
    expect(`${e.message} ${JSON.stringify(e.details)}`).not.toMatch(new RegExp(`${GOOGLE}|${TOKEN}`));
  });

  it('masks a bot token in the path', () => {
    const e = refusal(`/bot${BOT}/../../../admin`);
    expect(e.code).toBe('E_PROXY_PATH');
    expect(`${e.message} ${JSON.stringify(e.details)}`).not.toContain('AAHk3x');
    expect(e.message).toContain('/bot[REDACTED');
  });
});
