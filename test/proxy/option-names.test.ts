// Option objects given from plain JavaScript, where nothing checks their names: a misspelt option
// used to be dropped without a word. `redact: { feilds: ['ssn'] }` then wrote the very value the
// caller asked to mask to the tape, and `mdoe: 'record'` replayed instead of recording. Every
// entry that takes options now refuses a name it does not know (E_ARG, the nearest name, where
// the options are described) and a redact rule of the wrong kind, before it opens anything.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TapedeckError } from '../../src/errors.ts';
import { McpTape } from '../../src/mcp/tape.ts';
import { tapeTransport } from '../../src/mcp/transport.ts';
import { RealtimeEndpoint } from '../../src/realtime/endpoint.ts';
import { checkOptionNames } from '../../src/option-names.ts';
import { createFetch, type FetchOptions } from '../../src/proxy/fetch.ts';
import { createHandler } from '../../src/proxy/handler.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { configureTapes } from '../../src/testing/runner.ts';
import { openTestTape } from '../../src/testing/session.ts';
import { tapedeckFixtures } from '../../src/vitest/fixture.ts';
import { tapedeck } from '../../src/vitest/plugin.ts';
import { startUpstream } from './fake-upstream.ts';
import { serve } from './serve-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-option-names-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const tapePath = (): string => join(dir, `t${++n}.tape`);

/** The error a call throws (synchronously or as a rejection), or undefined. */
async function thrown(f: () => unknown): Promise<TapedeckError | undefined> {
  try {
    await f();
    return undefined;
  } catch (e) {
    return e as TapedeckError;
  }
}

const SSN = '078-05-1120';

/** Records one chat request whose metadata holds SSN through createFetch, with these redact rules; the tape's bytes. */
async function recordWith(redact: unknown): Promise<string> {
  const upstream = await startUpstream();
  const tape = tapePath();
  try {
    const f = createFetch({ tape, mode: 'record', redact } as FetchOptions);
    const r = await f(`${upstream.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], metadata: { ssn: SSN } }),
    });
    await r.arrayBuffer();
    await f.close();
    return readFileSync(tape, 'latin1');
  } finally {
    await upstream.close();
  }
}

describe('a redact rule the caller misspells or gives as the wrong kind', () => {
  it('is refused where createFetch is made, and no tape is written; spelt right, it masks the field', async () => {
    for (const redact of [{ feilds: ['ssn'] }, { field: ['ssn'] }, { fields: 'ssn' }, { fields: [''] }, { keepSecrets: 'no' }, true, ['ssn']]) {
      const tape = tapePath();
      const e = await thrown(() => createFetch({ tape, mode: 'record', redact } as FetchOptions));
      expect(e, JSON.stringify(redact)).toBeInstanceOf(TapedeckError);
      expect(e!.code).toBe('E_ARG');
      expect(existsSync(tape)).toBe(false);
    }
    // The oracle: the rule spelt right keeps the value off the tape, which holds it otherwise.
    expect(await recordWith({ fields: ['ssn'] })).not.toContain(SSN);
    expect(await recordWith(undefined)).toContain(SSN);
  });

  it('says what is wrong and how to write it', async () => {
    const misspelt = await thrown(() => createFetch({ tape: tapePath(), redact: { feilds: ['ssn'] } } as FetchOptions));
    expect(misspelt!.message).toMatch(/Unknown redact option "feilds"\..*Did you mean fields\?/);
    const asString = await thrown(() => createFetch({ tape: tapePath(), redact: { fields: 'ssn' } } as unknown as FetchOptions));
    expect(asString!.message).toContain('redact.fields must be a list of names, not the string "ssn"');
    expect(asString!.message).toContain('fields: ["ssn"]');
  });

  it('is refused by every other entry that takes one', async () => {
    const redact = { feilds: ['ssn'] };
    const tape = tapePath();
    const calls: [string, () => unknown][] = [
      // createHandler reports its options' errors where it reports the tape's: at `ready`.
      ['createHandler', () => createHandler({ tape, mode: 'record', upstream: 'http://127.0.0.1:9', redact } as never).ready],
      ['startProxy', () => startProxy({ tape, mode: 'record', port: 0, redact } as never)],
      ['openTestTape', () => openTestTape({ tape, mode: 'record', redact } as never)],
      ['tapedeckFixtures', () => tapedeckFixtures({ redact } as never)],
      ['configureTapes', () => configureTapes({ redact } as never)],
      ['ReplayCache.open', () => ReplayCache.open(tape, { mode: 'record', redact } as never)],
      ['McpTape.open', () => McpTape.open({ tape, mode: 'record', redact } as never)],
    ];
    for (const [name, call] of calls) {
      const e = await thrown(call);
      expect(e?.code, name).toBe('E_ARG');
      expect(e!.message, name).toContain('Unknown redact option "feilds"');
    }
    expect(existsSync(tape)).toBe(false);
  });
});

describe('tapedeck serve: the redact rules as flags', () => {
  it('masks what --redact-field, --redact-header and --redact-query name, and only with them', async () => {
    const upstream = await startUpstream();
    const secrets = { field: 'field-value-1234', header: 'header-value-5678', query: 'query-value-9012' };
    const recordThrough = async (flags: string[]): Promise<string> => {
      const tape = tapePath();
      const cli = serve(['--upstream', upstream.url, '--tape', tape, '--mode', 'record', '--port', '0', ...flags]);
      try {
        const url = await cli.url;
        const r = await fetch(`${url}/v1/chat/completions?sig2=${secrets.query}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-team-ref': secrets.header },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], metadata: { ssn: secrets.field } }),
        });
        await r.arrayBuffer();
      } finally {
        cli.child.kill('SIGTERM');
        await cli.exited;
      }
      return readFileSync(tape, 'latin1');
    };
    try {
      const plain = await recordThrough([]);
      const ruled = await recordThrough(['--redact-field', 'ssn', '--redact-header', 'x-team-ref', '--redact-query', 'sig2']);
      for (const v of Object.values(secrets)) {
        expect(plain, v).toContain(v);
        expect(ruled, v).not.toContain(v);
      }
    } finally {
      await upstream.close();
    }
  });
});

describe('an option name the entry does not take', () => {
  it('is refused by createFetch with the nearest name, before a tape is made', async () => {
    const tape = tapePath();
    const e = await thrown(() => createFetch({ tape, mdoe: 'record' } as FetchOptions));
    expect(e?.code).toBe('E_ARG');
    expect(e!.message).toContain('Unknown createFetch option "mdoe"');
    expect(e!.message).toContain('Did you mean mode?');
    expect(e!.message).toContain('docs/api.md');
    expect(existsSync(tape)).toBe(false);
  });

  it("says where the proxy's upstream goes instead of taking it", async () => {
    const e = await thrown(() => createFetch({ tape: tapePath(), upstream: 'https://api.openai.com' } as FetchOptions));
    expect(e?.code).toBe('E_ARG');
    expect(e!.message).toContain('createFetch takes no upstream: it sends each request to the URL it is called with');
    expect(e!.message).toContain('new OpenAI({ baseURL, fetch })');
  });

  it('names the option a flag of redaction goes in', async () => {
    const e = await thrown(() => createFetch({ tape: tapePath(), keepSecrets: true } as FetchOptions));
    expect(e?.code).toBe('E_ARG');
    expect(e!.message).toContain('keepSecrets is not an option of createFetch itself: it goes in its redact option');
    expect(e!.message).toContain('redact: { keepSecrets: ... }');
  });

  it('tells apart the two spellings of the arguments left out of keys', async () => {
    const fetchSide = await thrown(() => createFetch({ tape: tapePath(), ignoredArgs: ['user'] } as FetchOptions));
    expect(fetchSide!.message).toContain('Did you mean ignoreArgs?');
    const cacheSide = await thrown(() => ReplayCache.open(tapePath(), { ignoreArgs: ['user'] } as never));
    expect(cacheSide!.message).toContain('Unknown ReplayCache.open option "ignoreArgs"');
    expect(cacheSide!.message).toContain('Did you mean ignoredArgs?');
  });

  it('is refused by each entry under its own name, and its own options pass', async () => {
    const tape = tapePath();
    const refused: [string, () => unknown][] = [
      ['createHandler', () => createHandler({ tape, port: 8080 } as never)],
      ['startProxy', () => startProxy({ tape, prot: 0 } as never)],
      ['openTestTape', () => openTestTape({ tape, dir: 'x' } as never)],
      ['tapedeckFixtures', () => tapedeckFixtures({ tape } as never)],
      ['configureTapes', () => configureTapes({ per: 'file' } as never)],
      ['ReplayCache.open', () => ReplayCache.open(tape, { keepall: true } as never)],
      ['tapeTransport', () => tapeTransport(undefined, { tape, stirctOrder: true } as never)],
      ['RealtimeEndpoint', () => new RealtimeEndpoint({ tape, upsteam: 'https://api.openai.com' } as never)],
      // A test tape's option given to the plugin would do nothing there.
      ['tapedeck() plugin', () => tapedeck({ mode: 'record' } as never)],
    ];
    for (const [name, call] of refused) {
      const e = await thrown(call);
      expect(e?.code, name).toBe('E_ARG');
      expect(e!.message, name).toContain(`Unknown ${name} option`);
    }
    // The names each takes beyond createFetch's: a proxy's port, a fixture's folder, a runner's namer.
    expect(await thrown(() => tapedeckFixtures({ dir: 'tapes', per: 'file', testCommand: 'npx vitest run', match: 'exact' }))).toBeUndefined();
    expect(await thrown(() => configureTapes({ dir: 'tapes', volatileKeys: ['id'] }))).toBeUndefined();
    expect(await thrown(() => tapedeck({ prune: false, summary: true, drift: false }))).toBeUndefined();
    configureTapes({});
    // The realtime endpoint checks its redact rules when made, not at its first session.
    expect((await thrown(() => new RealtimeEndpoint({ tape, redact: { feilds: ['ssn'] } } as never)))!.message).toContain('Unknown redact option "feilds"');
    expect(await thrown(() => new RealtimeEndpoint({ tape, mode: 'replay', upstream: 'https://api.openai.com', strictOrder: true, redact: { fields: ['ssn'] } }))).toBeUndefined();
    const proxy = await startProxy({ tape: tapePath(), port: 0, host: '127.0.0.1', requestTimeoutMs: 5000, redact: { fields: ['ssn'] }, summary: undefined } as never).catch((e: unknown) => e);
    // summary is createFetch's, not the proxy's: the one name of the list above the proxy lacks.
    expect((proxy as TapedeckError).message).toContain('Unknown startProxy option "summary"');
    const ok = await startProxy({ tape: tapePath(), port: 0, host: '127.0.0.1', requestTimeoutMs: 5000, redact: { fields: ['ssn'] } });
    await ok.close();
  });
});

describe('checkOptionNames', () => {
  it('passes the known names and refuses the first other one, with no guess when none is near', () => {
    expect(() => checkOptionNames({ a: 1, b: 2 }, ['a', 'b', 'c'], 'f', 'docs/x.md')).not.toThrow();
    expect(() => checkOptionNames({ a: 1, zzzzzz: 2 }, ['a', 'b'], 'f', 'docs/x.md')).toThrow(/^Unknown f option "zzzzzz"\. The options of f are a, b \(docs\/x\.md\)\.$/);
  });
});
