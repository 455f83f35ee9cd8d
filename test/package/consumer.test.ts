// The packed tarball, installed in a fresh project, used as the README's quick start says: from
// CommonJS (require of ESM, Node >= 20.19) and from ESM, with the real OpenAI and Anthropic SDKs
// against a local fake provider, the main, store and proxy entries each. Recording once and
// replaying with the provider gone must give the same answers. Then the consumer's types: a .cts
// and a .mts file type-check against the shipped declarations, and publint and arethetypeswrong
// find nothing wrong with the tarball.
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstream, type Upstream } from '../proxy/fake-upstream.ts';
import { pack, root, type Packed } from './packed.ts';

let p: Packed;
let upstream: Upstream;
// npm pack of the build: seconds, more on a loaded CI machine than a hook's default 10 s.
beforeAll(async () => {
  p = pack();
  upstream = await startUpstream();
}, 120_000);
afterAll(async () => {
  await upstream?.close();
  p?.remove();
});

// One script body for both module systems; only how it loads the packages differs.
const BODY = `
async function main() {
  const base = process.env.UPSTREAM;
  const fetch = createFetch({ tape: process.env.TAPE }); // mode from TAPEDECK_MODE, else replay
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: base + '/v1', fetch });
  const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: base, fetch });
  const out = {};
  try {
    const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', temperature: 0, messages: [{ role: 'user', content: 'Hi from ' + process.env.KIND }] });
    out.openai = chat.choices[0].message.content;
    const msg = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'Hello from ' + process.env.KIND }] });
    out.anthropic = msg.content[0].text;
  } finally {
    await fetch.close();
  }
  const cache = await ReplayCache.open(process.env.CACHE_TAPE);
  try {
    const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'cached' }] };
    out.cached = await cache.get(request);
    if (out.cached === undefined) await cache.put(request, { answer: 42 });
  } finally {
    await cache.close();
  }
  out.hash = hashJSON('{"b":1,"a":2}') === hashJSON('{"a":2,"b":1}');
  out.version = VERSION;
  console.log(JSON.stringify(out));
}
main().catch((e) => { console.error(e); process.exit(1); });
`;

const CJS = `'use strict';
const { OpenAI } = require('openai');
const { Anthropic } = require('@anthropic-ai/sdk');
const { hashJSON, VERSION } = require('llm-tapedeck');
const { ReplayCache } = require('llm-tapedeck/store');
const { createFetch } = require('llm-tapedeck/proxy');
${BODY}`;

// ESM takes createFetch from llm-tapedeck/fetch (where users look first), CommonJS from /proxy.
const ESM = `import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { hashJSON, VERSION } from 'llm-tapedeck';
import { ReplayCache } from 'llm-tapedeck/store';
import { createFetch } from 'llm-tapedeck/fetch';
import { createFetch as fromProxy } from 'llm-tapedeck/proxy';
if (createFetch !== fromProxy) throw new Error('llm-tapedeck/fetch and llm-tapedeck/proxy export different createFetch');
${BODY}`;

// Asynchronous: the fake provider runs in this process and must answer while the script runs.
async function run(file: string, mode: string, upstreamURL: string) {
  const kind = file.endsWith('.cjs') ? 'cjs' : 'esm';
  const r = await promisify(execFile)(process.execPath, [file], {
    cwd: p.dir,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      TAPEDECK_MODE: mode,
      UPSTREAM: upstreamURL,
      KIND: kind,
      TAPE: join(p.dir, `${kind}.tape`),
      CACHE_TAPE: join(p.dir, `${kind}-cache.tape`),
    },
  });
  expect(r.stderr, `${file} (${mode}) stderr`).toBe('');
  return JSON.parse(r.stdout) as { openai: string; anthropic: string; cached: unknown; hash: boolean; version: string };
}

describe('the packed package in a fresh project', () => {
  for (const file of ['quick.cjs', 'quick.mjs']) {
    it(`${file}: record once with TAPEDECK_MODE=record, replay with the provider gone`, async () => {
      writeFileSync(join(p.dir, file), file.endsWith('.cjs') ? CJS : ESM);
      const before = upstream.calls.length;
      const recorded = await run(file, 'record', upstream.url);
      expect(upstream.calls.length - before).toBe(2);
      expect(recorded.openai).toMatch(/^Echo \d+: Hi from /);
      expect(recorded.anthropic).toMatch(/^Echo \d+: Hello from /);
      expect(recorded.cached).toBeUndefined();
      expect(recorded.hash).toBe(true);
      expect(recorded.version).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
      // Replay: a port nothing listens on, so any live call would fail.
      const replayed = await run(file, 'replay', 'http://127.0.0.1:9');
      expect(replayed).toEqual({ ...recorded, cached: { answer: 42 } });
    });
  }

  it('ships no source maps and no declaration that imports a .ts path', () => {
    expect(p.files.filter((f) => f.endsWith('.map'))).toEqual([]);
    const dts = p.files.filter((f) => f.endsWith('.d.ts'));
    expect(dts.length).toBeGreaterThan(10);
    const bad = dts.filter((f) => /(?:from|import)\s*\(?\s*['"]\.{1,2}\/[^'"]*\.ts['"]/.test(readFileSync(join(p.pkg, f), 'utf8')));
    expect(bad).toEqual([]);
    for (const f of ['LICENSE', 'CHANGELOG.md', 'README.md', 'package.json', 'dist/cli.js']) expect(p.files).toContain(f);
  });

  it('runs no script when installed (the build scripts are not shipped; the tarball has dist/)', () => {
    const scripts = (JSON.parse(readFileSync(join(p.pkg, 'package.json'), 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) expect(scripts[hook], hook).toBeUndefined();
    expect(p.files).toContain('dist/proxy/fetch-entry.js');
  });
});

/** An entry of package.json's exports: a path, or conditions naming its types. */
type ExportEntry = string | { types?: string; require?: { types?: string } };

/** Every entry point a consumer can import, from package.json's exports. */
const ENTRIES = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports)
  .filter((k) => k !== './package.json')
  .map((k) => (k === '.' ? 'llm-tapedeck' : `llm-tapedeck/${k.slice(2)}`));

/** A module importing each of `entries` and using it, so that each one's declarations are checked. */
const importsOf = (entries: readonly string[]): string => entries.map((e, i) => `import * as e${i} from '${e}';\nexport const n${i}: number = Object.keys(e${i}).length;\n`).join('');

describe('types, as a consumer compiles them', () => {
  const TSCONFIG = { compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'], lib: ['es2022', 'esnext.disposable'] } };
  const USE = `
const key: string = hashJSON('{"a":1}');
const f: TapedeckFetch = createFetch({ tape: 't.tape', mode: 'replay' });
async function use(): Promise<void> {
  const cache = await ReplayCache.open('c.tape');
  await cache.close();
  await f.close();
}
void use;
void key;
// @ts-expect-error: the mode is checked
createFetch({ tape: 't.tape', mode: 42 });
`;
  beforeAll(() => {
    writeFileSync(join(p.dir, 'tsconfig.json'), JSON.stringify({ ...TSCONFIG, include: ['*.cts', '*.mts'] }));
    writeFileSync(
      join(p.dir, 'consumer.cts'),
      `import tapedeck = require('llm-tapedeck');\nimport store = require('llm-tapedeck/store');\nimport proxy = require('llm-tapedeck/proxy');\nconst { hashJSON } = tapedeck;\nconst { ReplayCache } = store;\nconst { createFetch } = proxy;\ntype TapedeckFetch = proxy.TapedeckFetch;\n${USE}`,
    );
    writeFileSync(
      join(p.dir, 'consumer.mts'),
      `import { hashJSON } from 'llm-tapedeck';\nimport { ReplayCache } from 'llm-tapedeck/store';\nimport { createFetch, type TapedeckFetch } from 'llm-tapedeck/fetch';\n${USE}`,
    );
  });

  const tsc = (bin: string, args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: p.dir, encoding: 'utf8' });

  it('a .cts (require) and a .mts consumer type-check with this TypeScript', () => {
    const r = tsc(join(root, 'node_modules/typescript/bin/tsc'), ['-p', 'tsconfig.json']);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  // typesVersions repeats each subpath's types for resolvers that read no `exports`: the two must
  // name the same files.
  it('typesVersions maps every subpath to the types its exports entry names', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, ExportEntry>; typesVersions: { '*': Record<string, string[]> } };
    const fromExports = Object.fromEntries(
      Object.entries(pkg.exports)
        .filter(([k]) => k !== '.' && k !== './package.json')
        .map(([k, v]) => [k.slice(2), [typeof v === 'string' ? v : (v.types ?? v.require?.types)]]),
    );
    expect(pkg.typesVersions['*']).toEqual(fromExports);
  });

  // The strictest options a consumer may set, with the declarations checked (skipLibCheck off):
  // under exactOptionalPropertyTypes an optional member of an interface (`salt?: string`) does
  // not take a class's `salt: string | undefined`, so the store's backends failed to implement
  // their interface in the consumer's compile. Every entry point is imported, so every shipped
  // declaration it reaches is checked.
  it('a consumer with exactOptionalPropertyTypes type-checks every entry point', () => {
    // And the docs' put with the answer's own bytes, whose content type may be absent (`?? undefined`).
    const put = `\nimport { ReplayCache as PutCache } from 'llm-tapedeck/store';\nexport async function putRaw(cache: PutCache, res: Response): Promise<void> {\n  const body = new Uint8Array(await res.arrayBuffer());\n  await cache.put({ q: 1 }, { a: 1 }, { durationMs: 5, raw: { body, contentType: res.headers.get('content-type') ?? undefined }, meta: { test: 't' } });\n}\n`;
    writeFileSync(join(p.dir, 'strict.mts'), importsOf(ENTRIES) + put);
    const strict = { compilerOptions: { ...TSCONFIG.compilerOptions, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, skipLibCheck: false }, files: ['strict.mts'] };
    writeFileSync(join(p.dir, 'tsconfig.strict.json'), JSON.stringify(strict));
    const r = tsc(join(root, 'node_modules/typescript/bin/tsc'), ['-p', 'tsconfig.strict.json']);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  // A page's project has the DOM's types and not Node's (no @types/node, no esnext.disposable
  // lib), and may check declarations too: the browser entry's must not reach Buffer, NodeJS or
  // Symbol.asyncDispose as only Node's types declare it.
  it('a page project without Node types type-checks llm-tapedeck/browser', () => {
    writeFileSync(
      join(p.dir, 'page.mts'),
      `import { loadTape, createReplayFetch } from 'llm-tapedeck/browser';\nexport async function start(): Promise<string> {\n  const tape = await loadTape('/tapes/chat.tape');\n  const f = createReplayFetch({ tape, timing: 30 });\n  const r = await f('https://api.openai.com/v1/chat/completions', { method: 'POST', body: '{}' });\n  await f.close();\n  return r.text();\n}\n`,
    );
    const page = { compilerOptions: { module: 'esnext', moduleResolution: 'bundler', target: 'es2022', strict: true, noEmit: true, skipLibCheck: false, types: [], lib: ['es2022', 'dom', 'dom.iterable'] }, files: ['page.mts'] };
    writeFileSync(join(p.dir, 'tsconfig.page.json'), JSON.stringify(page));
    const r = tsc(join(root, 'node_modules/typescript/bin/tsc'), ['-p', 'tsconfig.page.json']);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  // The oldest TypeScript at hand: the one arethetypeswrong ships. The README names it as the minimum.
  const oldTsc = join(root, 'node_modules/@arethetypeswrong/core/node_modules/typescript/bin/tsc');
  it.runIf(existsSync(oldTsc))('a .mts consumer type-checks with TypeScript 5.6', () => {
    const version = JSON.parse(readFileSync(join(oldTsc, '../../package.json'), 'utf8')).version as string;
    expect(version).toMatch(/^5\.6\./);
    const r = tsc(oldTsc, ['-p', 'tsconfig.json', '--noEmit']);
    // TypeScript before 5.8 does not know require() of ESM: only the .mts is held to it.
    const lines = (r.stdout + r.stderr).split('\n').filter((l) => l.trim() !== '' && !l.startsWith('consumer.cts'));
    expect(lines).toEqual([]);
  });

  // A CommonJS project on TypeScript 5's `"module": "commonjs"` resolves packages the old way
  // (node10), which reads no `exports`: only `typesVersions` leads it to a subpath's types. Its
  // emitted require() of each entry runs on Node >= 20.19, as the CommonJS test above shows.
  // The vitest entries are left out: vitest's own declarations do not resolve that way.
  it.runIf(existsSync(oldTsc))('a CommonJS project resolving the old way (node10) finds every entry point\'s types', () => {
    const entries = ENTRIES.filter((e) => !e.startsWith('llm-tapedeck/vitest'));
    writeFileSync(join(p.dir, 'legacy.ts'), `${importsOf(entries)}import { createFetch } from 'llm-tapedeck/fetch';\nexport const f: () => Promise<void> = createFetch({ tape: 't.tape' }).close;\n`);
    const legacy = { compilerOptions: { module: 'commonjs', moduleResolution: 'node10', target: 'es2022', strict: true, noEmit: true, esModuleInterop: true, types: ['node'], lib: ['es2022', 'esnext.disposable'] }, files: ['legacy.ts'] };
    writeFileSync(join(p.dir, 'tsconfig.legacy.json'), JSON.stringify(legacy));
    const r = tsc(oldTsc, ['-p', 'tsconfig.legacy.json']);
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('package linters', () => {
  // Warnings count as errors (--strict). Suggestions are not held to: the one publint makes is
  // to move the object "browser" field (the browser build's file swap) into conditional exports.
  it('publint finds no error or warning', () => {
    const r = spawnSync(process.execPath, [join(root, 'node_modules/publint/src/cli.js'), 'run', p.tarball, '--strict', '--level', 'warning'], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).not.toMatch(/Errors:|Warnings:/);
    expect(r.status).toBe(0);
  });

  it('arethetypeswrong: every entry resolves to types and JavaScript under node16 and bundlers', () => {
    // cjs-resolves-to-esm is the one rule ignored: it flags require() of an ES module, which Node
    // >= 20.19 (the package's engines) supports; the consumer test above runs exactly that.
    const r = spawnSync(
      process.execPath,
      [join(root, 'node_modules/@arethetypeswrong/cli/dist/index.js'), p.tarball, '--profile', 'node16', '--ignore-rules', 'cjs-resolves-to-esm', '--format', 'json'],
      { encoding: 'utf8' },
    );
    const report = JSON.parse(r.stdout) as { analysis: { problems: unknown[]; entrypoints: Record<string, unknown> } };
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(['.', './browser', './fetch', './jest', './jest/reporter', './mcp', './mocha', './package.json', './proxy', './realtime', './store', './testing', './vitest', './vitest/plugin']);
    expect(r.status).toBe(0);
  });
});
