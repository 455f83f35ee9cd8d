// Size rows: what a page downloads for llm-tapedeck/browser, minified by esbuild and gzipped
// (level 9), WebAssembly included (embedded as text: base64, or hex for browsers, see scripts/build.mjs). Baseline: the main entry bundled
// the same way for a runtime that takes package.json's default files (both wasm builds), the
// size the browser entry is compared with. Target: the browser entry at most 100 KB gzipped.
import { makeTarget } from './targets.mjs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BUDGET_GZIP = 100 * 1024;

async function bundle(entry, platform) {
  const out = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    minify: true,
    write: false,
    format: 'esm',
    platform,
    target: 'es2022',
    metafile: true,
    logLevel: 'silent',
    // The Node-platform bundle leaves Node built-ins as imports, as a Node bundler would.
    external: platform === 'node' ? ['node:*'] : [],
  });
  const bytes = out.outputFiles[0].contents;
  const inputs = Object.values(out.metafile.outputs)[0].inputs;
  const wasm = Object.entries(inputs)
    .filter(([f]) => /wasm(-scalar|-browser)?\.generated\.js$/.test(f))
    .reduce((n, [, v]) => n + v.bytesInOutput, 0);
  return { minified: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, wasmBase64: wasm };
}

/** Sizes of the browser entry and the baselines; rows carry the ratio to the baseline. */
export async function sizeBench() {
  const baseline = { label: 'baseline: llm-tapedeck (main entry, both wasm builds)', ...(await bundle('dist/index.js', 'node')) };
  const rows = [
    baseline,
    { label: 'llm-tapedeck/browser (for browsers: SIMD build only)', ...(await bundle('dist/browser/index.js', 'browser')) },
    { label: 'llm-tapedeck main entry (for browsers: SIMD build only)', ...(await bundle('dist/index.js', 'browser')) },
  ].map((r) => ({ ...r, baseline: baseline.label, ratio: r.gzip / baseline.gzip }));
  const browser = rows[1];
  const targets = [
    makeTarget({ label: 'llm-tapedeck/browser gzipped, WebAssembly included', unit: 'KB', value: browser.gzip / 1024, op: '<=', goal: BUDGET_GZIP / 1024, baseline: `main entry for Node, both wasm builds, ${(baseline.gzip / 1024).toFixed(1)} KB gzipped` }),
  ];
  return { rows, targets };
}
