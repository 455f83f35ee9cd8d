// ReplayStore.put and DurableReplayStore.put take the trace token or the fields it is computed
// from: a put with neither compiled, and was an E_ARG only at run time.
import { ReplayStore, type ReplayPut } from '../../src/replay/index.ts';
import type { DurableReplayStore } from '../../src/replay/durable.ts';

const store = new ReplayStore();
const body = '{"answer":42}';
store.put({ token: 'a'.repeat(64), documentId: 'doc-1', query: 'q', body });
store.put({ documentId: 'doc-1', query: 'q', documentVersion: '1', model: 'gpt-4o', systemPromptVersion: 'v1', selectedIds: ['a'], body });
// Both, which put checks agree.
store.put({ token: 'a'.repeat(64), documentId: 'doc-1', query: 'q', documentVersion: '1', model: 'gpt-4o', systemPromptVersion: 'v1', selectedIds: ['a'], body });
// @ts-expect-error neither the token nor what it is computed from
store.put({ documentId: 'doc-1', query: 'q', body });
// @ts-expect-error a part of the token's fields only
store.put({ documentId: 'doc-1', query: 'q', model: 'gpt-4o', body });
export async function durable(d: DurableReplayStore, p: ReplayPut): Promise<void> {
  await d.put(p);
  // @ts-expect-error the same rule for the durable store
  await d.put({ documentId: 'doc-1', query: 'q', body });
}
