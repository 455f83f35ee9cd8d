// The package as shipped: the embedded modules are the bytes the build produced, the version is
// package.json's, and the CLI answers.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SCALAR_SHA256, SIMD_BASE64, SIMD_SHA256 } from '../src/core/wasm.generated.ts';
import { SCALAR_BASE64 } from '../src/core/wasm-scalar.generated.ts';
import * as browserBuild from '../src/core/wasm-browser.generated.ts';
import { provideWasmBuild, wasmBytes } from '../src/core/wasm.ts';
import { VERSION } from '../src/version.ts';
import { MAX_DEPTH } from '../src/errors.ts';
import { appendRecords, createTape } from '../src/store/tape-file.ts';
import { ReplayCache } from '../src/store/replay-cache.ts';

const root = join(import.meta.dirname, '..');
const cli = join(root, 'dist/cli.js');

describe('build artefacts', () => {
  for (const [file, b64, sha] of [
    ['build/tapedeck.wasm', SCALAR_BASE64, SCALAR_SHA256],
    ['build/tapedeck-simd.wasm', SIMD_BASE64, SIMD_SHA256],
    ['build/tapedeck-simd-browser.wasm', browserBuild.SIMD_HEX, browserBuild.SIMD_SHA256],
  ] as const) {
    it(`${file} is what src/core/wasm*.generated.ts embed`, () => {
      const bytes = readFileSync(join(root, file));
      expect(Buffer.from(b64, file.includes('browser') ? 'hex' : 'base64').equals(bytes)).toBe(true);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha);
    });
  }

  it('the scalar build has no SIMD instructions; the SIMD build needs them', () => {
    expect(WebAssembly.validate(Buffer.from(SCALAR_BASE64, 'base64'))).toBe(true);
    const simd = new WebAssembly.Module(Buffer.from(SIMD_BASE64, 'base64'));
    const scalar = new WebAssembly.Module(Buffer.from(SCALAR_BASE64, 'base64'));
    // Same export surface, no imports: both instantiate anywhere.
    expect(WebAssembly.Module.exports(simd).map((e) => e.name).sort()).toEqual(WebAssembly.Module.exports(scalar).map((e) => e.name).sort());
    expect(WebAssembly.Module.imports(simd)).toEqual([]);
    expect(WebAssembly.Module.imports(scalar)).toEqual([]);
  });

  it("the browser's SIMD build is the SIMD build without the structural index, the request-view writer, string frames, the UTF-16 transcoder and the number routines' own exports", () => {
    const names = (b64: string) => WebAssembly.Module.exports(new WebAssembly.Module(Buffer.from(b64, 'base64'))).map((e) => e.name).sort();
    expect(browserBuild.SIMD_BASE64).toBe(''); // written in hex there
    const nodeOnly = ['view', 'index', 'valueFrames', 'parseNumber', 'formatNumber', 'writeCanonicalNumber', 'utf16ToUtf8'];
    expect(names(Buffer.from(browserBuild.SIMD_HEX, 'hex').toString('base64'))).toEqual(names(SIMD_BASE64).filter((n) => !nodeOnly.includes(n)));
    expect(names(SIMD_BASE64)).toContain('view');
    expect(names(SIMD_BASE64)).toContain('index');
    expect(names(SIMD_BASE64)).toContain('valueFrames');
    // The scalar build a page loads by URL is Node's, checked against the same digest.
    expect(browserBuild.SCALAR_SHA256).toBe(SCALAR_SHA256);
  });

  it('dist/wasm ships both builds as files, for pages that load one by URL', () => {
    expect(readFileSync(join(root, 'dist/wasm/tapedeck.wasm')).equals(readFileSync(join(root, 'build/tapedeck.wasm')))).toBe(true);
    expect(readFileSync(join(root, 'dist/wasm/tapedeck-simd.wasm')).equals(readFileSync(join(root, 'build/tapedeck-simd.wasm')))).toBe(true);
    expect(readFileSync(join(root, 'dist/wasm/tapedeck-simd-browser.wasm')).equals(readFileSync(join(root, 'build/tapedeck-simd-browser.wasm')))).toBe(true);
  });

  it('a build handed in at run time must be this version\'s exact bytes', () => {
    const scalar = new Uint8Array(readFileSync(join(root, 'build/tapedeck.wasm')));
    const other = scalar.slice();
    other[other.length - 1]! ^= 1;
    expect(() => provideWasmBuild('wasm', other)).toThrow(/not the wasm build of this version/);
    expect(() => provideWasmBuild('wasm-simd', scalar)).toThrow(/not the wasm-simd build/);
    provideWasmBuild('wasm', scalar);
    expect(wasmBytes('wasm')).toEqual(scalar);
  });

  it("package.json maps the scalar build away and the browser's SIMD build in, in browser bundles only", async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { browser: Record<string, string> };
    expect(pkg.browser['./dist/core/wasm-scalar.generated.js']).toBe('./dist/core/wasm-scalar.browser.js');
    expect(pkg.browser['./dist/core/wasm.generated.js']).toBe('./dist/core/wasm-browser.generated.js');
    const { build } = await import('esbuild');
    const bundle = async (platform: 'browser' | 'node') => {
      const out = await build({ entryPoints: [join(root, 'dist/index.js')], bundle: true, write: false, platform, format: 'esm', metafile: true, logLevel: 'silent', external: ['node:*'] });
      return Object.keys(out.metafile.inputs).filter((f) => /wasm[-.a-z]*\.(generated|browser)\.js$/.test(f)).sort();
    };
    expect(await bundle('browser')).toEqual(['dist/core/wasm-browser.generated.js', 'dist/core/wasm-scalar.browser.js']);
    expect(await bundle('node')).toEqual(['dist/core/wasm-scalar.generated.js', 'dist/core/wasm.generated.js']);
  });

  it('the module and the TypeScript layer agree on MAX_DEPTH', () => {
    for (const b64 of [SCALAR_BASE64, SIMD_BASE64]) {
      const x = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(b64, 'base64')), {}).exports as { MAX_DEPTH: WebAssembly.Global };
      expect(x.MAX_DEPTH.value).toBe(MAX_DEPTH);
    }
  });

  it("Node's bundled entries export what the entries do, and share one copy of each module", () => {
    // Every "node" condition of package.json points into dist/node/ and exports the names its
    // unbundled entry exports; an error thrown by one entry's code is an instance of the class
    // another entry exports (one TapedeckError, not a copy per bundle).
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const pairs: [string, string][] = [];
    const walk = (c: unknown) => {
      if (c === null || typeof c !== 'object') return;
      const o = c as Record<string, unknown>;
      if (typeof o.node === 'string' && typeof o.default === 'string') pairs.push([o.node, o.default]);
      for (const v of Object.values(o)) walk(v);
    };
    walk(pkg.exports);
    expect(pairs.length).toBeGreaterThanOrEqual(12);
    expect(pairs.filter(([n]) => !n.endsWith('/vitest/index.js')).length).toBe(pairs.length - 1);
    const code = `
      const pairs = ${JSON.stringify(pairs)};
      const out = [];
      for (const [node, plain] of pairs) {
        // The vitest helpers register hooks as they load: only a vitest run can import them.
        if (node.endsWith('/vitest/index.js')) continue;
        const a = Object.keys(await import(${JSON.stringify(root)} + '/' + node)).sort();
        const b = Object.keys(await import(${JSON.stringify(root)} + '/' + plain)).sort();
        out.push({ node, same: JSON.stringify(a) === JSON.stringify(b), a: a.length });
      }
      const { TapedeckError } = await import(${JSON.stringify(root)} + '/dist/node/index.js');
      const { ReplayCache } = await import(${JSON.stringify(root)} + '/dist/node/store/index.js');
      let shared = false;
      try { await ReplayCache.open(${JSON.stringify(root)}, { mode: 'replay' }); } catch (e) { shared = e instanceof TapedeckError; }
      console.log(JSON.stringify({ out, shared }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const { out, shared } = JSON.parse(r.stdout) as { out: { node: string; same: boolean; a: number }[]; shared: boolean };
    for (const x of out) {
      expect(x.node.startsWith('./dist/node/')).toBe(true);
      expect(x.a).toBeGreaterThan(0);
      expect(x, x.node).toMatchObject({ same: true });
    }
    expect(shared).toBe(true);
  });

  it('VERSION matches package.json', () => {
    expect(VERSION).toBe(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version);
  });
});

describe('tapedeck CLI', () => {
  const run = (args: string[], input?: string) => spawnSync(process.execPath, [cli, ...args], { input, encoding: 'utf8' });

  it('prints version and help', () => {
    expect(execFileSync(process.execPath, [cli, '--version'], { encoding: 'utf8' })).toMatch(new RegExp(`^tapedeck ${VERSION.replace(/\./g, '\\.')} \\(backend: wasm-simd`));
    const help = run(['help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage:');
    expect(help.stdout).toContain('hash [file]');
  });

  it('canonicalizes and hashes stdin', () => {
    expect(run(['canonical'], '{"b": 1.0, "a": [1E2]}').stdout).toBe('{"a":[100],"b":1}\n');
    const h = run(['hash'], '{"b": 1.0, "a": [1E2]}').stdout.trim();
    expect(h).toBe(createHash('sha256').update('{"a":[100],"b":1}').digest('hex'));
    expect(run(['hash', '--ignore', 'b'], '{"b": 1.0, "a": 2}').stdout.trim()).toBe(createHash('sha256').update('{"a":2}').digest('hex'));
  });

  it('prints path hashes of a request body', () => {
    const out = run(['paths'], JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }] })).stdout;
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]!.split('\t')[1]).toBe(createHash('sha256').update('{"content":"hi","role":"user"}').digest('hex'));
  });

  it('prints the matcher key of a request body, the same whatever the provider spelling', () => {
    const openai = { model: 'm', stream: true, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] };
    const anthropic = { model: 'm', system: 'Be brief.', max_tokens: 9, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
    const a = run(['key'], JSON.stringify(openai)).stdout.split('\n');
    const b = run(['key'], JSON.stringify(anthropic)).stdout.split('\n');
    expect(a[0]).toBe('provider\topenai-chat');
    expect(b[0]).toBe('provider\tanthropic');
    expect(a[1]).toMatch(/^key\t[0-9a-f]{64}$/);
    expect(a.slice(3)).toEqual(b.slice(3)); // same normalized messages: same message and path hashes
    expect(a[2]).toContain('"messageCount":2');
    const r = run(['key'], '{"nope": 1}');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('E_REQUEST');
  });

  it('verify checks a tape: ok, a torn tail with its offset, a missing file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-verify-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const tape = join(dir, 'app.tape');
    await createTape(tape, { created: '2026-11-22T00:00:00.000Z' });
    await appendRecords(tape, [{ a: 1 }, { b: 'two' }]);
    const ok = run(['verify', tape]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('2 records');
    expect(ok.stdout).toContain('created 2026-11-22T00:00:00.000Z');
    const size = statSync(tape).size;
    truncateSync(tape, size - 3);
    const torn = run(['verify', tape]);
    expect(torn.status).toBe(1);
    expect(torn.stdout).toContain('1 record,');
    expect(torn.stdout).toMatch(/E_TAPE_TORN_TAIL at byte \d+/);
    const missing = run(['verify', join(dir, 'nope.tape')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('E_TAPE_NOT_FOUND');
    expect(run(['verify']).status).toBe(2);
  });

  it('export and import round-trip a tape through deterministic JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-export-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const tape = join(dir, 'a.tape');
    await createTape(tape, { created: '2026-11-22T00:00:00.000Z' });
    await appendRecords(tape, [{ z: 1, a: 'é', when: new Date(0) }]);
    const exported = run(['export', tape, '--json']);
    expect(exported.status).toBe(0);
    expect(exported.stdout).toContain('"$type": "date"');
    const jsonFile = join(dir, 'a.json');
    writeFileSync(jsonFile, exported.stdout);
    const copy = join(dir, 'b.tape');
    expect(run(['import', jsonFile, copy]).stdout).toContain('1 record');
    expect(run(['export', copy]).stdout).toBe(exported.stdout);
    const again = run(['import', jsonFile, copy]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('E_TAPE_EXISTS');
    expect(run(['import', jsonFile, copy, '--force']).status).toBe(0);
  });

  it('inspect lists records; prune removes damage and keeps every good record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tapedeck-inspect-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const tape = join(dir, 'qa.tape');
    const cache = await ReplayCache.open(tape, { mode: 'record' });
    await cache.put({ model: 'gpt-4o', messages: [{ role: 'user', content: 'What is   the capital of France?' }] }, 'Paris');
    await cache.put({ model: 'claude-x', system: 'Be brief.', max_tokens: 9, messages: [{ role: 'user', content: 'Name a prime.' }] }, '7');
    await cache.close();
    const listed = run(['inspect', tape]).stdout.split('\n');
    expect(listed[0]).toBe('#\toffset\tbytes\tkey\tstatus\tstream\tsignature\tmodel\tfirst user message\torigin');
    // ReplayCache records name no host: '-' in the origin column.
    expect(listed[1]).toMatch(/^0\t\d+\t\d+\t[0-9a-f]{12}\t-\t-\t1 msgs, 0 tools\tgpt-4o\tWhat is the capital of France\?\t-$/);
    expect(listed[2]).toMatch(/\t2 msgs, 0 tools\tclaude-x\tName a prime\.\t-$/);
    // Damage the first record's payload: verify complains, prune repairs, the second survives.
    const bytes = readFileSync(tape);
    const firstFrame = Number(listed[1]!.split('\t')[1]);
    bytes[firstFrame + 20] = bytes[firstFrame + 20]! ^ 0xff;
    writeFileSync(tape, bytes);
    expect(run(['verify', tape]).status).toBe(1);
    const pruned = run(['prune', tape]);
    expect(pruned.status).toBe(0);
    expect(pruned.stdout).toMatch(/kept 1 record, removed \d+ bytes of damage/);
    expect(run(['verify', tape]).status).toBe(0);
    expect(run(['inspect', tape]).stdout).toContain('Name a prime.');

    // One flipped bit in the header's `created` timestamp: verify reports it, every record is
    // still there, and prune writes a fresh header.
    const b2 = readFileSync(tape);
    const created = b2.indexOf(Buffer.from('created')) + 12;
    b2[created] = b2[created]! ^ 1;
    writeFileSync(tape, b2);
    const v = run(['verify', tape]);
    expect(v.status).toBe(1);
    expect(v.stdout).toContain('E_TAPE_HEADER');
    expect(v.stdout).toMatch(/1 record/);
    const p2 = run(['prune', tape]);
    expect(p2.status).toBe(0);
    expect(p2.stdout).toMatch(/kept 1 record/);
    expect(run(['verify', tape]).status).toBe(0);
    expect(run(['inspect', tape]).stdout).toContain('Name a prime.');
  });

  it('reports bad input with the error code and exit status 1', () => {
    const r = run(['hash'], '{"a":1,"a":2}');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('E_DUPLICATE_KEY');
    expect(r.stderr).toContain('byte 7');
  });

  it('TAPEDECK_BACKEND selects the backend and rejects unknown values with the valid ones', () => {
    for (const b of ['js', 'wasm', 'wasm-simd']) {
      const r = spawnSync(process.execPath, [cli, 'version'], { encoding: 'utf8', env: { ...process.env, TAPEDECK_BACKEND: b } });
      expect(r.stdout).toContain(`backend: ${b},`);
    }
    const bad = spawnSync(process.execPath, [cli, 'version'], { encoding: 'utf8', env: { ...process.env, TAPEDECK_BACKEND: 'gpu' } });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('E_BACKEND');
    expect(bad.stderr).toContain('wasm-simd, wasm, js');
  });

  it('package exports resolve: llm-tapedeck and llm-tapedeck/store', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, { default: string; types: string }> };
    for (const entry of ['.', './store']) {
      const e = pkg.exports[entry]!;
      expect(statSync(join(root, e.types)).isFile()).toBe(true);
      const mod = (await import(join(root, e.default))) as Record<string, unknown>;
      expect(Object.keys(mod).length).toBeGreaterThan(5);
    }
    const store = (await import(join(root, 'dist/store/index.js'))) as { ReplayCache: { open: unknown }; resolveMode: (m?: string, env?: object) => string };
    expect(typeof store.ReplayCache.open).toBe('function');
    expect(store.resolveMode(undefined, {})).toBe('replay');
  });

  it('the built package entry point gives the same digests as the sources', async () => {
    const dist = (await import(join(root, 'dist/index.js'))) as typeof import('../src/index.ts');
    const src = await import('../src/index.ts');
    const msgs = [{ role: 'user', content: 'héllo' }, { role: 'assistant', content: [1.5, null] }];
    expect(dist.pathHashes(msgs)).toEqual(src.pathHashes(msgs));
  });

  it('rejects unknown commands with status 2', () => {
    const r = run(['frobnicate']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^tapedeck: E_USAGE Unknown command "frobnicate"\.\nhint: /);
  });
});
