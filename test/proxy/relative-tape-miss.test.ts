// A tape given as a relative path is taken from the working directory. Run from another
// directory (a monorepo root, a CI job's working-directory), every call missed with "no tape at
// test/__tapes__/app.tape; re-record", which read as a tape never recorded: following it records
// a second tape in the wrong place. The warning at open and each miss now name the absolute path
// looked at and the working directory it was taken from; an absolute path is told as before.
import OpenAI from 'openai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { rejectionOf } from '../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'tapedeck-rel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const absolute = join(dir, 'test', '__tapes__', 'app.tape');
// The same file as the working directory reaches it, as an app names its tape.
const rel = relative(process.cwd(), absolute);
const taken = `no tape at ${absolute} (taken from the working directory ${process.cwd()})`;

describe('a relative tape path that does not exist', () => {
  it('createFetch: the warning and the miss name the absolute path and the working directory', async () => {
    const warnings: string[] = [];
    const fetch = createFetch({ tape: rel, mode: 'replay', summary: false, onWarning: (m) => warnings.push(m) });
    try {
      const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://127.0.0.1:9/v1', fetch, maxRetries: 0 });
      const err = (await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }).catch((e: unknown) => e)) as { status?: number; message: string };
      expect(err.status).toBe(400);
      expect(err.message).toContain(`no tape at ${absolute}`);
      expect(err.message).not.toContain(`no tape at ${rel}`);
      // The working directory is in the fix, which is never clipped (a deep checkout's is long).
      expect(err.message).toContain(`A relative tape path is taken from the working directory (${process.cwd()}): if the tape is recorded, run from the directory its path is relative to, or give an absolute path; else re-record: `);
    } finally {
      await fetch.close();
    }
    expect(warnings.join('\n')).toContain(`${taken}; every request will be a miss.`);
  });

  it('ReplayCache: the miss names the absolute path and the working directory', async () => {
    const cache = await ReplayCache.open(rel, { mode: 'replay' });
    try {
      const e = await rejectionOf(cache.get({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }));
      expect(e.code).toBe('E_MISS');
      expect(e.message).toContain(`no tape at ${absolute}`);
      // Re-recording comes last: a second tape in the wrong place is not the likely fix. The
      // working directory is in the fix, which is never clipped (a deep checkout's is long).
      expect(e.message).toContain(`A relative tape path is taken from the working directory (${process.cwd()}): if the tape is recorded, run from the directory its path is relative to, or give an absolute path; else re-record: `);
    } finally {
      await cache.close();
    }
  });

  it('an absolute path is named as given', async () => {
    const cache = await ReplayCache.open(absolute, { mode: 'replay' });
    try {
      const e = await rejectionOf(cache.get({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }));
      expect(e.message).toContain(`no tape at ${absolute};`);
      expect(e.message).not.toContain('working directory');
      expect(e.message).toContain(`no tape at ${absolute}; re-record: `);
    } finally {
      await cache.close();
    }
  });
});
