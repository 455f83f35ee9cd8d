// What browser bundles get instead of tape-file.ts (package.json "browser" maps one to the other):
// a page has no file system, so the engine shared with Node (src/proxy/deck.ts) serves records
// the page loaded itself (loadTape) and these are never reached; if one is, it says why.
import { TapedeckError } from '../errors.ts';
import type * as TapeFile from './tape-file.ts';

function noFiles(what: string): never {
  throw new TapedeckError('E_TAPE_IO', `${what} needs a file system, and this is a browser bundle.`, {
    hint: "Load the tape with loadTape() from 'llm-tapedeck/browser' and replay it with createReplayFetch(); record tapes in Node.",
  });
}

export const appendRecords: typeof TapeFile.appendRecords = async () => noFiles('Appending to a tape');
export const ensureTape: typeof TapeFile.ensureTape = async () => noFiles('Creating a tape');
export const readTape: typeof TapeFile.readTape = async (path) => noFiles(`Reading tape ${path}`);
export const rewriteTape: typeof TapeFile.rewriteTape = async (path) => noFiles(`Rewriting tape ${path}`);
