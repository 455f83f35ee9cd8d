// ReplayStore keys entries by token + query, so every operation must take only a 64-character
// token: has() and delete() once joined a longer "token" with a shorter query and named (and
// removed) another entry, where get() already refused it.
import { describe, expect, it } from 'vitest';
import { ReplayStore } from '../../src/replay/index.ts';

const put = { documentId: 'doc', query: 'abc', documentVersion: '1', model: 'm', systemPromptVersion: 'v', selectedIds: [], body: 'answer' };

describe('ReplayStore token length', () => {
  it('has() and delete() refuse a token that is not 64 characters, as get() does', () => {
    const s = new ReplayStore({ env: {} });
    const { token: T } = s.put(put);
    expect(s.get(T + 'ab', 'c')).toBeUndefined();
    expect(s.has(T + 'ab', 'c')).toBe(false);
    expect(s.has(T.slice(0, 62), T.slice(62) + 'abc')).toBe(false);
    expect(s.lookup(T + 'ab', 'c', 'doc').status).toBe('unknown-token');
    expect(s.delete(T + 'ab', 'c')).toBe(false);
    expect(s.delete(T.slice(0, 62), T.slice(62) + 'abc')).toBe(false);
    // The entry itself is untouched and still answers its own (token, query).
    expect(s.has(T, 'abc')).toBe(true);
    expect(s.delete(T, 'abc')).toBe(true);
    expect(s.has(T, 'abc')).toBe(false);
  });
});
