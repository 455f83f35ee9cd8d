// An --upstream that does not parse was named in its E_ARG as given when it had a password in
// it (`https://admin:PASSWORD@gw.example:99999`: the port is out of range), and one without its
// scheme (`admin:PASSWORD@gw.example`, which URL reads as the scheme `admin:`) came out as
// "nullPASSWORD@gw.example". Both are shown with the password masked, as a URL that parses is.
import { describe, expect, it } from 'vitest';
import { createHandler } from '../../src/proxy/handler.ts';
import { safeUrl } from '../../src/proxy/upstream.ts';
import { TapedeckError } from '../../src/errors.ts';

const PASSWORD = 'Zk3xQ9vLmP2wR7tY';

function errorOf(upstream: string): TapedeckError {
  try {
    createHandler({ upstream, tape: 'never-opened.tape' });
  } catch (e) {
    return e as TapedeckError;
  }
  throw new Error(`createHandler accepted ${upstream}`);
}

describe('an upstream URL that does not parse, in its error', () => {
  it('names it without the password, user and host kept', () => {
    const e = errorOf(`https://admin:${PASSWORD}@gw.example:99999`);
    expect(e.code).toBe('E_ARG');
    expect(e.message).not.toContain(PASSWORD);
    expect(e.message).toContain('"https://admin:***@gw.example:99999"');
  });

  it('names one without its scheme as written, password masked, never "null"', () => {
    const e = errorOf(`admin:${PASSWORD}@gw.example`);
    expect(e.code).toBe('E_ARG');
    expect(e.message).not.toContain(PASSWORD);
    expect(e.message).not.toContain('null');
    expect(e.message).toContain('"admin:***@gw.example"');
  });

  it('masks a token given as the user name, and drops the query as before', () => {
    expect(safeUrl(`https://ghp_${PASSWORD}${PASSWORD}@gw.example:99999/v1?api_key=${PASSWORD}`)).toBe('https://***@gw.example:99999/v1');
    expect(safeUrl(`https://admin:${PASSWORD}@gw.example/v1?x=1`)).toBe('https://gw.example/v1');
  });
});
