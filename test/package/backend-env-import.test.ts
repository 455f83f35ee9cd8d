// A bad TAPEDECK_BACKEND made `import 'llm-tapedeck/fetch'` (and the other entries holding the
// proxy) throw, with the library's stack trace: a module hashed a constant at import time. The
// user's try/catch around createFetch never ran. Importing never throws now; the first call
// that hashes does, with E_BACKEND, where it can be caught.
// Runs the built package (dist, by its own name): build first (flock /tmp/build.lock npm run build).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
// Every entry a Node program imports (the page's, and the test runners' which their runner loads).
const entries = Object.keys(pkg.exports).filter((e) => !['./package.json', './browser', './jest/reporter', './vitest/plugin', './jest', './mocha', './vitest'].includes(e));

it.each(entries)('import of llm-tapedeck%s with TAPEDECK_BACKEND=gpu does not throw; hashing does, catchably', (entry) => {
  const name = `llm-tapedeck${entry === '.' ? '' : entry.slice(1)}`;
  const script = `
    const m = await import(${JSON.stringify(name)});
    const core = await import('llm-tapedeck');
    try { core.hashValue({ a: 1 }); console.log('hashed'); } catch (e) { console.log('caught', e.code); }
    console.log('imported', Object.keys(m).length > 0);
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', env: { ...process.env, TAPEDECK_BACKEND: 'gpu' } });
  expect(r.stderr).not.toContain('TapedeckError');
  expect(r.stdout).toContain('caught E_BACKEND');
  expect(r.stdout).toContain('imported true');
});
