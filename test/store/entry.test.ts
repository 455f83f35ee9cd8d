// The public store entry: the collection, its backends, ReplayCache and what users need, never
// the frame-level internals; and it no longer re-exports the tree and replay modules (they sit
// above the store: llm-tapedeck/proxy has the durable replay store and loadTree).
import { describe, expect, it } from 'vitest';
import * as proxy from '../../src/proxy/index.ts';
import * as store from '../../src/store/index.ts';

const INTERNALS = ['appendRecords', 'decodeFrame', 'peekFrame', 'scanTape', 'rewriteTape', 'withTapeLock', 'inRecordOrder', 'RECORD_FIELDS', 'sortedKeys', 'buildRecord'];

describe('llm-tapedeck/store', () => {
  it('exports the collection, its backends and ReplayCache', () => {
    for (const name of ['RecordCollection', 'TapeBackend', 'MemoryBackend', 'ReplayCache', 'resolveMode', 'exportTapeJSON', 'importTapeJSON', 'importCacheJSON', 'redactor', 'httpRecords', 'cacheRecords']) {
      expect(store, name).toHaveProperty(name);
    }
  });

  it('does not export the frame-level internals', () => {
    for (const name of INTERNALS) expect(Object.keys(store), name).not.toContain(name);
  });

  it('does not re-export the tree and the replay store; llm-tapedeck/proxy has them', () => {
    for (const name of ['loadTree', 'DurableReplayStore', 'openReplayStore']) {
      expect(Object.keys(store)).not.toContain(name);
      expect(proxy).toHaveProperty(name);
    }
    expect(Object.keys(proxy)).not.toContain('Deck');
  });
});
