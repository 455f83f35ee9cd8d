// loadTape of `llm-tapedeck/browser` in Node (component tests under jsdom or happy-dom run
// there) given a `file:` URL, the way ES module code names the tape beside it
// (`new URL('./chat.tape', import.meta.url)`): it failed with "fetch failed ... check that the
// server is up (a page cannot read file:// URLs)", for a file that was there. In Node it is read
// from disk; a missing file is E_TAPE_NOT_FOUND. A page's bundle keeps reading URLs with fetch
// only (package.json "browser" swaps the disk read out).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { loadTape } from '../../src/browser/index.ts';
import { createFetch } from '../../src/proxy/fetch.ts';
import { upstreamSuite } from '../proxy/upstream-suite.ts';

const suite = upstreamSuite('load-tape-file-url');
const root = join(import.meta.dirname, '..', '..');

describe('loadTape with a file: URL in Node', () => {
  it('reads the tape from disk, as a URL object and as its text', async () => {
    const tape = join(suite.dir, 'chat.tape');
    const f = createFetch({ tape, mode: 'record' });
    try {
      expect((await suite.chat(f, 'hello from disk')).status).toBe(200);
      expect((await suite.chat(f, 'and again')).status).toBe(200);
    } finally {
      await f.close();
    }
    const url = pathToFileURL(tape);
    expect((await loadTape(url)).records).toHaveLength(2);
    expect((await loadTape(url.href)).records).toHaveLength(2);
  });

  it('a file that is not there is E_TAPE_NOT_FOUND, naming the URL', async () => {
    const url = pathToFileURL(join(suite.dir, 'nowhere', 'missing.tape'));
    const err = await loadTape(url).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'E_TAPE_NOT_FOUND' });
    expect((err as Error).message).toContain(url.href);
  });

  it("a page's bundle of the browser entry reads URLs with fetch only (no disk read, no node: module)", async () => {
    const r = await build({ entryPoints: [join(root, 'dist/browser/index.js')], bundle: true, write: false, format: 'esm', platform: 'browser', metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(r.metafile.inputs);
    expect(inputs).toContain('dist/browser/fetch-source.browser.js');
    expect(inputs.filter((i) => /browser\/fetch-source\.js$|node:/.test(i))).toEqual([]);
  });
});
