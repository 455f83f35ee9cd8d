// Builds a conversation tree from a tape file. Lives apart from tree.ts because it needs node:fs
// (through the tape reader); exported from llm-tapedeck/store.

import { checkOptionNames, checkOptionsObject, optionNames } from '../option-names.ts';
import type { TapeWarning } from '../store/tape-file.ts';
import { decodedRecords, withTapeStream } from '../store/tape-stream.ts';
import type { NormalizeOptions } from '../providers/types.ts';
import { ConversationTree, type TreeOptions } from './tree.ts';

/**
 * Options of loadTree: ConversationTree's, and the normalization the tape's records were keyed
 * with.
 */
export interface LoadTreeOptions extends TreeOptions {
  /**
   * How the tape's request bodies are normalized (the `ignoredArgs` a ReplayCache recorded
   * with, as `ignoreArgs`), and, by default, the bodies the tree's findOrCreate() and find() look
   * up: the same options that made the tape's keys find them again.
   */
  normalize?: NormalizeOptions;
}

const LOAD_TREE_OPTIONS = optionNames<LoadTreeOptions>()(['now', 'keepMessages', 'keepValues', 'normalize']);

/**
 * Reads a tape and builds the conversation tree of its ReplayCache records and of the LLM calls
 * recorded by the proxy or createFetch (streamed answers assembled). Damage the tape
 * reader survived is in `tapeWarnings`; records the tree could not place are in
 * `tree.warnings`, with their offsets. `normalize` applies to the records and, unless a call
 * gives its own, to later lookups.
 *
 * @example
 * const { tree } = await loadTree('test/__tapes__/chat.tape')
 * console.log(formatTree(tree))
 * const cache = await loadTree('cache.tape', { normalize: { ignoreArgs: ['max_tokens'] } })
 * cache.tree.findOrCreate(body).hit // keyed without max_tokens, as the ReplayCache recorded it
 */
export async function loadTree(path: string, opts: LoadTreeOptions = {}): Promise<{ tree: ConversationTree; tapeWarnings: TapeWarning[]; records: number }> {
  checkOptionsObject(opts, 'loadTree', "loadTree('chat.tape', { keepValues: false })", 'options as its second argument');
  checkOptionNames(opts, LOAD_TREE_OPTIONS, 'loadTree', 'docs/api.md');
  // The tape is read a window at a time and each record decoded as the tree takes it: memory
  // follows the tree, not the tape (reading a 100,000-record, 98 MB tape whole and decoding every
  // record first peaked at ~440 MB before the tree was built).
  return withTapeStream(path, async (stream) => {
    let records = 0;
    async function* entries(): AsyncGenerator<{ offset: number; value: unknown }> {
      for await (const r of decodedRecords(stream, path)) {
        records++;
        yield { offset: r.offset, value: r.value };
      }
    }
    const tree = await ConversationTree.fromRecordStream(entries(), opts);
    return { tree, tapeWarnings: stream.warnings, records };
  });
}
