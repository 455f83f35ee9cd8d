// Builds a conversation tree from a tape file. Lives apart from tree.ts because it needs node:fs
// (through the tape reader); exported from llm-tapedeck/store.

import { decodePayloadOrWarn } from '../store/tape-codec.ts';
import type { TapeWarning } from '../store/tape-file.ts';
import { withTapeStream } from '../store/tape-stream.ts';
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
  // The tape is read a window at a time and each record decoded as the tree takes it: memory
  // follows the tree, not the tape (reading a 100,000-record, 98 MB tape whole and decoding every
  // record first peaked at ~440 MB before the tree was built).
  return withTapeStream(path, async (stream) => {
    const undecodable: TapeWarning[] = [];
    let records = 0;
    async function* entries(): AsyncGenerator<{ offset: number; value: unknown }> {
      for await (const frame of stream.frames()) {
        const d = decodePayloadOrWarn(frame.payload, frame.offset, path);
        if ('warning' in d) {
          undecodable.push(d.warning);
          continue;
        }
        records++;
        yield { offset: frame.offset, value: d.value };
      }
    }
    const tree = await ConversationTree.fromRecordStream(entries(), opts);
    // In file order, as readTape lists them.
    const tapeWarnings = undecodable.length === 0 ? stream.warnings : [...stream.warnings, ...undecodable].sort((a, b) => a.offset - b.offset);
    return { tree, tapeWarnings, records };
  });
}
