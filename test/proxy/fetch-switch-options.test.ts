// installFetchSwitch (and the vitest fixture's tape.install, which passes its options on) took
// a misspelt `blockNetwork`, a URL given as a host, or a string for `hosts` without a word: the
// app's calls then reached the network in a test meant to be hermetic (or, with a string, every
// fetch in the process failed with "hosts.some is not a function"). Each is E_ARG at install,
// with the fix; nothing is installed.
import { afterEach, expect, it } from 'vitest';
import { installFetchSwitch } from '../../src/proxy/global-fetch.ts';
import { TapedeckError } from '../../src/errors.ts';

const tape = (async () => new Response('{}')) as typeof fetch;
const before = globalThis.fetch;
afterEach(() => expect(globalThis.fetch).toBe(before));

const refused = (opts: unknown): TapedeckError => {
  try {
    installFetchSwitch(opts as never).uninstall();
  } catch (e) {
    return e as TapedeckError;
  }
  throw new Error('installed');
};

it('refuses a misspelt option, naming the one it meant', () => {
  for (const name of ['blocknetwork', 'blockNetWork']) {
    const e = refused({ fetch: tape, hosts: ['api.openai.com'], [name]: true });
    expect(e.code).toBe('E_ARG');
    expect(e.message).toContain(`Unknown installFetchSwitch option ${JSON.stringify(name)}.`);
    expect(e.hint).toContain('Did you mean blockNetwork?');
  }
  expect(refused({ fetch: tape, host: ['api.openai.com'] }).hint).toContain('Did you mean hosts?');
});

it('refuses hosts given as one string, and a URL or a path given as a host', () => {
  const s = refused({ fetch: tape, hosts: 'api.openai.com' });
  expect(s.code).toBe('E_ARG');
  expect(s.message).toContain('hosts must be a list');
  expect(s.hint).toContain("hosts: ['api.openai.com']");
  for (const url of ['http://127.0.0.1:8080/v1', 'https://api.openai.com', 'api.openai.com/v1']) {
    const e = refused({ fetch: tape, hosts: [url] });
    expect(e.code, url).toBe('E_ARG');
    expect(e.message, url).toContain('is a URL, not a host');
  }
  expect(refused({ fetch: tape, allowHosts: ['https://localhost:3000'] }).hint).toContain("'localhost:3000'");
  // What was accepted before still is.
  for (const hosts of [['api.openai.com'], ['127.0.0.1:8080'], ['*.openai.com'], [/openai/], ['[::1]:8080']]) installFetchSwitch({ fetch: tape, hosts }).uninstall();
});
