// One TapedeckError for `instanceof`, whichever copy of the library threw it. A process can load
// several: the CommonJS bundle jest loads (dist/testing/jest.cjs, with its own copy of the
// errors module), the Node bundle of every other entry (dist/node/), and the browser entry
// (dist/browser/, unbundled), which component tests under jsdom or happy-dom load in Node. The
// documented check `e instanceof TapedeckError` held only for errors of the copy it was
// imported from. Runs on the built package (dist/).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TapedeckError as SourceError } from '../../src/errors.ts';

const root = join(import.meta.dirname, '..', '..');
const load = (p: string) => import(pathToFileURL(join(root, p)).href);

/** What `f` threw (the test fails if it returns). */
async function thrown(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('TapedeckError across copies of the library', () => {
  it("an error of llm-tapedeck/jest's CommonJS bundle is instanceof the TapedeckError of llm-tapedeck", async () => {
    const jest = createRequire(import.meta.url)(join(root, 'dist', 'testing', 'jest.cjs')) as { tape(): unknown };
    const { TapedeckError } = await load('dist/node/index.js');
    const e = await thrown(() => jest.tape());
    expect((e as { code?: string }).code).toBe('E_ARG');
    expect(e instanceof TapedeckError).toBe(true);
    expect(e instanceof SourceError).toBe(true);
    expect(e instanceof Error).toBe(true);
  });

  it('an error of llm-tapedeck/browser loaded in Node is instanceof the TapedeckError of llm-tapedeck, and back', async () => {
    const browser = await load('dist/browser/index.js');
    const node = await load('dist/node/index.js');
    expect(browser.TapedeckError).not.toBe(node.TapedeckError);
    const e = await thrown(() => browser.loadTape(42));
    expect((e as { code?: string }).code).toBe('E_ARG');
    expect(e instanceof node.TapedeckError).toBe(true);
    expect(new node.TapedeckError('E_ARG', 'x') instanceof browser.TapedeckError).toBe(true);
  });

  it('other errors are not TapedeckErrors, even named like one', async () => {
    const { TapedeckError } = await load('dist/node/index.js');
    const lookalike = Object.assign(new Error('x'), { name: 'TapedeckError', code: 'E_ARG' });
    for (const v of [lookalike, new TypeError('x'), { code: 'E_ARG' }, null, undefined, 'E_ARG', 7]) {
      expect(v instanceof TapedeckError).toBe(false);
      expect(v instanceof SourceError).toBe(false);
    }
    // A class that extends Error is still told apart from TapedeckError by its own instanceof.
    expect(new SourceError('E_ARG', 'x') instanceof TypeError).toBe(false);
  });
});
