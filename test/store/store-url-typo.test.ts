// A mistyped Redis URL given as the store (`redis:/host:6379` with one slash, `redis//host`) or a
// URL of another scheme (`http://host:6379`) was taken as a tape path: recording made folders
// named `redis:` or `http:` and wrote a local tape there, while the user thought the recordings
// went to Redis. It is now E_ARG where the fetch, the cache or the proxy is made, saying how to
// write the URL, and nothing is created. Real tape paths (Windows drive letters included) and
// real Redis URLs are taken as before.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { ReplayCache } from '../../src/store/replay-cache.ts';
import { checkStore } from '../../src/store/backends/open.ts';
import { TapedeckError } from '../../src/errors.ts';

const root = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-store-typo-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const thrown = (f: () => unknown): TapedeckError | undefined => {
  try {
    f();
  } catch (e) {
    if (e instanceof TapedeckError) return e;
    throw e;
  }
  return undefined;
};

const TYPOS: [string, string][] = [
  ['redis:/127.0.0.1:6379', 'redis://127.0.0.1:6379'],
  ['redis:127.0.0.1:6379/2', 'redis://127.0.0.1:6379/2'],
  ['redis//127.0.0.1:6379', 'redis://127.0.0.1:6379'],
  ['REDISS:/cache.example:6380', 'rediss://cache.example:6380'],
];

/**
 * createFetch's error for `path` given as its store and as its tape, run in the empty `dir`,
 * which must stay empty. A fetch that is made after all is closed before the directory changes
 * back, so what it creates lands in `dir` (and fails the check), not in the checkout.
 */
async function refusedInDir(path: string): Promise<TapedeckError[]> {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const out: (TapedeckError | undefined)[] = [];
    for (const opts of [{ store: path }, { tape: path }]) {
      let made: ReturnType<typeof createFetch> | undefined;
      out.push(thrown(() => (made = createFetch({ ...opts, mode: 'record', summary: false }))));
      await made?.close();
    }
    expect(readdirSync(dir)).toEqual([]);
    return out.map((e) => {
      expect(e?.code).toBe('E_ARG');
      return e!;
    });
  } finally {
    process.chdir(cwd);
  }
}

describe('a store that is a mistyped URL', () => {
  it.each(TYPOS)('createFetch({ store: %j }) is E_ARG naming the URL to write, and creates nothing', async (typo, fix) => {
    for (const e of await refusedInDir(typo)) expect(e.message).toContain(`write ${fix} (two slashes`);
  });

  it('a URL of another scheme is refused too, its password not repeated', () => {
    const e = thrown(() => createFetch({ store: 'http://user:s3cret-pw@127.0.0.1:6379', mode: 'update', summary: false }));
    expect(e?.code).toBe('E_ARG');
    expect(e?.message).toContain('a http: URL is neither');
    expect(e?.message).not.toContain('s3cret-pw');
    const r = thrown(() => checkStore('rediss:/me:s3cret-pw@cache:6380/1'));
    expect(r?.message).not.toContain('s3cret-pw');
    expect(r?.message).toContain('rediss://***@cache:6380/1');
  });

  it('a Redis URL with a misspelt query parameter is E_ARG where the fetch is made, not a 500 at the first call', () => {
    const e = thrown(() => createFetch({ store: 'redis://:s3cret-pw@127.0.0.1:6399/0?nmespace=app', mode: 'record', summary: false }));
    expect(e?.code).toBe('E_ARG');
    expect(e?.message).toContain('unknown query parameter "nmespace" (known: ?namespace=, ?ttl=)');
    expect(e?.message).not.toContain('s3cret-pw');
  });

  it('ReplayCache.open refuses it without creating anything', async () => {
    const at = join(dir, 'redis:');
    const e = await ReplayCache.open('redis:/127.0.0.1:6379', { mode: 'update' }).then(() => undefined, (x: unknown) => x as TapedeckError);
    expect(e?.code).toBe('E_ARG');
    expect(existsSync(at)).toBe(false);
    expect(existsSync(join(process.cwd(), 'redis:'))).toBe(false);
  });

  it('tapedeck serve --tape redis:/... exits with the one-line error and the fix', () => {
    const r = spawnSync(process.execPath, [join(root, 'dist/cli.js'), 'serve', '--tape', 'redis:/127.0.0.1:6379', '--mode', 'record', '--upstream', 'http://127.0.0.1:9', '--port', '0'], { cwd: dir, encoding: 'utf8', timeout: 20_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/^tapedeck: E_ARG The store "redis:\/127\.0\.0\.1:6379" is not a tape path or a Redis URL/);
    expect(r.stderr).toContain('write redis://127.0.0.1:6379');
    expect(readdirSync(dir)).toEqual([]);
  });

  // Only a shell expands `~`: given in code (or quoted on a command line), `~/tapes/x.tape` made a
  // folder named `~` in the current directory and recorded there, where a later `rm -rf ~` to
  // clean it up removes the user's home instead.
  it.each(['~/tapes/chat.tape', '~', '~alice/tapes/chat.tape', '~\\tapes\\chat.tape'])('a tape path starting with ~ (%j) is E_ARG, and creates nothing', async (tilde) => {
    for (const e of await refusedInDir(tilde)) {
      expect(e.message).toContain(`The tape path "${tilde}" starts with ~, which only a shell expands`);
      expect(e.hint).toContain('os.homedir()');
    }
  });

  it('tape paths and Redis URLs pass: a name with a colon inside, a Windows drive, redis:// and rediss://', () => {
    for (const ok of ['tapes/app.tape', 'C:/tapes/app.tape', 'C:\\tapes\\app.tape', './redis:/x.tape', 'redis-cache.tape', 'redis://127.0.0.1:6379/0?namespace=app', 'rediss://u:p@host:6380', '~chat.tape', 'tapes/~/chat.tape', './~/chat.tape']) {
      expect(thrown(() => checkStore(ok)), ok).toBeUndefined();
    }
    const f = createFetch({ tape: join(dir, 'sub', 'ok.tape'), mode: 'replay', summary: false });
    void f.close();
  });
});
