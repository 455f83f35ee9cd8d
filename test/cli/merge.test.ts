// `tapedeck merge` as git's merge driver, with real git in a temporary repository: two branches
// record different calls into one committed tape, `git merge` runs the driver tapedeck init
// registered, and the merged tape replays both branches' recordings. Tapes the branches created
// separately (different redaction salts) merge unless theirs holds a secret masked under its
// salt; then git keeps the conflict.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFetch } from '../../src/proxy/fetch.ts';
import { appendRecords, createTape, readTape } from '../../src/store/tape-file.ts';
import { chatRecord } from './cli-helpers.ts';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'tapedeck-merge-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const gitRun = (cwd: string, ...args: string[]) =>
  spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, encoding: 'utf8' });
const git = (cwd: string, ...args: string[]) => {
  const r = gitRun(cwd, ...args);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.stdout;
};
const tapedeck = (cwd: string, ...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8' });

const URL_ = 'https://api.openai.com/v1/chat/completions';
const ask = (question: string) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] }) });

/** Records each question through createFetch against a fake upstream that answers with the question. */
async function record(tape: string, questions: string[]): Promise<void> {
  const upstream = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const q = ((await new Request(input, init).json()) as { messages: { content: string }[] }).messages[0]!.content;
    return new Response(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: `answer to ${q}` }, finish_reason: 'stop' }] }), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const f = createFetch({ tape, mode: 'update', fetch: upstream, onWarning: () => {} });
  try {
    for (const q of questions) await (await f(URL_, ask(q))).arrayBuffer();
  } finally {
    await f.close();
  }
}

/** The answers a replay of the tape gives to these questions (no upstream: a miss throws). */
async function replay(tape: string, questions: string[]): Promise<string[]> {
  const offline = (async () => {
    throw new Error('replay went to the network');
  }) as typeof fetch;
  const f = createFetch({ tape, mode: 'replay', fetch: offline, onWarning: () => {} });
  try {
    const out: string[] = [];
    for (const q of questions) {
      const r = await f(URL_, ask(q));
      const body = (await r.json()) as { choices?: { message: { content: string } }[] };
      out.push(body.choices?.[0]?.message.content ?? `status ${r.status}`);
    }
    return out;
  } finally {
    await f.close();
  }
}

/** A repository with tapedeck init run (the driver is the built CLI) and a first commit. */
function repoWithDriver(name: string): string {
  const repo = join(dir, name);
  execFileSync('git', ['init', '-q', '-b', 'main', repo]);
  const r = tapedeck(repo, 'init', '--no-hook', '--textconv', `"${process.execPath}" "${CLI}" export`, '--merge-driver', `"${process.execPath}" "${CLI}" merge %O %A %B %P`);
  expect(r.status, r.stderr).toBe(0);
  git(repo, 'add', '.');
  git(repo, 'commit', '-qm', 'init');
  return repo;
}

describe('tapedeck merge as the git merge driver', () => {
  it('keeps both branches\' recordings of a committed tape: the merged tape replays every call', async () => {
    const repo = repoWithDriver('both');
    const tape = join(repo, 'chat.tape');
    await record(tape, ['first']);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'tape on main');
    git(repo, 'checkout', '-qb', 'feature');
    await record(tape, ['from feature', 'another from feature']);
    git(repo, 'commit', '-qam', 'feature records');
    git(repo, 'checkout', '-q', 'main');
    await record(tape, ['from main']);
    git(repo, 'commit', '-qam', 'main records');

    const merge = gitRun(repo, 'merge', '--no-edit', 'feature');
    expect(merge.status, merge.stdout + merge.stderr).toBe(0);
    expect(merge.stdout + merge.stderr).toContain('tapedeck merge chat.tape: 1 from base, 1 added by ours, 2 added by theirs, 0 duplicates (added by both, kept once), 0 removed by one side');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(await replay(tape, ['first', 'from main', 'from feature', 'another from feature'])).toEqual(['answer to first', 'answer to from main', 'answer to from feature', 'answer to another from feature']);
    // Base, then ours' additions, then theirs', each in its order; the header is main's.
    const merged = await readTape(tape);
    expect(merged.warnings).toEqual([]);
    expect(merged.records.map((r) => ((r.value as { request: { body: { messages: { content: string }[] } } }).request.body.messages[0]!.content))).toEqual(['first', 'from main', 'from feature', 'another from feature']);
    expect(tapedeck(repo, 'verify', 'chat.tape').status).toBe(0);
    // The init set-up is what git used, and running init again adds nothing.
    expect(readFileSync(join(repo, '.gitattributes'), 'utf8')).toContain('*.tape merge=tapedeck\n');
    expect(git(repo, 'config', '--get', 'merge.tapedeck.driver')).toContain('merge %O %A %B %P');
    expect(tapedeck(repo, 'init', '--no-hook', '--textconv', `"${process.execPath}" "${CLI}" export`, '--merge-driver', `"${process.execPath}" "${CLI}" merge %O %A %B %P`).stdout).toContain('already set: merge.tapedeck.driver');
    expect(readFileSync(join(repo, '.gitattributes'), 'utf8').match(/merge=tapedeck/g)).toHaveLength(1);
  });

  it('tapes the two branches created separately (different salts) merge when theirs holds no keyed mask; a secret masked under its salt keeps the conflict', async () => {
    const repo = repoWithDriver('salts');
    const tape = join(repo, 'chat.tape');
    git(repo, 'checkout', '-qb', 'feature');
    await record(tape, ['from feature']);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'feature creates the tape');
    git(repo, 'checkout', '-qb', 'secret', 'main');
    // A secret-named member in JSON text is masked with an HMAC under this tape's salt.
    await record(tape, ['{"MY_DB_PASSWORD": "s3cr3t-value"}']);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'secret creates the tape');
    git(repo, 'checkout', '-q', 'main');
    await record(tape, ['from main']);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'main creates the tape');

    // No keyed mask in feature's records: they read and key the same under main's salt.
    const clean = gitRun(repo, 'merge', '--no-edit', 'feature');
    expect(clean.status, clean.stdout + clean.stderr).toBe(0);
    expect(await replay(tape, ['from main', 'from feature'])).toEqual(['answer to from main', 'answer to from feature']);

    const ours = readFileSync(tape);
    const merge = gitRun(repo, 'merge', '--no-edit', 'secret');
    expect(merge.status).not.toBe(0);
    expect(merge.stdout + merge.stderr).toMatch(/tapedeck: E_TAPE_MERGE chat\.tape: ours .* different redaction salts .*1 of the records theirs adds hold secrets masked under its salt/);
    expect(git(repo, 'diff', '--name-only', '--diff-filter=U').trim()).toBe('chat.tape');
    expect(readFileSync(tape).equals(ours)).toBe(true);
  });

  it('without the driver the same merge is a conflict (what the driver fixes)', async () => {
    const repo = join(dir, 'plain');
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    writeFileSync(join(repo, '.gitattributes'), '*.tape binary\n');
    const tape = join(repo, 'chat.tape');
    await record(tape, ['first']);
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'tape');
    git(repo, 'checkout', '-qb', 'feature');
    await record(tape, ['from feature']);
    git(repo, 'commit', '-qam', 'feature');
    git(repo, 'checkout', '-q', 'main');
    await record(tape, ['from main']);
    git(repo, 'commit', '-qam', 'main');
    expect(gitRun(repo, 'merge', '--no-edit', 'feature').status).not.toBe(0);
  });
});

/** A tape with this salt holding chat records `ids`, written at `file`. */
async function tapeOf(file: string, ids: number[], salt = '00112233445566778899aabbccddeeff'): Promise<string> {
  rmSync(file, { force: true });
  await createTape(file, { created: '2026-01-01T00:00:00.000Z', salt });
  if (ids.length) await appendRecords(file, ids.map((i) => chatRecord(i)));
  return file;
}

const keysOf = async (file: string) => (await readTape(file)).records.map((r) => Number((r.value as { key: string }).key));

describe('tapedeck merge <base> <ours> <theirs>', () => {
  const at = (n: string) => join(dir, n);

  it('drops a base record one side removed, keeps a record both added once, keeps repeats in order', async () => {
    const base = await tapeOf(at('b1.tape'), [1, 2, 3]);
    // ours pruned 2 and recorded 4 and 5; theirs recorded 5 too (the same bytes) and 6, 6 again.
    const ours = await tapeOf(at('o1.tape'), [1, 3, 4, 5]);
    const theirs = await tapeOf(at('t1.tape'), [1, 2, 3, 5, 6, 6]);
    const r = tapedeck(dir, 'merge', base, ours, theirs);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`tapedeck merge ${ours}: 2 from base, 2 added by ours, 2 added by theirs, 1 duplicate (added by both, kept once), 1 removed by one side\n`);
    expect(await keysOf(ours)).toEqual([1, 3, 4, 5, 6, 6]);
  });

  it('merges an empty base (both branches added the tape, same salt)', async () => {
    writeFileSync(at('b2.tape'), '');
    const ours = await tapeOf(at('o2.tape'), [1]);
    const theirs = await tapeOf(at('t2.tape'), [2]);
    const r = tapedeck(dir, 'merge', at('b2.tape'), ours, theirs, 'chat.tape');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('tapedeck merge chat.tape: 0 from base, 1 added by ours, 1 added by theirs');
    expect(await keysOf(ours)).toEqual([1, 2]);
    // Ours' header bytes are kept: the tape's salt and creation time.
    expect((await readTape(ours)).header.salt).toBe('00112233445566778899aabbccddeeff');
  });

  it('different salts: merged when theirs adds no keyed mask; with one, exit 1, E_TAPE_MERGE with what to do, ours left byte for byte', async () => {
    const base = await tapeOf(at('b3.tape'), []);
    const ours = await tapeOf(at('o3.tape'), [1]);
    const theirs = await tapeOf(at('t3.tape'), [2], 'ffeeddccbbaa99887766554433221100');
    const merged = tapedeck(dir, 'merge', base, ours, theirs);
    expect(merged.status, merged.stderr).toBe(0);
    expect(await keysOf(ours)).toEqual([1, 2]);
    expect((await readTape(ours)).header.salt).toBe('00112233445566778899aabbccddeeff');

    await tapeOf(ours, [1]);
    const masked = chatRecord(3);
    masked.request.body.messages[0]!.content = 'my password is [REDACTED:0123456789abcdef]';
    await appendRecords(theirs, [masked]);
    const before = readFileSync(ours);
    const r = tapedeck(dir, 'merge', base, ours, theirs);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^tapedeck: E_TAPE_MERGE .*different redaction salts \(00112233445566778899aabbccddeeff and ffeeddccbbaa99887766554433221100\)/);
    expect(r.stderr).toContain('hint: git leaves the conflict: keep one side');
    expect(readFileSync(ours).equals(before)).toBe(true);

    // A query parameter's mask is stored as the URL holds it, percent-encoded (in `url` and
    // `route`): found too. Before, such a record merged and its call missed ever after.
    await tapeOf(theirs, [2], 'ffeeddccbbaa99887766554433221100');
    const inUrl = chatRecord(4);
    const query = '?token=%5BREDACTED%3A0123456789abcdef%5D';
    inUrl.request.url += query;
    inUrl.route += query;
    await appendRecords(theirs, [inUrl]);
    const q = tapedeck(dir, 'merge', base, ours, theirs);
    expect(q.status, q.stdout).toBe(1);
    expect(q.stderr).toMatch(/^tapedeck: E_TAPE_MERGE .*1 of the records theirs adds hold secrets masked under its salt/);
    expect(readFileSync(ours).equals(before)).toBe(true);
  });

  it('a damaged input: the intact records are merged, the damage listed, exit 1 (git keeps the conflict)', async () => {
    const base = await tapeOf(at('b4.tape'), [1]);
    const ours = await tapeOf(at('o4.tape'), [1, 2]);
    const theirs = await tapeOf(at('t4.tape'), [1, 3, 4]);
    // A torn tail: theirs' last record cut short. Its intact records (1 and 3) are not lost.
    truncateSync(theirs, statSync(theirs).size - 5);
    const r = tapedeck(dir, 'merge', base, ours, theirs);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('1 from base, 1 added by ours, 1 added by theirs');
    expect(r.stdout).toMatch(/theirs \(.*t4\.tape\): E_TAPE_TORN_TAIL at byte \d+/);
    expect(r.stdout).toContain('git keeps the conflict');
    expect(await keysOf(ours)).toEqual([1, 2, 3]);
  });

  it('a damaged header on ours, its salt lost with it: refused, nothing written', async () => {
    const base = await tapeOf(at('b5.tape'), []);
    const ours = await tapeOf(at('o5.tape'), [1]);
    const theirs = await tapeOf(at('t5.tape'), [2]);
    const bytes = readFileSync(ours);
    // Inside the header's salt: its metadata CRC no longer matches and the salt no longer reads.
    bytes[bytes.indexOf('salt') + 8] ^= 0x40;
    writeFileSync(ours, bytes);
    const before = readFileSync(ours);
    const r = tapedeck(dir, 'merge', base, ours, theirs);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("E_TAPE_MERGE");
    expect(r.stderr).toContain('header is damaged');
    expect(readFileSync(ours).equals(before)).toBe(true);
  });

  it('usage: exit 2 for a wrong number of arguments or an option; --help prints the help', async () => {
    const one = await tapeOf(at('u.tape'), []);
    for (const args of [['merge'], ['merge', one, one], ['merge', one, one, one, 'x', 'y'], ['merge', '--force', one, one, one]]) {
      const r = tapedeck(dir, ...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toContain('tapedeck: E_USAGE');
    }
    const help = tapedeck(dir, 'merge', '--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: tapedeck merge <base> <ours> <theirs> [<path>]');
    expect(tapedeck(dir, 'help', 'merge').stdout).toBe(help.stdout);
    expect(tapedeck(dir, '--help').stdout).toContain('merge <base> <ours> <theirs>');
    const missing = tapedeck(dir, 'merge', one, at('nope.tape'), one);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('E_TAPE_NOT_FOUND');
  });
});
