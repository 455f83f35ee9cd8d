// Builds a conversation tree from a tape file. Lives apart from tree.ts because it needs node:fs
// (through the tape reader); exported from llm-tapedeck/store.

import { readTape, type TapeWarning } from '../store/tape-file.ts';
import type { NormalizeOptions } from '../providers/types.ts';
import { ConversationTree, type TreeOptions } from './tree.ts';

export interface LoadTreeOptions extends TreeOptions {
  normalize?: NormalizeOptions;
}

/**
 * Reads a tape and builds the conversation tree of its ReplayCache records and of the LLM calls
 * recorded by the proxy or createFetch (streamed answers assembled). Damage the tape
 * reader survived is in `tapeWarnings`; records the tree could not place are in
 * `tree.warnings`, with their offsets.
 *
 * @example
 * const { tree } = await loadTree('test/__tapes__/chat.tape')
 * console.log(formatTree(tree))
 */
export async function loadTree(path: string, opts: LoadTreeOptions = {}): Promise<{ tree: ConversationTree; tapeWarnings: TapeWarning[]; records: number }> {
  const tape = await readTape(path);
  const tree = ConversationTree.fromRecords(tape.records, opts);
  return { tree, tapeWarnings: tape.warnings, records: tape.records.length };
}
