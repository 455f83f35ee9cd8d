// `llm-tapedeck/vitest` in a web page: vitest's browser mode runs a test file in the page and
// bundles its imports for it. The tape fixture is Node's (tape files, the live calls it
// records, the run summary), and its modules, bundled for a page with the package's browser
// map, did not even link: vite's optimizer printed 21 "is not exported by ...browser.js"
// errors with their stacks, then "Failed to fetch dynamically imported module", and nothing
// said what to use instead. A page now gets an entry of its own that fails at import with a
// TapedeckError saying where the fixture runs and what replays a tape in a page. Bundled by a
// real bundler for the browser and run in real headless Chromium.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { launchChromium, skipReason } from './chromium.ts';

const reason = skipReason();
if (reason) console.log(reason);

const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-vitest-entry-page-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A browser-mode test file, as a user writes it from the vitest docs' quick start. */
const testFile = `import { test } from 'llm-tapedeck/vitest';
test('answers a question', async ({ tape }) => { await tape.fetch('https://api.openai.com/v1/models'); });
`;

/** The names an ES module file exports, as esbuild reads them (bundled: `export *` followed). */
async function exportsOf(file: string): Promise<string[]> {
  const out = await build({ entryPoints: [file], bundle: true, write: false, format: 'esm', platform: 'node', packages: 'external', metafile: true, logLevel: 'silent' });
  return Object.values(out.metafile.outputs)[0]!.exports.sort();
}

describe('llm-tapedeck/vitest bundled for a page', () => {
  it("the page's entry exports every name of Node's, so a test file links", async () => {
    const pkg = (await import(join(root, 'package.json'), { with: { type: 'json' } })).default as { exports: Record<string, Record<string, string>> };
    const page = pkg.exports['./vitest']!.browser!;
    expect(await exportsOf(join(root, page))).toEqual(await exportsOf(join(root, pkg.exports['./vitest']!.default!)));
  });

  it.skipIf(reason)('bundles, and fails at import with what to use in a page', { timeout: 60_000 }, async () => {
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(root, join(dir, 'node_modules', 'llm-tapedeck'));
    writeFileSync(join(dir, 'app.test.js'), testFile);
    const out = await build({ entryPoints: [join(dir, 'app.test.js')], absWorkingDir: dir, bundle: true, write: false, format: 'esm', platform: 'browser', logLevel: 'silent' }).catch(
      (e: { errors?: { text: string }[] }) => ({ outputFiles: [], errors: e.errors ?? [] }),
    );
    expect(out.errors.map((e) => e.text)).toEqual([]);
    const code = out.outputFiles[0]!.text;
    // The page gets the message, not the fixture's Node modules.
    expect(code).not.toContain('node:fs');

    const browser = await launchChromium();
    try {
      const page = await browser.context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(`${e.name}: ${e.message}`));
      await page.setContent('<!doctype html><title>t</title>');
      await page.addScriptTag({ content: code, type: 'module' }).catch(() => undefined);
      await expect.poll(() => errors.length).toBeGreaterThan(0);
      expect(errors[0]).toMatch(/^TapedeckError: llm-tapedeck\/vitest runs in Node/);
      expect(errors[0]).toContain('browser mode');
      expect(errors[0]).toContain('llm-tapedeck/browser');
      expect(errors[0]).toContain('createReplayFetch');
      expect(errors[0]).toContain('tapedeck serve');
    } finally {
      await browser.close();
    }
  });
});
