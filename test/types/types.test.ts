// The type-level promises of the public API, checked by running tsc over test/types/*.ts: each
// `@ts-expect-error` there must meet an error (a misspelt mode), each other line none.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('types', () => {
  it('a misspelt tape mode is a type error in createFetch, ReplayCache and the test tapes', () => {
    const root = join(import.meta.dirname, '..', '..');
    let out = '';
    try {
      execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'test', 'types', 'tsconfig.json')], { encoding: 'utf8' });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(out).toBe('');
  });
});
