/**
 * `llm-tapedeck/vitest` as a web page gets it (the package's "browser" condition): vitest's
 * browser mode runs a test file in a page and bundles its imports for it. The tape fixture is
 * Node's (it opens tape files, records through Node's network, reports to the run summary),
 * and its modules, bundled for a page, did not link: the page got a bundler's missing-export
 * errors and no word of what to use. Importing it in a page now fails at once saying so.
 * Every name the Node entry exports is exported here too, so that bundlers link the test file
 * (a missing export is a bundling error) and keep this module, whose import is what fails.
 */
import { TapedeckError } from '../errors.ts';

/** What a page is told. */
function inPage(): TapedeckError {
  return new TapedeckError(
    'E_ARG',
    "llm-tapedeck/vitest runs in Node, and this test file runs in a web page (vitest's browser mode): the tape fixture opens tape files and records through Node's network, which a page cannot.",
    {
      hint: "In browser mode, replay a tape recorded in Node: loadTape and createReplayFetch from llm-tapedeck/browser, passed as the client's fetch; or point the page's client (its baseURL) at tapedeck serve, which records and replays for it. Record with the fixture in a vitest project that runs in Node (docs/browser.md, Vitest browser mode).",
    },
  );
}

/** Each export: never reached, the import fails first. */
function refused(): never {
  throw inPage();
}

export {
  refused as afterAll,
  refused as afterEach,
  refused as beforeAll,
  refused as beforeEach,
  refused as defaultTapePath,
  refused as describe,
  refused as diagnoseMiss,
  refused as expect,
  refused as formatSummary,
  refused as installFetchSwitch,
  refused as isCI,
  refused as it,
  refused as openTestTape,
  refused as pruneUnused,
  refused as readTapeReports,
  refused as recordCommandFor,
  refused as resolveTestMode,
  refused as resolveTestStore,
  refused as slug,
  refused as STORE_ENV,
  refused as summarizeRun,
  refused as tapedeckFixtures,
  refused as tapeTransport,
  refused as test,
  refused as testNames,
  refused as testNamespace,
  refused as vi,
  refused as writeTapeReport,
};

throw inPage();
