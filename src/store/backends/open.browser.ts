// What browser bundles get instead of open.ts (package.json "browser" maps one to the other): a
// page has no file system and no sockets, so only a backend object can be a store there (the
// browser entry passes the tape it loaded); a path or a Redis URL says why it cannot be opened,
// instead of pulling the tape-file and Redis code (and node:fs, node:net) into the bundle.
import { TapedeckError } from '../../errors.ts';
import type { RecordBackend } from '../backend.ts';
import type * as Open from './open.ts';

export const isBackend: typeof Open.isBackend = (v): v is RecordBackend =>
  v !== null && typeof v === 'object' && typeof (v as RecordBackend).load === 'function' && typeof (v as RecordBackend).append === 'function';

export const storeBackend: typeof Open.storeBackend = (store) => {
  if (isBackend(store)) return store;
  throw new TapedeckError('E_TAPE_IO', `Store ${String(store).replace(/\/\/[^@/]*@/, '//***@')}: tape files and Redis need Node, and this is a browser bundle.`, {
    file: String(store).replace(/\/\/[^@/]*@/, '//***@'),
    hint: "Load the tape with loadTape() from 'llm-tapedeck/browser' and replay it with createReplayFetch(); record tapes in Node.",
  });
};

// A page opens no tape by path (storeBackend above refuses one): nothing to check.
export const checkStore: typeof Open.checkStore = () => {};
