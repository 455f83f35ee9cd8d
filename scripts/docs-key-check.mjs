// Clean-room check: do docs/hash-spec.md and docs/matching.md define the request key
// completely? scripts/docs-key.py is an implementation written from those docs alone; this
// script compares it with the real implementation (dist/, used as a black box) on
//   1. every published vector in test/vectors/request-keys.json, and
//   2. a generated corpus (scripts/docs-key-corpus.py, deterministic seed) of realistic and
//      edge-case bodies of every shape,
// and prints the agreement per shape, with the first disagreements in full. It also checks, on
// the same corpus, that requestDigests() of the body's bytes (the raw-bytes path) gives what
// requestKeys() gives, as docs/matching.md promises.
//
//   npm run build && node scripts/docs-key-check.mjs [--count 6000] [--seed 20261123] [--show 5]
//
// Needs python3 (standard library only) on PATH, so it is not part of `npm test`: CI images
// may have no python3. Exit code 0 when everything agrees, 1 otherwise. Temporary files go to
// the OS temp directory and are removed at the end.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const count = arg('count', '6000');
const seed = arg('seed', '20261123');
const show = Number(arg('show', '5'));

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 30, ...opts });
  if (r.error) {
    console.error(`cannot run ${cmd}: ${r.error.message}${cmd === 'python3' ? ' (this check needs python3 on PATH)' : ''}`);
    process.exit(2);
  }
  return r;
}

let failed = false;

// 1. The published vectors.
console.log('== published vectors (test/vectors/request-keys.json)');
const v = run('python3', ['scripts/docs-key.py', '--vectors', 'test/vectors/request-keys.json']);
process.stdout.write(v.stdout);
process.stderr.write(v.stderr);
if (v.status !== 0) failed = true;

// 2. The generated corpus.
const dir = mkdtempSync(join(tmpdir(), 'docs-key-'));
try {
  const casesPath = join(dir, 'cases.json');
  const expectPath = join(dir, 'expected.json');
  const gotPath = join(dir, 'got.json');
  const gen = run('python3', ['scripts/docs-key-corpus.py', count, seed]);
  if (gen.status !== 0) throw new Error(`corpus generator failed: ${gen.stderr}`);
  rmSync(casesPath, { force: true });
  await import('node:fs').then((fs) => fs.writeFileSync(casesPath, gen.stdout));
  const bb = run(process.execPath, ['scripts/docs-key-blackbox.mjs', casesPath, expectPath]);
  if (bb.status !== 0) throw new Error(`black box failed: ${bb.stderr}`);
  const py = run('python3', ['scripts/docs-key.py', casesPath, gotPath]);
  if (py.status !== 0) throw new Error(`docs-key.py failed: ${py.stderr}`);

  const cases = JSON.parse(readFileSync(casesPath, 'utf8'));
  const expected = JSON.parse(readFileSync(expectPath, 'utf8'));
  const got = JSON.parse(readFileSync(gotPath, 'utf8'));
  const stats = new Map();
  const bad = [];
  for (let i = 0; i < cases.length; i++) {
    const e = expected[i];
    const g = got[i];
    // Group by what the black box decided (its provider, or its error code).
    const shape = e.error ? `error ${e.error}` : e.provider;
    const why = disagreement(e, g);
    const s = stats.get(shape) ?? [0, 0];
    s[0] += why ? 0 : 1;
    s[1] += 1;
    stats.set(shape, s);
    if (why) bad.push({ i, why, c: cases[i], e, g });
  }
  console.log(`\n== generated corpus (${cases.length} bodies, seed ${seed})`);
  let ok = 0;
  for (const [k, [a, n]] of [...stats].sort()) {
    console.log(`${k.padEnd(28)} ${a}/${n}`);
    ok += a;
  }
  console.log(`${'total'.padEnd(28)} ${ok}/${cases.length}`);
  for (const b of bad.slice(0, show)) {
    console.log(`\nDISAGREE #${b.i} (${b.c.shape}): ${b.why}`);
    console.log(`  options ${JSON.stringify(b.c.options)}`);
    console.log(`  body    ${b.c.body.length > 1500 ? `${b.c.body.slice(0, 1500)}...` : b.c.body}`);
    console.log(`  impl    ${summary(b.e)}`);
    console.log(`  docs    ${summary(b.g)}`);
  }
  if (bad.length) failed = true;

  // The raw-bytes path against requestKeys (both from the implementation).
  const rawBad = [];
  for (let i = 0; i < cases.length; i++) {
    const e = expected[i];
    const r = e.raw;
    const same = e.error || r.error
      ? e.error === r.error
      : ['key', 'messageHashes', 'pathHashes', 'signature'].every((k) => JSON.stringify(e[k]) === JSON.stringify(r[k]));
    if (!same) rawBad.push(i);
  }
  console.log(`\n== requestDigests(bytes) vs requestKeys(text), same corpus: ${cases.length - rawBad.length}/${cases.length}`);
  for (const i of rawBad.slice(0, show)) {
    const e = expected[i];
    console.log(`\nDISAGREE #${i}: requestKeys ${e.error ?? e.key} vs requestDigests ${e.raw.error ?? e.raw.key}`);
    console.log(`  options ${JSON.stringify(cases[i].options)}`);
    console.log(`  body    ${cases[i].body.length > 1500 ? `${cases[i].body.slice(0, 1500)}...` : cases[i].body}`);
  }
  if (rawBad.length) failed = true;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

function disagreement(e, g) {
  if (e.error || g.error) {
    if (e.error !== g.error) return `error ${g.error ?? 'none'} (docs) vs ${e.error ?? 'none'} (implementation)`;
    // The spec gives a path for E_REQUEST only (E_DEPTH from hashing the view also names one).
    if (e.error === 'E_REQUEST' && (e.path ?? null) !== (g.path ?? null)) {
      return `error path ${g.path} (docs) vs ${e.path} (implementation)`;
    }
    return null;
  }
  if (e.provider !== g.provider) return `provider ${g.provider} (docs) vs ${e.provider} (implementation)`;
  if (e.view !== g.view) return 'view';
  for (const k of ['key', 'messageHashes', 'pathHashes', 'signature', 'signatureDigest']) {
    if (JSON.stringify(e[k]) !== JSON.stringify(g[k])) return k;
  }
  return null;
}

function summary(r) {
  return r.error ? `error ${r.error} ${r.path ?? ''}` : `${r.provider} ${r.view}`;
}
