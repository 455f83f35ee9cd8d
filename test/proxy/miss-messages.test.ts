// Miss messages as users read them: `err.message` of the real OpenAI and Anthropic SDKs, against
// the proxy and through createFetch, for each kind of difference. The first line must be short,
// say what differs, name the fix that exists for the entry point used (never `tapedeck serve`
// to a createFetch user), never offer a looser matching mode for changed content, and carry no
// escaped JSON; the full diagnosis must still be reachable in the error's body.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { startProxy, type ProxyServer } from '../../src/proxy/server.ts';
import { scanTape } from '../../src/store/tape-file.ts';
import { startUpstream } from './fake-upstream.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-miss-'));
const tape = join(dir, 'miss.tape');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.unstubAllEnvs());

type Body = Record<string, unknown>;
const system = { role: 'system', content: 'Be brief.' };
const france: Body = { model: 'gpt-4o-mini', temperature: 0, messages: [system, { role: 'user', content: 'What is the capital of France?' }] };
const tool = (name: string) => ({ type: 'function', function: { name, description: `${name} tool`, parameters: { type: 'object', properties: { city: { type: 'string' } } } } });
const weather = (city: string, id = 'call_1'): Body => ({
  model: 'gpt-4o-mini',
  tools: [tool('get_weather')],
  messages: [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city }) } }] },
    { role: 'tool', tool_call_id: id, content: 'sunny' },
  ],
});
// A client that stamps each message with the time it was sent: the one member that changes.
const stamped = (at: string): Body => ({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Hello', sent_at: at }] });
const claude = (q: string, model = 'claude-sonnet-4-5') => ({ model, max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user' as const, content: q }] });

// createFetch replays on the host the tape was recorded for (the fake upstream's; a loopback
// host's port is not compared): nothing is listening there.
const REPLAYED_AT = 'http://127.0.0.1:9';
const openai = (baseURL: string, fetchImpl?: typeof fetch) => new OpenAI({ baseURL, apiKey: 'sk-test', maxRetries: 0, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
const anthropic = (baseURL: string, fetchImpl?: typeof fetch) => new Anthropic({ baseURL, apiKey: 'sk-ant-test', maxRetries: 0, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
const chat = (c: OpenAI, body: Body) => c.chat.completions.create(body as never) as Promise<unknown>;

beforeAll(async () => {
  const upstream = await startUpstream();
  const rec = createFetch({ tape, mode: 'record' });
  try {
    const o = openai(`${upstream.url}/v1`, rec);
    for (const body of [france, weather('Paris'), stamped('2026-11-23T10:00:00Z')]) await chat(o, body);
    await anthropic(upstream.url, rec).messages.create(claude('What is the capital of France?'));
  } finally {
    await rec.close();
    await upstream.close();
  }
});

/** The kinds of difference, each with the words its headline must use. */
const rows: { name: string; body?: Body; embeddings?: true; difference: RegExp; volatile?: true }[] = [
  {
    name: 'changed text',
    body: { ...france, messages: [system, { role: 'user', content: 'What is the capital of Germany?' }] },
    difference: /^message 1 \(user\) text differs from the closest recording$/,
  },
  {
    // A message taken out shifts the rest: said as the message missing, not as message 0's
    // role differing from the system prompt it was never meant to match.
    name: 'dropped system message',
    body: { ...france, messages: [{ role: 'user', content: 'What is the capital of France?' }] },
    difference: /^the system prompt \(message 0 of the closest recording\) is missing from the request$/,
  },
  {
    name: 'a message put in before the recorded ones',
    body: { ...france, messages: [system, { role: 'user', content: 'Hi.' }, { role: 'user', content: 'What is the capital of France?' }] },
    difference: /^message 1 \(user\) is new: the closest recording goes on without it$/,
  },
  {
    // Roles are told before text (a text difference between messages of different roles reads
    // as if the user's words changed).
    name: 'changed role',
    body: { ...france, messages: [{ role: 'developer', content: 'Be brief.' }, { role: 'user', content: 'What is the capital of France?' }] },
    difference: /^message 0 \(developer\) role differs: developer vs system in the closest recording$/,
  },
  { name: 'changed model', body: { ...france, model: 'gpt-4o' }, difference: /^model differs: gpt-4o vs gpt-4o-mini in the closest recording$/ },
  { name: 'added tool', body: { ...france, tools: [tool('get_time')] }, difference: /^tools differ from the closest recording: \+get_time$/ },
  { name: 'changed tool arguments', body: weather('Berlin'), difference: /^message 1 \(assistant\) tool call arguments differ from the closest recording$/ },
  {
    name: 'extra message',
    body: { ...france, messages: [...(france.messages as unknown[]), { role: 'assistant', content: 'Paris.' }, { role: 'user', content: 'And Germany?' }] },
    difference: /^message 2 \(assistant\) is new: the closest recording has 2 messages$/,
  },
  { name: 'changed deciding argument', body: { ...france, max_tokens: 50 }, difference: /^argument max_tokens differs: 50 vs \(absent\) in the closest recording$/ },
  { name: 'no recording at all', embeddings: true, difference: /^no recording for POST \/v1\/embeddings$/ },
  {
    name: 'a member the recording lacks',
    body: { ...france, messages: [system, { role: 'user', content: 'What is the capital of France?', sent_at: '2026-11-24T09:30:00Z' }] },
    difference: /^message 1 \(user\) member "sent_at" differs from the closest recording$/,
    volatile: true,
  },
  { name: 'only a volatile member', body: stamped('2026-11-24T09:30:00Z'), difference: /^message 0 \(user\) member "sent_at" differs from the closest recording$/, volatile: true },
];

type Entry = 'proxy' | 'fetch (mode option)' | 'fetch (environment)';
/** The fix each entry point must name, and words that belong to the others only. */
const FIX: Record<Entry, { fix: string; foreign: string[]; volatile: string }> = {
  proxy: { fix: 're-record: restart tapedeck serve with --mode record', foreign: ['createFetch', 'TAPEDECK_MODE', 'ReplayCache'], volatile: 'volatileKeys: ["sent_at"] (createHandler or startProxy option)' },
  'fetch (mode option)': { fix: "re-record: createFetch({ mode: 'record' })", foreign: ['tapedeck serve', '--mode', 'TAPEDECK_MODE', 'ReplayCache'], volatile: 'volatileKeys: ["sent_at"]' },
  'fetch (environment)': { fix: "re-record: TAPEDECK_MODE=record (or createFetch mode 'record')", foreign: ['tapedeck serve', '--mode', 'ReplayCache'], volatile: 'volatileKeys: ["sent_at"]' },
};

interface Miss {
  message: string;
  details: { difference: string; report: string; fixes: string[]; closest?: unknown[] };
}

/** What every miss message must be, whatever the entry point and the SDK. */
function expectShortMiss(message: string, difference: string, fix: string, foreign: readonly string[]): string[] {
  const lines = message.split('\n');
  expect(lines[0]!.length, lines[0]).toBeLessThanOrEqual(160);
  expect(lines[0]).toBe(`400 tapedeck miss: ${difference}; ${fix}`);
  // At most two short excerpt lines follow; no report, no JSON blob, no escaped JSON.
  expect(lines.length).toBeLessThanOrEqual(3);
  for (const l of lines) expect(l.length).toBeLessThanOrEqual(160);
  expect(message).not.toContain('\\"');
  expect(message).not.toContain('"type":"error"');
  expect(message).not.toContain('Closest recordings');
  // Never a looser matching mode, whatever differs.
  expect(message).not.toMatch(/signature|hybrid|sequential|--match|match:/i);
  for (const f of foreign) expect(message).not.toContain(f);
  return lines;
}

describe.each<Entry>(['proxy', 'fetch (mode option)', 'fetch (environment)'])('OpenAI SDK, %s', (entry) => {
  let proxy: ProxyServer | undefined;
  let client: OpenAI;
  let play: ReturnType<typeof createFetch> | undefined;
  beforeAll(async () => {
    if (entry === 'proxy') {
      proxy = await startProxy({ tape, mode: 'replay', port: 0 });
      client = openai(`${proxy.url}/v1`);
    } else {
      vi.stubEnv('TAPEDECK_MODE', '');
      play = createFetch(entry === 'fetch (mode option)' ? { tape, mode: 'replay' } : { tape });
      client = openai(`${REPLAYED_AT}/v1`, play);
    }
  });
  afterAll(async () => {
    await proxy?.close();
    await play?.close();
  });

  it.each(rows)('$name: a short first line with what differs and the fix for this entry point', async (row) => {
    const call = row.embeddings ? client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' }) : chat(client, row.body!);
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.code).toBe('E_MISS');
    const { fix, foreign, volatile } = FIX[entry];
    // The defects first: another entry point's fix, a looser mode, a fix for changed content.
    for (const f of foreign) expect(e.message).not.toContain(f);
    expect(e.message).not.toMatch(/signature|hybrid|sequential/i);
    if (!row.volatile) expect(e.message).not.toMatch(/volatileKeys|ignoreArgs|--ignore-arg/);
    expect(e.message.split('\n')[0]!.length).toBeLessThanOrEqual(160);
    // The detail is in the body, which the SDK exposes as err.error.
    const details = (e.error as { tapedeck: Miss['details'] }).tapedeck;
    expect(details.difference).toMatch(row.difference);
    expect(details.report.length).toBeGreaterThan(0);
    const fixNamed = row.volatile ? `if it is volatile, ignore it with ${volatile}; else ${fix}` : fix;
    if (`400 tapedeck miss: ${details.difference}; ${fixNamed}`.length <= 160) expectShortMiss(e.message, details.difference, fixNamed, foreign);
    else {
      // Too long for one line: what differs first, the fix on the next line.
      const lines = e.message.split('\n');
      expect(lines[0]).toBe(`400 tapedeck miss: ${details.difference}`);
      expect(lines[1]).toBe(fixNamed.charAt(0).toUpperCase() + fixNamed.slice(1));
      expect(e.message).not.toMatch(/signature|hybrid|sequential/i);
      for (const f of foreign) expect(e.message).not.toContain(f);
    }
    if (row.volatile) expect(e.message).toContain(volatile);
    else {
      // Content changed: nothing to ignore, in the message or in the listed fixes.
      expect([e.message, ...details.fixes].join('\n')).not.toMatch(/volatileKeys|ignoreArgs|--ignore-arg|allowRepeats/);
    }
    if (row.name === 'a member the recording lacks') {
      // The recording has its message 0; only the member is absent there.
      expect(e.message.split('\n').slice(-2)).toEqual(['  request:   "2026-11-24T09:30:00Z"', '  recording: (absent)']);
    }
    if (row.name === 'changed text') {
      expect(e.message.split('\n').slice(1)).toEqual(['  request:   "What is the capital of Germany?"', '  recording: "What is the capital of France?"']);
      expect(details.report).toContain('Closest recordings:');
    }
  });

  it('only the tool-call ids differ: not a miss, the recording answers', async () => {
    const r = await client.chat.completions.create(weather('Paris', 'call_ZZZ_9') as never).withResponse();
    expect(r.response.headers.get('x-tapedeck-match')).toBe('exact');
  });
});

it('the volatileKeys the miss names makes createFetch replay the recording', async () => {
  const play = createFetch({ tape, mode: 'replay', volatileKeys: ['sent_at'] });
  try {
    const r = await chat(openai(`${REPLAYED_AT}/v1`, play), stamped('2026-11-24T09:30:00Z'));
    expect((r as { choices: { message: { content: string } }[] }).choices[0]!.message.content).toContain('Hello');
  } finally {
    await play.close();
  }
});

describe.each<Entry>(['proxy', 'fetch (mode option)'])('Anthropic SDK, %s', (entry) => {
  let proxy: ProxyServer | undefined;
  let client: Anthropic;
  let play: ReturnType<typeof createFetch> | undefined;
  beforeAll(async () => {
    if (entry === 'proxy') {
      proxy = await startProxy({ tape, mode: 'replay', port: 0 });
      client = anthropic(proxy.url);
    } else {
      play = createFetch({ tape, mode: 'replay' });
      client = anthropic(REPLAYED_AT, play);
    }
  });
  afterAll(async () => {
    await proxy?.close();
    await play?.close();
  });

  it.each([
    { name: 'changed text', body: claude('What is the capital of Germany?'), difference: 'message 1 (user) text differs from the closest recording' },
    { name: 'changed model', body: claude('What is the capital of France?', 'claude-opus-4-1'), difference: 'model differs: claude-opus-4-1 vs claude-sonnet-4-5 in the closest recording' },
  ])('$name: err.message is the short headline, not the body as escaped JSON', async ({ body, difference }) => {
    const err = await client.messages.create(body).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const e = err as InstanceType<typeof Anthropic.BadRequestError>;
    const lines = expectShortMiss(e.message, difference, FIX[entry].fix, FIX[entry].foreign);
    if (difference.startsWith('message')) expect(lines.slice(1)).toEqual(['  request:   "What is the capital of Germany?"', '  recording: "What is the capital of France?"']);
    // The stable code where the SDK looks for one, and the full diagnosis in the body.
    expect(e.errorCode).toBe('E_MISS');
    const inner = (e.error as { error: { type: string; code: string; tapedeck: Miss['details'] } }).error;
    expect(inner.type).toBe('invalid_request_error');
    expect(inner.code).toBe('E_MISS');
    expect(inner.tapedeck.difference).toBe(difference);
    expect(inner.tapedeck.report).toContain('Closest recordings:');
  });
});

describe('the closest recordings are named where they lie on the tape', () => {
  // Another route's recording comes first, so a recording's place among its route's recordings
  // (its number in the report) is not its place on the tape: the report's `tape@offset` must be
  // the offset of that recording's own record.
  const named = join(dir, 'named.tape');
  beforeAll(async () => {
    const upstream = await startUpstream();
    const rec = createFetch({ tape: named, mode: 'record' });
    try {
      await anthropic(upstream.url, rec).messages.create(claude('What is the capital of France?'));
      const o = openai(`${upstream.url}/v1`, rec);
      for (const body of [weather('Paris'), france]) await chat(o, body);
    } finally {
      await rec.close();
      await upstream.close();
    }
  });

  // Exact matching files recordings by their stored keys and keys them at the first miss;
  // hybrid matching decodes and keys them at open (strictOrder: once both are used, a changed
  // request finds no recording to fall back to and misses).
  it.each(['proxy', 'createFetch', 'createFetch, hybrid'] as const)('%s: the miss names recording #1 of the route at the third record\'s offset', async (entry) => {
    const proxy = entry === 'proxy' ? await startProxy({ tape: named, mode: 'replay', port: 0 }) : undefined;
    const hybrid = entry === 'createFetch, hybrid';
    const play = proxy ? undefined : createFetch({ tape: named, mode: 'replay', ...(hybrid ? { match: 'hybrid' as const, strictOrder: true } : {}) });
    try {
      const client = proxy ? openai(`${proxy.url}/v1`) : openai(`${REPLAYED_AT}/v1`, play);
      // A hit first: the route's recordings are served by their stored keys until a miss.
      await chat(client, france);
      if (hybrid) await chat(client, weather('Paris'));
      const err = await chat(client, { ...france, messages: [system, { role: 'user', content: 'What is the capital of Germany?' }] }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const { report } = ((err as InstanceType<typeof OpenAI.BadRequestError>).error as { tapedeck: Miss['details'] }).tapedeck;
      const frames = (await scanTape(named)).frames.map((f) => f.offset);
      expect(frames).toHaveLength(3);
      expect(report).toContain(`#1 (${named}@${frames[2]}) [already used]`);
      expect(report).not.toContain(`#1 (${named}@${frames[1]})`);
      // The other chat recording, served only under hybrid matching here, at its own record.
      if (hybrid) expect(report).toContain(`#0 (${named}@${frames[1]}) [already used]`);
      else expect(report).not.toContain(`@${frames[1]}) [already used]`);
    } finally {
      await proxy?.close();
      await play?.close();
    }
  });
});
