// Builds a conversation tree from a tape file. Lives apart from tree.ts because it needs node:fs
// (through the tape reader); exported from llm-tapedeck/store.

import { decodeOrWarn, scanTape, type TapeWarning } from '../store/tape-file.ts';
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
  // Frames are checked up front and decoded one at a time as the tree takes them: a decoded
  // record lives only while it is placed, so memory follows the tree, not the decoded tape
  // (readTape of a 100,000-record, 98 MB tape peaked at ~440 MB before the tree was built).
  const scan = await scanTape(path);
  const undecodable: TapeWarning[] = [];
  let records = 0;
  function* entries(): Generator<{ offset: number; value: unknown }> {
    for (const frame of scan.frames) {
      const d = decodeOrWarn(scan.bytes, frame, path);
      if ('warning' in d) {
        undecodable.push(d.warning);
        continue;
      }
      records++;
      yield { offset: frame.offset, value: d.value };
    }
  }
  const tree = ConversationTree.fromRecords(entries(), opts);
  // In file order, as readTape lists them.
  const tapeWarnings = undecodable.length === 0 ? scan.warnings : [...scan.warnings, ...undecodable].sort((a, b) => a.offset - b.offset);
  return { tree, tapeWarnings, records };
}
