// What browser bundles get instead of tape.ts (package.json "browser" maps one to the other): a
// page has no file system, so the engine shared with Node (src/proxy/deck.ts) is given the tape
// the page loaded (the browser entry passes DeckOptions.backend) and never constructs this; if
// something does, it says why instead of pulling node:fs into the bundle.
import { TapedeckError } from '../../errors.ts';

export class TapeBackend {
  constructor(path: string) {
    throw new TapedeckError('E_TAPE_IO', `Tape ${path}: tape files need a file system, and this is a browser bundle.`, {
      file: path,
      hint: "Load the tape with loadTape() from 'llm-tapedeck/browser' and replay it with createReplayFetch(); record tapes in Node.",
    });
  }
}
